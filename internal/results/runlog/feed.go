package runlog

import (
	"fmt"
	"sync"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// feedDepth is how many records the builder may lag behind the log before
// a write waits for it: merging a phase's points costs seconds for
// thousands of operations, which must not hold up the engine's ticker.
const feedDepth = 16

// feedItem is one record for a Writer's builder: a line as written, or an
// interval as measured (live set), or a request for the results so far.
type feedItem struct {
	n    int
	typ  string
	data []byte

	live *liveInterval

	reply chan<- builtResult
}

// liveInterval is an interval given to Writer.Interval, with histograms of
// the builder's own.
type liveInterval struct {
	phase, index int
	iv           metrics.Interval
	svc          []*metrics.Histogram
	target       *result.PlanPoint
	pacing       []PacingRecord
}

// builtResult answers a request for the results.
type builtResult struct {
	res *result.Result
	err error
}

// feeder applies a Writer's records to its builder on a goroutine of its
// own, in the order they were written.
type feeder struct {
	// mu guards groups: each phase's point width (phaseBuilder.group) as
	// far as the builder has gone, which the writer reads to size its
	// spans. It only grows, so a lagging value is a safe one.
	mu     sync.Mutex
	groups map[int]int

	path string
	b    *Builder
	err  error // the first record the builder refused
	in   chan feedItem
	done chan struct{}
}

func newFeeder(path string, lim limits) *feeder {
	f := &feeder{groups: map[int]int{}, path: path, b: newBuilder(lim), in: make(chan feedItem, feedDepth), done: make(chan struct{})}
	go f.run()

	return f
}

// run applies the records until the channel is closed.
func (f *feeder) run() {
	defer close(f.done)

	for it := range f.in {
		if it.reply != nil {
			it.reply <- f.result()
			continue
		}

		if f.err != nil {
			continue
		}

		var err error
		switch l := it.live; {
		case l != nil:
			err = f.b.live(l.phase, l.index, l.iv, l.svc, l.target, l.pacing)
			if err == nil {
				f.setGroup(l.phase, f.b.phases[l.phase].group)
			}
		case it.typ == typeHists:
			// The builder had each interval's histograms as it was
			// logged; the record repeats them for a reader of the file.
		default:
			err = f.b.record(it.n, it.typ, it.data)
		}

		if err != nil {
			f.err = fmt.Errorf("%s:%d: %w", f.path, it.n, err)
		}
	}
}

// setGroup records the point width of phase.
func (f *feeder) setGroup(phase, group int) {
	f.mu.Lock()
	f.groups[phase] = group
	f.mu.Unlock()
}

// group is the point width of phase as far as the builder has gone (1
// before its first interval).
func (f *feeder) group(phase int) int {
	f.mu.Lock()
	defer f.mu.Unlock()

	return max(1, f.groups[phase])
}

// result is the builder's results, or the first error it met.
func (f *feeder) result() builtResult {
	if f.err != nil {
		return builtResult{err: f.err}
	}

	res, err := f.b.Result()

	return builtResult{res: res, err: err}
}

// cloneInterval copies an interval's histograms (and error counts), so that
// the builder reads nothing its caller may reuse.
func cloneInterval(iv metrics.Interval) metrics.Interval {
	out := iv
	out.Ops = make([]metrics.OpStats, len(iv.Ops))

	for i, o := range iv.Ops {
		if o.Hist != nil {
			o.Hist = o.Hist.Clone()
		}

		if o.Errors != nil {
			errs := make(map[string]int64, len(o.Errors))
			for k, v := range o.Errors {
				errs[k] = v
			}

			o.Errors = errs
		}

		out.Ops[i] = o
	}

	return out
}

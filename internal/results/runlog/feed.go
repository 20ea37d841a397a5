package runlog

import (
	"fmt"

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
	path string
	b    *Builder
	err  error // the first record the builder refused
	in   chan feedItem
	done chan struct{}
}

func newFeeder(path string) *feeder {
	f := &feeder{path: path, b: NewBuilder(), in: make(chan feedItem, feedDepth), done: make(chan struct{})}
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
		if l := it.live; l != nil {
			err = f.b.live(l.phase, l.index, l.iv, l.svc, l.target, l.pacing)
		} else {
			err = f.b.record(it.n, it.typ, it.data)
		}

		if err != nil {
			f.err = fmt.Errorf("%s:%d: %w", f.path, it.n, err)
		}
	}
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

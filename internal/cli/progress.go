package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mongobench/mongobench/internal/base/units"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/mongobench/mongobench/internal/engine/runner"
	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// newObserver picks the live output: a progress bar on a terminal, one plain
// line per interval otherwise (logs, CI), and with --quiet nothing but a line
// every 10 s of a load phase (quietObserver).
func newObserver(st *State, quiet bool) runner.Observer {
	switch {
	case quiet:
		return &quietObserver{w: st.Stderr}
	case st.StderrIsTerminal && st.Getenv("CI") == "":
		w := st.Stderr
		if st.barStderr != nil {
			w = st.barStderr // the terminal itself (State.maskStreams)
		}

		return &barObserver{w: w, st: st}
	default:
		return &lineObserver{w: st.Stderr}
	}
}

// lineObserver prints one status line per interval.
type lineObserver struct {
	w      io.Writer
	loaded int64
}

func (o *lineObserver) PhaseStarted(p runner.Phase) {
	o.loaded = 0

	switch {
	case p.Docs > 0:
		fmt.Fprintf(o.w, "[%s] inserting %d documents with %d workers\n", p.Name, p.Docs, p.Concurrency)
	default:
		fmt.Fprintf(o.w, "[%s] %d workers, %s\n", p.Name, p.Concurrency, planText(p))
	}
}

func (o *lineObserver) Warmup(p runner.Phase, remaining time.Duration) {
	fmt.Fprintf(o.w, "[%s] warming up, %s left (not measured)\n", p.Name, remaining.Round(time.Second))
}

func (o *lineObserver) Interval(p runner.Phase, iv metrics.Interval, elapsed time.Duration) {
	r := iv.Rate()
	ops, docs, errs, p99 := r.OpsPerSec, r.DocsPerSec, r.Errors, r.WorstP99

	if p.Docs > 0 {
		for _, op := range iv.Ops {
			o.loaded += op.Docs
		}

		fmt.Fprintf(o.w, "[%s] %s  %d/%d documents  %.0f docs/s  errors %d\n",
			p.Name, elapsed.Round(time.Second), o.loaded, p.Docs, docs, errs)

		return
	}

	total := ""
	if p.Duration > 0 {
		total = "/" + p.Duration.String()
	}

	fmt.Fprintf(o.w, "[%s] %s%s  %.0f ops/s  worst p99 %s  errors %d\n",
		p.Name, elapsed.Round(time.Second), total, ops, units.Micros(p99), errs)
}

func (o *lineObserver) PhaseEnded(p runner.Phase, r *runner.PhaseResult) {
	fmt.Fprintf(o.w, "[%s] %s after %s\n", p.Name, r.Status, r.Elapsed.Round(time.Millisecond))
}

// planText describes when a phase ends.
func planText(p runner.Phase) string {
	s := ""
	if p.Warmup > 0 {
		s = p.Warmup.String() + " warm-up, then "
	}

	switch {
	case p.Duration > 0 && p.MaxOps > 0:
		return s + fmt.Sprintf("%s or %d operations, whichever comes first", p.Duration, p.MaxOps)
	case p.Duration > 0:
		return s + p.Duration.String()
	default:
		return s + fmt.Sprintf("%d operations", p.MaxOps)
	}
}

// barStopTimeout bounds how long the end of a phase waits for the bar's
// last redraw: the display must never hold up the end of a run.
const barStopTimeout = 2 * time.Second

// barObserver draws one progress bar per phase.
type barObserver struct {
	w      io.Writer
	st     *State // nil in tests of the bar alone
	p      *mpb.Progress
	bar    *mpb.Bar
	status atomic.Value // string shown after the bar
	loaded int64
	done   int64

	// total is the bar's planned end; open is true when the phase has none
	// (growth blocks), so that the bar was created without a total.
	total int64
	open  bool

	// release ends the routing of the stop's messages above the bar.
	release func()

	// stuck counts displays whose last redraw did not come within
	// barStopTimeout and were shut down instead (tests read it).
	stuck int
}

func (o *barObserver) PhaseStarted(p runner.Phase) {
	o.p = mpb.New(mpb.WithOutput(o.w), mpb.WithWidth(32), mpb.WithRefreshRate(200*time.Millisecond))
	if o.st != nil {
		o.release = o.st.drawAbove(o.p)
	}

	o.loaded, o.done = 0, 0
	o.status.Store("starting")

	total := int64(p.Duration / time.Millisecond)

	switch {
	case p.Docs > 0:
		total = p.Docs
	case p.Duration == 0:
		total = p.MaxOps
	}

	// mpb completes a bar created with a total once its current value
	// reaches it, and lets SetTotal change only bars created without one:
	// a phase without a planned end gets such a bar.
	o.total, o.open = total, total <= 0

	o.bar = o.p.AddBar(max(total, 0),
		mpb.PrependDecorators(decor.Name(fmt.Sprintf("%-12s", p.Name))),
		mpb.AppendDecorators(
			decor.Elapsed(decor.ET_STYLE_GO, decor.WCSyncSpace),
			decor.Any(func(decor.Statistics) string { return "  " + o.status.Load().(string) }),
		),
	)
}

func (o *barObserver) Warmup(_ runner.Phase, remaining time.Duration) {
	o.status.Store(fmt.Sprintf("warming up, %s left (not measured)", remaining.Round(time.Second)))
}

func (o *barObserver) Interval(p runner.Phase, iv metrics.Interval, elapsed time.Duration) {
	r := iv.Rate()
	ops, docs, errs, p99 := r.OpsPerSec, r.DocsPerSec, r.Errors, r.WorstP99

	switch {
	case p.Docs > 0:
		for _, op := range iv.Ops {
			o.loaded += op.Docs
		}

		o.bar.SetCurrent(o.loaded)
		o.status.Store(fmt.Sprintf("%d/%d docs  %.0f docs/s  errors %d", o.loaded, p.Docs, docs, errs))
	case p.Duration > 0:
		o.bar.SetCurrent(int64(elapsed / time.Millisecond))
		o.status.Store(fmt.Sprintf("%s left  %.0f ops/s  worst p99 %s  errors %d",
			(p.Duration - elapsed).Round(time.Second), ops, units.Micros(p99), errs))
	default:
		for _, op := range iv.Ops {
			if op.Unit == "" {
				o.done += op.Count
			}
		}

		if p.MaxOps == 0 {
			// No planned end (growth blocks): keep the bar one step ahead
			// so that it shows progress without ever completing early.
			o.bar.SetTotal(o.done+1, false)
		}

		o.bar.SetCurrent(o.done)
		o.status.Store(fmt.Sprintf("%.0f ops/s  worst p99 %s  errors %d", ops, units.Micros(p99), errs))
	}
}

func (o *barObserver) PhaseEnded(_ runner.Phase, r *runner.PhaseResult) {
	o.status.Store(string(r.Status))

	if r.Status == runner.StatusCompleted {
		// A timed phase ends a little before its bar's last millisecond,
		// and a max_operations phase may end before its count.
		if o.open {
			o.bar.SetTotal(-1, true)
		} else {
			o.bar.SetCurrent(o.total)
		}
	}

	o.close()
}

// close ends the display of the current phase, if any, whatever state its
// bar is in. Aborting leaves the bar drawn where it stands and is a no-op
// on a completed bar, so that the bar always ends; the wait for its last
// redraw is bounded, since the display must never keep a run from ending.
func (o *barObserver) close() {
	if o.p == nil {
		return
	}

	p := o.p
	o.p = nil

	if o.release != nil {
		o.release()
		o.release = nil
	}

	o.bar.Abort(false)

	done := make(chan struct{})

	go func() {
		p.Wait()
		close(done)
	}()

	timer := time.NewTimer(barStopTimeout)
	defer timer.Stop()

	select {
	case <-done:
	case <-timer.C:
		// Stop the drawing; its goroutines end without being awaited.
		o.stuck++

		go p.Shutdown()
	}
}

// closeObserver ends an observer's live display, for the paths where a
// phase started but the run ended another way (an error, a panic).
func closeObserver(obs runner.Observer) {
	if b, ok := obs.(*barObserver); ok {
		b.close()
	}
}

// Block reports a finished growth block.
func (o *lineObserver) Block(p runner.Phase, b runner.Block) {
	fmt.Fprintf(o.w, "[%s] block %d done: %s holds %d documents\n", p.Name, b.Index+1, b.Size.Collection, b.Size.Documents)
}

// Block reports a finished growth block in the bar's status.
func (o *barObserver) Block(_ runner.Phase, b runner.Block) {
	o.status.Store(fmt.Sprintf("block %d done: %s holds %d documents", b.Index+1, b.Size.Collection, b.Size.Documents))
}

// quietLoadPeriod is how often a quiet run reports a load phase still going:
// rarely enough to stay quiet, often enough that a load of hours (a
// mistyped document count) is never silent.
const quietLoadPeriod = 10 * time.Second

// quietObserver is the live output of --quiet: nothing, except one line
// every quietLoadPeriod while a load phase goes on, with its rate and what
// is left, so that a load that would take years says so.
type quietObserver struct {
	w       io.Writer
	loaded  int64
	printed time.Duration // elapsed at the last line
}

func (o *quietObserver) PhaseStarted(runner.Phase) { o.loaded, o.printed = 0, 0 }

func (o *quietObserver) Warmup(runner.Phase, time.Duration) {}

func (o *quietObserver) Interval(p runner.Phase, iv metrics.Interval, elapsed time.Duration) {
	if p.Docs <= 0 {
		return
	}

	for _, op := range iv.Ops {
		o.loaded += op.Docs
	}

	if elapsed-o.printed < quietLoadPeriod {
		return
	}

	o.printed = elapsed

	rate := float64(o.loaded) / elapsed.Seconds()
	left := "time left unknown"

	if rate > 0 {
		left = "about " + longDuration(float64(p.Docs-o.loaded)/rate) + " left"
	}

	fmt.Fprintf(o.w, "loading %s: %s of %s documents, %s/s, %s\n", strings.TrimPrefix(p.Name, "load_"),
		groupDigits(o.loaded), groupDigits(p.Docs), groupDigits(int64(rate)), left)
}

func (o *quietObserver) PhaseEnded(runner.Phase, *runner.PhaseResult) {}

// groupDigits writes n with thousands separators: 1,234,000.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return "-" + groupDigits(-n)
	}

	var b strings.Builder

	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}

		b.WriteRune(c)
	}

	return b.String()
}

// longDuration formats seconds that may be years: "42s", "3h10m", "12 days",
// "31,710 years".
func longDuration(secs float64) string {
	const day, year = 86400.0, 365.25 * 86400

	switch {
	case secs >= 2*year:
		return groupDigits(int64(secs/year)) + " years"
	case secs >= 2*day:
		return fmt.Sprintf("%d days", int64(secs/day))
	default:
		return time.Duration(secs * float64(time.Second)).Round(time.Second).String()
	}
}

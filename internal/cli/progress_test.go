package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/engine/runner"
	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// interval returns a one-second interval in which op completed count
// operations (1 ms each) and returned docs documents.
func interval(t *testing.T, count, docs int64) metrics.Interval {
	t.Helper()

	start := time.Now()
	reg := metrics.NewRegistry([]string{"op"})
	reg.Reset(start)

	h := reg.NewHandle()
	for range count {
		h.Record(0, time.Millisecond, 0, "")
	}

	if docs > 0 {
		h.Record(0, time.Millisecond, docs, "")
	}

	return reg.Tick(start.Add(time.Second))
}

// TestBarEndsOnEveryPath drives the progress bar through each way a phase
// can end: the display must end (PhaseEnded returns without the bounded
// wait running out), filled when the phase completed, stopped where it
// stood otherwise. Before, a timed phase ending a little short of its last
// millisecond left mpb redrawing forever.
func TestBarEndsOnEveryPath(t *testing.T) {
	cases := []struct {
		name      string
		phase     runner.Phase
		intervals []metrics.Interval
		elapsed   time.Duration
		status    runner.Status
	}{
		{
			"timed phase completed short of its planned end",
			runner.Phase{Name: "run", Duration: 2 * time.Second},
			[]metrics.Interval{interval(t, 10, 0)},
			1900 * time.Millisecond, runner.StatusCompleted,
		},
		{
			"max_operations phase completed",
			runner.Phase{Name: "run", MaxOps: 100},
			[]metrics.Interval{interval(t, 60, 0), interval(t, 40, 0)},
			2 * time.Second, runner.StatusCompleted,
		},
		{
			"max_operations phase ended before its count",
			runner.Phase{Name: "run", MaxOps: 100, Duration: time.Second},
			[]metrics.Interval{interval(t, 30, 0)},
			time.Second, runner.StatusCompleted,
		},
		{
			"growth blocks without a planned end",
			runner.Phase{Name: "grow"},
			[]metrics.Interval{interval(t, 5, 0), interval(t, 7, 0)},
			2 * time.Second, runner.StatusCompleted,
		},
		{
			"load completed",
			runner.Phase{Name: "load_items", Model: "load", Docs: 200},
			[]metrics.Interval{interval(t, 1, 199)},
			time.Second, runner.StatusCompleted,
		},
		{
			"interrupted",
			runner.Phase{Name: "run", Duration: time.Minute},
			[]metrics.Interval{interval(t, 10, 0)},
			time.Second, runner.StatusInterrupted,
		},
		{
			"aborted",
			runner.Phase{Name: "run", Duration: time.Minute},
			[]metrics.Interval{interval(t, 0, 0)},
			time.Second, runner.StatusAborted,
		},
		{
			"load aborted",
			runner.Phase{Name: "load_items", Model: "load", Docs: 200},
			nil, 0, runner.StatusAborted,
		},
	}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := &barObserver{w: &lockedBuffer{}}
			o.PhaseStarted(c.phase)

			for _, iv := range c.intervals {
				o.Interval(c.phase, iv, c.elapsed)
			}

			bar := o.bar
			o.PhaseEnded(c.phase, &runner.PhaseResult{Phase: c.phase, Status: c.status})

			if o.stuck > 0 || o.p != nil {
				t.Fatalf("the display did not end by itself (stuck %d)", o.stuck)
			}

			if c.status == runner.StatusCompleted && (!bar.Completed() || bar.Aborted()) {
				t.Errorf("completed phase: bar completed %v, aborted %v", bar.Completed(), bar.Aborted())
			}

			if c.status != runner.StatusCompleted && !bar.Aborted() {
				t.Errorf("%s phase: the bar was not stopped", c.status)
			}
		})
	}
}

// TestBarPhaseEnded checks PhaseEnded itself on the path that used to hang.
func TestBarPhaseEnded(t *testing.T) {
	out := &lockedBuffer{}
	o := &barObserver{w: out}
	p := runner.Phase{Name: "run", Duration: 3 * time.Second}

	o.PhaseStarted(p)
	o.Interval(p, interval(t, 10, 0), 2900*time.Millisecond)

	bar := o.bar
	ended := make(chan struct{})

	go func() {
		o.PhaseEnded(p, &runner.PhaseResult{Phase: p, Status: runner.StatusCompleted})
		close(ended)
	}()

	select {
	case <-ended:
	case <-time.After(barStopTimeout + 5*time.Second):
		t.Fatalf("PhaseEnded did not return\n%s", out)
	}

	if !bar.Completed() || o.stuck > 0 {
		t.Errorf("the bar of a completed phase: completed %v, stuck %d", bar.Completed(), o.stuck)
	}
}

// TestCloseObserverEndsStartedBar covers the paths where a phase started
// and the run ended some other way: closeObserver still ends the display.
func TestCloseObserverEndsStartedBar(t *testing.T) {
	o := &barObserver{w: &lockedBuffer{}}
	o.PhaseStarted(runner.Phase{Name: "run", Duration: time.Minute})

	bar := o.bar

	closeObserver(o)

	if !bar.Aborted() || o.p != nil {
		t.Errorf("closeObserver left the bar running")
	}

	closeObserver(o)               // a second time is harmless
	closeObserver(&lineObserver{}) // and other observers are left alone
	closeObserver(nil)
}

// TestQuietLoadProgress feeds a quiet run's observer a load of 10^15
// documents at 1,000 a second: it prints nothing for other phases nor in
// the first 10 s of the load, then one line every 10 s naming the
// collection, the count, the rate and the (very long) time left. --quiet
// used to print nothing at all until the load was killed.
func TestQuietLoadProgress(t *testing.T) {
	var out strings.Builder

	st := &State{Stderr: &out}
	obs := newObserver(st, true)

	if obs == nil {
		t.Fatal("--quiet has no observer: a load of years would be silent")
	}

	measured := runner.Phase{Name: "main", Concurrency: 2, Duration: time.Minute}
	obs.PhaseStarted(measured)

	for s := 1; s <= 30; s++ {
		obs.Interval(measured, interval(t, 10, 0), time.Duration(s)*time.Second)
	}

	obs.PhaseEnded(measured, &runner.PhaseResult{})

	if out.Len() != 0 {
		t.Fatalf("quiet printed for a measured phase:\n%s", out.String())
	}

	load := runner.Phase{Name: "load_items", Model: "load", Concurrency: 4, Docs: 1_000_000_000_000_000}
	obs.PhaseStarted(load)

	for s := 1; s <= 25; s++ {
		obs.Interval(load, interval(t, 1, 1000), time.Duration(s)*time.Second)
	}

	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	want := []string{
		"loading items: 10,000 of 1,000,000,000,000,000 documents, 1,000/s, about 31,688 years left",
		"loading items: 20,000 of 1,000,000,000,000,000 documents, 1,000/s, about 31,688 years left",
	}

	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("quiet load progress:\n%s\nwant:\n%s", out.String(), strings.Join(want, "\n"))
	}
}

// TestLongDuration checks the time-left wording from seconds to years.
func TestLongDuration(t *testing.T) {
	for secs, want := range map[float64]string{
		42:                 "42s",
		3*3600 + 600:       "3h10m0s",
		12 * 86400:         "12 days",
		3 * 365.25 * 86400: "3 years",
	} {
		if got := longDuration(secs); got != want {
			t.Errorf("longDuration(%v) = %q, want %q", secs, got, want)
		}
	}
}

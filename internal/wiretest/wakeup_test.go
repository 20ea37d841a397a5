package wiretest

import (
	"slices"
	"sort"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// recordingAlarm wraps the portable alarm and records every duration the
// scheduler asks it for, so a test can check when the scheduler means to
// wake. With early set, the alarm rings after half the requested time,
// standing in for an alarm that rings early or spuriously.
type recordingAlarm struct {
	inner *timerAlarm
	early bool

	mu   sync.Mutex
	sets []time.Duration
}

func (a *recordingAlarm) Set(d time.Duration) {
	a.mu.Lock()
	a.sets = append(a.sets, d)
	a.mu.Unlock()

	if a.early && d > 1 {
		d /= 2 // (a nanosecond is not halved: the fake clock must move)
	}

	a.inner.Set(d)
}

func (a *recordingAlarm) Wait() bool   { return a.inner.Wait() }
func (a *recordingAlarm) Close() error { return a.inner.Close() }

func (a *recordingAlarm) requested() []time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()

	return slices.Clone(a.sets)
}

// startWakeups runs a scheduler on a recording alarm inside the current
// synctest bubble and stops it at the end of the bubble's function.
func startWakeups(t *testing.T, early bool) (*wakeups, *recordingAlarm) {
	t.Helper()

	a := &recordingAlarm{inner: newTimerAlarm(), early: early}
	w := newWakeups(time.Now, a)
	done := make(chan struct{})

	go func() {
		defer close(done)
		w.run()
	}()

	t.Cleanup(func() {
		_ = a.Close()
		<-done
	})

	return w, a
}

// The delays the issue names: sub-millisecond ones are those the runtime's
// millisecond timer wait rounded up.
var holdDelays = []time.Duration{
	100 * time.Microsecond,
	1200 * time.Microsecond,
	20 * time.Millisecond,
}

// TestWakeupsReleaseAtDeadline checks on synctest's fake clock that each
// held reply is released exactly at its deadline, never before, in deadline
// order whatever the order of registration, and that the scheduler asks its
// alarm for exactly the time left to the earliest deadline.
func TestWakeupsReleaseAtDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, a := startWakeups(t, false)
		start := time.Now()

		// Registered latest first, so each one moves the alarm earlier.
		order := slices.Clone(holdDelays)
		slices.Reverse(order)

		type release struct {
			delay time.Duration
			at    time.Duration
		}

		var (
			mu       sync.Mutex
			released []release
			wg       sync.WaitGroup
		)

		for _, d := range order {
			ch := w.at(start.Add(d))

			wg.Go(func() {
				<-ch

				mu.Lock()
				released = append(released, release{delay: d, at: time.Since(start)})
				mu.Unlock()
			})
		}

		wg.Wait()

		want := make([]release, len(holdDelays))
		for i, d := range holdDelays {
			want[i] = release{delay: d, at: d}
		}

		if !slices.Equal(released, want) {
			t.Errorf("released (delay, at) = %v, want %v", released, want)
		}

		// Three registrations, each earlier than the last, then one setting
		// per release for the next deadline's remaining time.
		wantSets := []time.Duration{
			holdDelays[2], holdDelays[1], holdDelays[0],
			holdDelays[1] - holdDelays[0], holdDelays[2] - holdDelays[1],
		}
		if got := a.requested(); !slices.Equal(got, wantSets) {
			t.Errorf("alarm settings %v, want %v", got, wantSets)
		}
	})
}

// TestWakeupsNeverEarly gives the scheduler an alarm that rings after half
// the time asked for: the replies must still be released at their
// deadlines, not at the early rings.
func TestWakeupsNeverEarly(t *testing.T) {
	for _, d := range holdDelays {
		t.Run(d.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w, a := startWakeups(t, true)
				start := time.Now()

				<-w.at(start.Add(d))

				if got := time.Since(start); got != d {
					t.Errorf("released after %v, want %v", got, d)
				}

				// Each early ring re-arms for what is left, halving it,
				// until the deadline is reached.
				if sets := a.requested(); len(sets) < 2 || sets[1] != d-d/2 {
					t.Errorf("alarm settings %v, want %v then %v left after the early ring", sets, d, d-d/2)
				}
			})
		})
	}
}

// TestWakeupsSameAndPastDeadlines checks that replies sharing a deadline are
// released together by one ring, and that a deadline already passed when
// registered is released at once.
func TestWakeupsSameAndPastDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, a := startWakeups(t, false)
		start := time.Now()
		deadline := start.Add(time.Millisecond)

		first, second := w.at(deadline), w.at(deadline)
		<-first
		<-second

		if got := time.Since(start); got != time.Millisecond {
			t.Errorf("shared deadline released after %v, want 1ms", got)
		}

		<-w.at(start) // already passed

		if got := time.Since(start); got != time.Millisecond {
			t.Errorf("passed deadline released after %v, want at once (1ms)", got)
		}

		want := []time.Duration{time.Millisecond, -time.Millisecond}
		if got := a.requested(); !slices.Equal(got, want) {
			t.Errorf("alarm settings %v, want %v", got, want)
		}
	})
}

// TestWakeupsManyConcurrent registers many deadlines from many goroutines,
// as concurrent connections do, and checks each is released exactly at its
// deadline.
func TestWakeupsManyConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, _ := startWakeups(t, false)
		start := time.Now()

		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			late []time.Duration
		)

		for i := range 64 {
			// Deadlines interleaved and repeated: 64 requests over 8
			// distinct delays.
			d := time.Duration(1+(i*5)%8) * 150 * time.Microsecond

			wg.Go(func() {
				<-w.at(start.Add(d))

				if got := time.Since(start); got != d {
					mu.Lock()
					late = append(late, got-d)
					mu.Unlock()
				}
			})
		}

		wg.Wait()

		if len(late) > 0 {
			t.Errorf("%d of 64 replies released off their deadline, by %v", len(late), late)
		}
	})
}

// TestPlatformAlarm is a real-clock sanity check of the platform
// alarm: it must not ring before the time it was set for (being late is
// the machine's business and not checked), a later Set must replace an
// earlier one, and Close must end a Wait in progress.
func TestPlatformAlarm(t *testing.T) {
	a, err := newPlatformAlarm()
	if err != nil {
		t.Fatal(err)
	}

	for _, d := range holdDelays {
		start := time.Now()
		a.Set(d)

		if !a.Wait() {
			t.Fatal("Wait reported the alarm closed")
		}

		if got := time.Since(start); got < d {
			t.Errorf("alarm set for %v rang after %v", d, got)
		}
	}

	// A Set replaces the earlier setting: an hour, replaced by a
	// millisecond, rings (the test would hang until its timeout
	// otherwise).
	a.Set(time.Hour)
	a.Set(time.Millisecond)

	if !a.Wait() {
		t.Fatal("Wait reported the alarm closed")
	}

	a.Set(time.Hour)

	waited := make(chan bool)

	go func() { waited <- a.Wait() }()

	if err := a.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	if <-waited {
		t.Error("Wait interrupted by Close reported a ring")
	}

	a.Set(time.Millisecond) // on a closed alarm: does nothing, must not panic
}

// BenchmarkWakeupsAccuracy measures, on the real clock and the platform
// alarm, how late the scheduler releases held replies: for each delay, 8
// goroutines hold one reply at a time, and the lateness of each release
// (from its deadline to the moment the holder runs) is reported as
// p50/p90/p99 in microseconds. One iteration is one round of 8 holds, so
// -benchtime bounds the count: go test -run '^$' -bench WakeupsAccuracy
// -benchtime 2s ./internal/wiretest/ (the 1s delay runs 8 holds per round).
func BenchmarkWakeupsAccuracy(b *testing.B) {
	a, err := newPlatformAlarm()
	if err != nil {
		b.Fatal(err)
	}

	w := newWakeups(time.Now, a)
	done := make(chan struct{})

	go func() {
		defer close(done)
		w.run()
	}()

	b.Cleanup(func() {
		_ = a.Close()
		<-done
	})

	for _, d := range accuracyDelays {
		b.Run(d.String(), func(b *testing.B) {
			var late []time.Duration

			for b.Loop() {
				var (
					wg sync.WaitGroup
					mu sync.Mutex
				)

				for range 8 {
					wg.Go(func() {
						deadline := time.Now().Add(d)
						<-w.at(deadline)
						l := time.Since(deadline)

						mu.Lock()
						late = append(late, l)
						mu.Unlock()
					})
				}

				wg.Wait()
			}

			reportLateness(b, late)
		})
	}
}

// accuracyDelays are the delays the accuracy benchmarks measure.
var accuracyDelays = []time.Duration{
	100 * time.Microsecond,
	500 * time.Microsecond,
	1200 * time.Microsecond,
	20 * time.Millisecond,
	time.Second,
}

// reportLateness reports the 50th, 90th and 99th percentiles of late as
// benchmark metrics in microseconds.
func reportLateness(b *testing.B, late []time.Duration) {
	b.Helper()

	if len(late) == 0 {
		return
	}

	sort.Slice(late, func(i, j int) bool { return late[i] < late[j] })

	for _, p := range []struct {
		q    float64
		unit string
	}{{0.50, "p50-late-µs"}, {0.90, "p90-late-µs"}, {0.99, "p99-late-µs"}} {
		i := min(int(p.q*float64(len(late))), len(late)-1)
		b.ReportMetric(float64(late[i])/float64(time.Microsecond), p.unit)
	}
}

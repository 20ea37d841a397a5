package wiretest

import (
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mongobench/mongobench/internal/base/alarm"
)

// recordingAlarm wraps the portable alarm and records every duration the
// scheduler asks it for, so a test can check when the scheduler means to
// wake. With early set, the alarm rings after half the requested time,
// standing in for an alarm that rings early or spuriously.
type recordingAlarm struct {
	inner *alarm.Timer
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

	a := &recordingAlarm{inner: alarm.NewTimer(), early: early}
	w := newWakeups(time.Now, a, 0)
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

// steppingClock is a fake clock that moves forward step on every reading,
// standing for the time a loop that reads it takes; set moves it to an
// instant, as the passing of time while the scheduler sleeps.
// If onRead is set, it is called (outside the clock's lock) with every
// reading, from the goroutine reading.
type steppingClock struct {
	mu     sync.Mutex
	t      time.Time
	step   time.Duration
	reads  int
	onRead func(t time.Time)
}

func (c *steppingClock) now() time.Time {
	c.mu.Lock()
	c.t = c.t.Add(c.step)
	c.reads++
	t, onRead := c.t, c.onRead
	c.mu.Unlock()

	if onRead != nil {
		onRead(t)
	}

	return t
}

func (c *steppingClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func (c *steppingClock) state() (time.Time, int) {
	c.mu.Lock()
	defer c.mu.Unlock()

	return c.t, c.reads
}

// manualAlarm rings when the test says so, and records its settings, also
// sending each on setting so that a test can wait for one.
type manualAlarm struct {
	mu      sync.Mutex
	sets    []time.Duration
	setting chan time.Duration
	ring    chan struct{}
	closed  chan struct{}
	once    sync.Once
}

func newManualAlarm() *manualAlarm {
	return &manualAlarm{
		setting: make(chan time.Duration, 16),
		ring:    make(chan struct{}),
		closed:  make(chan struct{}),
	}
}

func (a *manualAlarm) Set(d time.Duration) {
	a.mu.Lock()
	a.sets = append(a.sets, d)
	a.mu.Unlock()

	select {
	case a.setting <- d:
	default: // the tests read at most a few; never block the scheduler
	}
}

func (a *manualAlarm) Wait() bool {
	select {
	case <-a.ring:
		return true
	case <-a.closed:
		return false
	}
}

func (a *manualAlarm) Close() error {
	a.once.Do(func() { close(a.closed) })
	return nil
}

func (a *manualAlarm) requested() []time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()

	return slices.Clone(a.sets)
}

// startSpinning runs a scheduler that spins out long waits on a stepping
// clock and a manual alarm, stopped at the end of the test.
func startSpinning(t *testing.T, clock *steppingClock) (*wakeups, *manualAlarm) {
	t.Helper()

	a := newManualAlarm()
	w := newWakeups(clock.now, a, spinLead)
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

// TestWakeupsSpinOutLongWait checks the spin that ends a long wait: the
// alarm is set spinLead before the deadline, and after it rings the reply is
// released once the clock reaches the deadline, not before, with no second
// alarm setting and no more clock readings than spinning spinLead takes.
func TestWakeupsSpinOutLongWait(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	clock := &steppingClock{t: t0, step: time.Microsecond}
	w, a := startSpinning(t, clock)

	const d = 20 * time.Millisecond

	deadline := t0.Add(d)
	released := w.at(deadline)

	// at read the clock once (t0+1µs) and set the alarm for the rest,
	// spinLead early.
	wantSet := d - time.Microsecond - spinLead
	if got := a.requested(); !slices.Equal(got, []time.Duration{wantSet}) {
		t.Fatalf("alarm settings %v, want [%v]", got, wantSet)
	}

	// Time passes until the alarm is due, and it rings.
	clock.set(t0.Add(time.Microsecond + wantSet))
	_, readsBefore := clock.state()
	a.ring <- struct{}{}

	<-released

	at, reads := clock.state()
	if at.Before(deadline) || at.After(deadline.Add(2*time.Microsecond)) {
		t.Errorf("released when the clock read %v past the deadline, want 0 to 2µs", at.Sub(deadline))
	}

	// Spinning the 100µs out at 1µs a reading, plus the readings that
	// bracket it.
	if spun := reads - readsBefore; spun > int(spinLead/time.Microsecond)+3 {
		t.Errorf("the clock was read %d times after the ring, want at most %d", spun, int(spinLead/time.Microsecond)+3)
	}

	if got := a.requested(); len(got) != 1 {
		t.Errorf("alarm settings %v, want only the first: the spin reached the deadline", got)
	}
}

// TestWakeupsEarlierDeadlineDuringSpin registers, while the scheduler spins
// towards a deadline, a reply due before it: that reply must be released at
// its own deadline, not at the end of the spin, and the later one still at
// its own, on the next ring.
func TestWakeupsEarlierDeadlineDuringSpin(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	const d = 20 * time.Millisecond

	deadline := t0.Add(d)
	earlier := deadline.Add(-20 * time.Microsecond)

	var (
		w          *wakeups
		fired      atomic.Bool // not a sync.Once: at reads the clock again
		registered = make(chan (<-chan struct{}), 1)
	)

	// Half-way through the spin, from the spinning goroutine's own
	// reading, so that it certainly happens during the spin.
	clock := &steppingClock{t: t0, step: time.Microsecond}
	clock.onRead = func(now time.Time) {
		if now.Before(deadline.Add(-50 * time.Microsecond)) {
			return
		}

		if fired.CompareAndSwap(false, true) {
			registered <- w.at(earlier)
		}
	}

	w, a := startSpinning(t, clock)

	first := w.at(deadline)
	wantSet := <-a.setting

	clock.set(t0.Add(time.Microsecond + wantSet))
	a.ring <- struct{}{}

	second := <-registered
	<-second

	if at, _ := clock.state(); at.Before(earlier) || at.After(earlier.Add(2*time.Microsecond)) {
		t.Errorf("the earlier reply was released %v past its deadline, want 0 to 2µs", at.Sub(earlier))
	}

	select {
	case <-first:
		t.Fatal("the later reply was released with the earlier one")
	default:
	}

	// The alarm, set for the earlier deadline and then for the later one,
	// rings when that is due.
	<-a.setting
	<-a.setting
	clock.set(deadline)
	a.ring <- struct{}{}

	<-first

	if at, _ := clock.state(); at.Before(deadline) {
		t.Errorf("the later reply was released %v before its deadline", deadline.Sub(at))
	}
}

// TestWakeupsShortWaitDoesNotSpin checks that a wait shorter than
// spinAfter sets the alarm for the deadline itself and is released on its
// ring without spinning: the clock is read only by at and by the release.
func TestWakeupsShortWaitDoesNotSpin(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	clock := &steppingClock{t: t0, step: time.Microsecond}
	w, a := startSpinning(t, clock)

	const d = 500 * time.Microsecond

	deadline := t0.Add(d)
	released := w.at(deadline)

	wantSet := d - time.Microsecond
	if got := a.requested(); !slices.Equal(got, []time.Duration{wantSet}) {
		t.Fatalf("alarm settings %v, want [%v]", got, wantSet)
	}

	clock.set(deadline.Add(-time.Microsecond)) // the release's reading reaches it
	a.ring <- struct{}{}

	<-released

	if at, reads := clock.state(); reads != 2 || !at.Equal(deadline) {
		t.Errorf("released at %v past the deadline after %d clock readings, want at it after 2", at.Sub(deadline), reads)
	}
}

// TestWakeupsSpuriousEarlyRingDoesNotSpin checks the bound on spinning: an
// alarm set early for a long wait that rings further from the deadline
// than spinLead releases nothing and is set again rather than spun out.
func TestWakeupsSpuriousEarlyRingDoesNotSpin(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	clock := &steppingClock{t: t0, step: time.Microsecond}
	w, a := startSpinning(t, clock)

	const d = 20 * time.Millisecond

	released := w.at(t0.Add(d))
	<-a.setting // at's

	clock.set(t0.Add(d / 2)) // half-way: far from the deadline
	a.ring <- struct{}{}

	// The ring's handling is over once the alarm is set again: for what is
	// left (read at d/2+2µs, by spin and release), still spinLead early.
	if got, want := <-a.setting, d/2-2*time.Microsecond-spinLead; got != want {
		t.Errorf("alarm set again for %v, want %v", got, want)
	}

	if _, reads := clock.state(); reads != 3 {
		t.Errorf("the clock was read %d times, want 3 (at, spin's check, release): no spinning", reads)
	}

	select {
	case <-released:
		t.Error("released at a spurious ring half-way to the deadline")
	default:
	}
}

// BenchmarkWakeupsAccuracy measures, on the real clock and the platform
// alarm, how late the scheduler releases held replies: for each delay, 8
// goroutines hold one reply at a time, and the lateness of each release
// (from its deadline to the moment the holder runs) is reported as
// p50/p90/p99 in microseconds, with the server's spin-out of long waits
// (spin) and without it (nospin). One iteration is one round of 8 holds,
// so -benchtime bounds the count:
//
//	go test -run '^$' -bench WakeupsAccuracy -benchtime 2s ./internal/targets/wiretest/
func BenchmarkWakeupsAccuracy(b *testing.B) {
	for _, mode := range []struct {
		name string
		lead time.Duration
	}{{"spin", spinLead}, {"nospin", 0}} {
		b.Run(mode.name, func(b *testing.B) {
			a, err := alarm.New()
			if err != nil {
				b.Fatal(err)
			}

			w := newWakeups(time.Now, a, mode.lead)
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
					benchmarkWakeups(b, w, d)
				})
			}
		})
	}
}

// benchmarkWakeups holds rounds of 8 concurrent replies for d on w and
// reports their lateness.
func benchmarkWakeups(b *testing.B, w *wakeups, d time.Duration) {
	var (
		mu   sync.Mutex
		late []time.Duration
	)

	for b.Loop() {
		var wg sync.WaitGroup

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

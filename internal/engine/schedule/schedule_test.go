package schedule

import (
	"math"
	"testing"
	"testing/synctest"
	"time"
)

// dispatch is the scheduler loop an engine runs, reduced to its timing: wait
// for each due time and record when the operation went out. busy, if not
// nil, is how long the dispatcher is kept from its loop after operation i,
// like a scheduler stuck handing work to saturated workers.
func dispatch(s *Schedule, busy func(i int) time.Duration) (due, sent []time.Time) {
	for i := 0; ; i++ {
		d, ok := s.Next()
		if !ok {
			return due, sent
		}

		time.Sleep(time.Until(d))

		due = append(due, d)
		sent = append(sent, time.Now())

		if busy != nil {
			time.Sleep(busy(i))
		}
	}
}

// TestScheduleConstantNoDrift runs 100,000 operations at 2000/s on
// synctest's virtual clock: every operation goes out exactly at start +
// n/rate, the last one included, so nothing accumulates over the phase.
func TestScheduleConstantNoDrift(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name     string
		pacer    Constant
		wantOps  int
		wantStep time.Duration // spacing of the due times
	}{
		{name: "2000 per second for 50 s", pacer: Constant{Rate: 2000, Duration: 50 * time.Second}, wantOps: 100_000, wantStep: 500 * time.Microsecond},
		{name: "1 per second for 1 h", pacer: Constant{Rate: 1, Duration: time.Hour}, wantOps: 3600, wantStep: time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				due, sent := dispatch(NewSchedule(tc.pacer, start), nil)

				if len(sent) != tc.wantOps {
					t.Fatalf("%d operations; want %d", len(sent), tc.wantOps)
				}

				for i := range sent {
					if want := start.Add(time.Duration(i) * tc.wantStep); !due[i].Equal(want) || !sent[i].Equal(want) {
						t.Fatalf("operation %d: due %v, sent %v after start; want both at %v",
							i, due[i].Sub(start), sent[i].Sub(start), want.Sub(start))
					}
				}

				if end := time.Since(start); end != time.Duration(tc.wantOps-1)*tc.wantStep {
					t.Errorf("the phase ended %v after its start", end)
				}
			})
		})
	}
}

// TestScheduleStallDoesNotShift stalls the dispatcher for 30 ms every 100
// operations at 1000/s. Operations due during a stall go out late, but their
// due times (from which the engine measures latency) do not move, the
// dispatcher catches up, and the phase still has exactly Rate×Duration
// operations: there is no drift and nothing is omitted.
func TestScheduleStallDoesNotShift(t *testing.T) {
	t.Parallel()

	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		p := Constant{Rate: 1000, Duration: 10 * time.Second}

		due, sent := dispatch(NewSchedule(p, start), func(i int) time.Duration {
			if i%100 == 0 {
				return 30 * time.Millisecond
			}

			return 0
		})

		if len(due) != 10_000 {
			t.Fatalf("%d operations; want 10000", len(due))
		}

		late := 0

		for i := range due {
			if want := start.Add(time.Duration(i) * time.Millisecond); !due[i].Equal(want) {
				t.Fatalf("operation %d due %v after start; want %v", i, due[i].Sub(start), want.Sub(start))
			}

			switch lag := sent[i].Sub(due[i]); {
			case lag < 0 || lag > 30*time.Millisecond:
				t.Fatalf("operation %d sent %v after its due time", i, lag)
			case lag > 0:
				late++
			}
		}

		// After each stall, the 30 operations due during it are late.
		if late != 100*29 {
			t.Errorf("%d operations went out late; want %d", late, 100*29)
		}
	})
}

// TestScheduleStages dispatches the ramp 0 → 1000/s over 10 s followed by
// 10 s at 1000/s: 15,000 operations in all, and in every second as many as
// the target rate at the second's midpoint.
func TestScheduleStages(t *testing.T) {
	t.Parallel()

	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		stages := rampThenHold()
		due, sent := dispatch(NewSchedule(stages, start), nil)

		if got := len(sent); math.Abs(float64(got)-15_000) > 1 {
			t.Errorf("%d operations; want 15000±1", got)
		}

		perSecond := make([]int, 20)

		for i := range sent {
			if !sent[i].Equal(due[i]) {
				t.Fatalf("operation %d sent at %v, due at %v", i, sent[i].Sub(start), due[i].Sub(start))
			}

			if i > 0 && due[i].Before(due[i-1]) {
				t.Fatalf("operation %d due before operation %d", i, i-1)
			}

			perSecond[int(sent[i].Sub(start)/time.Second)]++
		}

		for k, got := range perSecond {
			mid := time.Duration(k)*time.Second + time.Second/2
			if want := stages.RateAt(mid); math.Abs(float64(got)-want) > 1 {
				t.Errorf("second %d: %d operations; the target rate at its midpoint is %v", k, got, want)
			}
		}
	})
}

// stopAfter is a pacer with exactly n operations, one per millisecond.
type stopAfter uint64

func (s stopAfter) Due(n uint64) (time.Duration, bool) {
	return time.Duration(n) * time.Millisecond, n < uint64(s)
}

func TestScheduleNextAndPeek(t *testing.T) {
	t.Parallel()

	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

	type step struct {
		peek   bool // Peek instead of Next
		want   time.Duration
		ok     bool
		issued uint64 // Issued() afterwards
	}

	for _, tc := range []struct {
		name  string
		pacer Pacer
		steps []step
	}{
		{
			name:  "peek does not consume",
			pacer: stopAfter(2),
			steps: []step{
				{peek: true, want: 0, ok: true, issued: 0},
				{peek: true, want: 0, ok: true, issued: 0},
				{want: 0, ok: true, issued: 1},
				{peek: true, want: time.Millisecond, ok: true, issued: 1},
				{want: time.Millisecond, ok: true, issued: 2},
				{peek: true, issued: 2},
				{issued: 2},
				{issued: 2},
			},
		},
		{
			name:  "nil pacer",
			steps: []step{{peek: true}, {}},
		},
		{
			name:  "empty pacer",
			pacer: stopAfter(0),
			steps: []step{{}, {}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			s := NewSchedule(tc.pacer, start)
			if !s.Start().Equal(start) {
				t.Fatalf("Start() = %v; want %v", s.Start(), start)
			}

			for i, st := range tc.steps {
				next := s.Next
				if st.peek {
					next = s.Peek
				}

				got, ok := next()

				var want time.Time
				if st.ok {
					want = start.Add(st.want)
				}

				if ok != st.ok || !got.Equal(want) || s.Issued() != st.issued {
					t.Errorf("step %d (peek %v): %v, %v, issued %d; want %v, %v, issued %d",
						i, st.peek, got, ok, s.Issued(), want, st.ok, st.issued)
				}
			}
		})
	}
}

package runner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// checkStallNamed checks that an open-loop phase (measured from
// measureFrom) whose server stalled for stall from stallStart warns about
// that stall, its length and its time, rather than about the client or a
// merely slow server. The bounds allow a loaded machine: the stall is
// measured from the last success before it to a sample after it.
func checkStallNamed(t *testing.T, st *ScheduleStats, stall time.Duration, measureFrom, stallStart time.Time) {
	t.Helper()

	at := stallStart.Sub(measureFrom)

	if st.Stall < stall-100*time.Millisecond || st.Stall > stall+300*time.Millisecond {
		t.Errorf("stall measured %s, want ≈ %s", st.Stall, stall)
	}

	if st.StallAt < at-300*time.Millisecond || st.StallAt > at+100*time.Millisecond {
		t.Errorf("stall measured at %s, want ≈ %s", st.StallAt, at)
	}

	want := fmt.Sprintf("the server stalled for ~%.1fs at %s", st.Stall.Seconds(), clock(st.StallAt))
	if !strings.Contains(st.Warning, want) {
		t.Errorf("warning %q does not say %q (slot wait %s, client lag %s)", st.Warning, want, st.SlotWait, st.ClientLag)
	}
}

// TestOpenLoopWarningNamesServerStall stalls the wiretest server for 2 s in
// the middle of an open-loop phase: the warning must blame the server's
// stall, with about the right length and time, every time; not the client,
// and not a server merely slower than the rate.
func TestOpenLoopWarningNamesServerStall(t *testing.T) {
	const stall = 2 * time.Second

	r := findRig(t, `
  rate: 200/s
  max_in_flight: 8
  duration: 5s
  timeout: 5s`, wiretest.Config{Latency: wiretest.Fixed(time.Millisecond)}, nil)

	stallStart := time.Now().Add(1500 * time.Millisecond)
	r.srv.SetLatency(wiretest.Stall{At: stallStart, For: stall, Base: wiretest.Fixed(time.Millisecond)})

	res := r.run(r.phases()[0])
	st := res.Schedule

	t.Logf("warning: %q", st.Warning)

	checkStallNamed(t, st, stall, res.Start.Add(res.Phase.Warmup), stallStart)
}

// TestScheduleCause checks the cause named for a schedule not kept on
// synthetic evidence, since a genuinely saturated client cannot be produced
// deterministically in a test: the weight of slot waits against scheduler
// lag decides between server and client, and a long stretch without success
// (long against the typical service time) names a stall.
func TestScheduleCause(t *testing.T) {
	const ms = time.Millisecond

	for name, tc := range map[string]struct {
		st      *ScheduleStats
		typical time.Duration
		want    string
	}{
		"stall": {
			st: &ScheduleStats{
				SlotWait: 300 * time.Second, ClientLag: 40 * ms, MaxSlotWait: 1750 * ms, MaxSchedulerLag: 15 * ms,
				Stall: 2 * time.Second, StallAt: 4100 * ms, StallInFlight: 32,
				// Counts alone would blame the client: many a little late.
				LateForSlot: 300, LateForClient: 900,
			},
			typical: ms,
			want:    "the server stalled for ~2.0s at 00:04.1 (no operation succeeded while up to 32 were in flight)",
		},
		"slow server": {
			st:      &ScheduleStats{SlotWait: 50 * time.Second, ClientLag: 10 * ms, MaxWait: 900 * ms, Stall: 120 * ms},
			typical: 100 * ms,
			want:    "all 32 in-flight slots were busy",
		},
		"slow server, long stall against its own latency": {
			st:      &ScheduleStats{SlotWait: 50 * time.Second, MaxWait: 900 * ms, Stall: 600 * ms},
			typical: 100 * ms,
			want:    "all 32 in-flight slots were busy",
		},
		"backlog overflow": {
			st:      &ScheduleStats{Dropped: 10, SlotWait: ms, ClientLag: 2 * ms},
			typical: ms,
			want:    "all 32 in-flight slots were busy",
		},
		"saturated client": {
			st:      &ScheduleStats{SlotWait: 20 * ms, ClientLag: 4 * time.Second, MaxSchedulerLag: 80 * ms, Stall: 90 * ms},
			typical: ms,
			want:    "the client is saturated: its scheduler handed operations out up to 80ms late",
		},
		"stall in warm-up": {
			st:      &ScheduleStats{SlotWait: 10 * time.Second, Stall: time.Second, StallAt: -500 * ms, StallInFlight: 4},
			typical: ms,
			want:    "the server stalled for ~1.0s at 0.5s before the end of warm-up",
		},
	} {
		t.Run(name, func(t *testing.T) {
			if got := tc.st.cause(32, tc.typical); !strings.Contains(got, tc.want) {
				t.Errorf("cause %q, want it to contain %q", got, tc.want)
			}
		})
	}
}

// TestOpenLoopDueCount: a fixed rate for a fixed time offers exactly
// rate × duration operations; the one due at the end is not due. (Whether
// all started on time depends on the machine; the warning says so if not.)
func TestOpenLoopDueCount(t *testing.T) {
	r := findRig(t, `
  rate: 500/s
  duration: 2s
  timeout: 5s`, wiretest.Config{}, nil)

	res := r.run(r.phases()[0])
	st := res.Schedule

	if st.Scheduled != 1000 {
		t.Errorf("%d operations due, want exactly 1000 (500/s × 2s)", st.Scheduled)
	}
}

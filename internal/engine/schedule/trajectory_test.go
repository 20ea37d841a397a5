package schedule

import (
	"testing"
	"time"
)

func TestTrajectoryHighestSustained(t *testing.T) {
	t.Parallel()

	const (
		ms   = time.Millisecond
		high = 10 * ms
	)

	for _, tc := range []struct {
		name string
		traj Trajectory
		want float64
	}{
		{name: "empty", traj: nil, want: 0},
		{name: "only the start", traj: Trajectory{{Rate: 10}}, want: 0},
		{
			name: "the last rate's interval was never observed",
			traj: Trajectory{{Rate: 10}, {Offset: time.Second, Rate: 11, Observed: ms, Samples: 10, Action: ActionUp}},
			want: 10,
		},
		{
			// 300 was followed by 12 ms, so it does not count; 270 was
			// followed by 8 ms.
			name: "a rate followed by high latency does not count",
			traj: Trajectory{
				{Rate: 100},
				{Offset: 1 * time.Second, Rate: 270, Observed: 4 * ms, Samples: 100, Action: ActionUp},
				{Offset: 2 * time.Second, Rate: 300, Observed: 8 * ms, Samples: 270, Action: ActionUp},
				{Offset: 3 * time.Second, Rate: 198, Observed: 12 * ms, Samples: 300, Action: ActionDown},
				{Offset: 4 * time.Second, Rate: 198, Observed: 7 * ms, Samples: 198, Action: ActionHold},
			},
			want: 270,
		},
		{
			name: "latency at the threshold is not below it",
			traj: Trajectory{
				{Rate: 100},
				{Offset: time.Second, Rate: 66, Observed: high, Samples: 100, Action: ActionDown},
				{Offset: 2 * time.Second, Rate: 66, Observed: 9 * ms, Samples: 66, Action: ActionHold},
			},
			want: 66,
		},
		{
			name: "an interval without samples is no evidence",
			traj: Trajectory{
				{Rate: 500},
				{Offset: time.Second, Rate: 500, Samples: 0, Action: ActionHold},
				{Offset: 2 * time.Second, Rate: 50, Observed: 2 * ms, Samples: 500, Action: ActionUp},
			},
			want: 500,
		},
		{
			name: "nothing sustained",
			traj: Trajectory{
				{Rate: 100},
				{Offset: time.Second, Rate: 66, Observed: 20 * ms, Samples: 100, Action: ActionDown},
				{Offset: 2 * time.Second, Rate: 43.56, Observed: 15 * ms, Samples: 66, Action: ActionDown},
			},
			want: 0,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			if got := tc.traj.HighestSustained(high); got != tc.want {
				t.Errorf("HighestSustained(%v) = %v; want %v", high, got, tc.want)
			}
		})
	}
}

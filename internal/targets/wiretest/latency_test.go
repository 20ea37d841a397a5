package wiretest

import (
	"slices"
	"sync"
	"testing"
	"time"
)

func TestLoadDependentDelay(t *testing.T) {
	l := LoadDependent{Base: 10 * time.Millisecond, PerInFlight: 2 * time.Millisecond}

	tests := []struct {
		inFlight int
		want     time.Duration
	}{
		{0, 10 * time.Millisecond}, // defensive: never below Base
		{1, 10 * time.Millisecond},
		{2, 12 * time.Millisecond},
		{5, 18 * time.Millisecond},
		{101, 210 * time.Millisecond},
	}

	for _, tt := range tests {
		if got := l.Delay(time.Now(), tt.inFlight); got != tt.want {
			t.Errorf("Delay(inFlight=%d) = %v, want %v", tt.inFlight, got, tt.want)
		}
	}
}

func TestStallDelay(t *testing.T) {
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	base := 5 * time.Millisecond
	s := Stall{At: at, For: time.Second, Base: Fixed(base)}

	tests := []struct {
		name     string
		received time.Time
		want     time.Duration
	}{
		{"before the window", at.Add(-time.Millisecond), base},
		{"as it opens", at, time.Second + base},
		{"inside", at.Add(400 * time.Millisecond), 600*time.Millisecond + base},
		{"last instant", at.Add(time.Second - time.Nanosecond), time.Nanosecond + base},
		{"as it closes", at.Add(time.Second), base},
		{"after", at.Add(time.Hour), base},
	}

	for _, tt := range tests {
		if got := s.Delay(tt.received, 1); got != tt.want {
			t.Errorf("%s: Delay = %v, want %v", tt.name, got, tt.want)
		}
	}

	if got := (Stall{At: at, For: time.Second}).Delay(at, 1); got != time.Second {
		t.Errorf("nil Base: Delay = %v, want 1s", got)
	}

	if got := (Stall{At: at}).Delay(at, 1); got != 0 {
		t.Errorf("empty window: Delay = %v, want 0", got)
	}
}

func TestStallAfterIsAnchoredToStart(t *testing.T) {
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

	// A stall whose base is another start-relative stall: both anchor.
	l := anchorLatency(Stall{
		After: time.Second,
		For:   time.Second,
		Base:  Stall{After: 10 * time.Second, For: time.Second},
	}, start)

	tests := []struct {
		offset time.Duration
		want   time.Duration
	}{
		{500 * time.Millisecond, 0},
		{1500 * time.Millisecond, 500 * time.Millisecond},
		{10*time.Second + 250*time.Millisecond, 750 * time.Millisecond},
		{20 * time.Second, 0},
	}

	for _, tt := range tests {
		if got := l.Delay(start.Add(tt.offset), 1); got != tt.want {
			t.Errorf("Delay at start+%v = %v, want %v", tt.offset, got, tt.want)
		}
	}

	// An absolute At wins over After.
	at := start.Add(time.Hour)
	l = anchorLatency(Stall{At: at, After: time.Second, For: time.Second}, start)

	if got := l.Delay(start.Add(1500*time.Millisecond), 1); got != 0 {
		t.Errorf("After overrode At: Delay = %v", got)
	}

	// Unanchored, After alone opens no window.
	if got := (Stall{After: time.Second, For: time.Hour}).Delay(time.Now(), 1); got != 0 {
		t.Errorf("unanchored Stall: Delay = %v, want 0", got)
	}
}

func TestRandomLatencies(t *testing.T) {
	const n = 20_000

	tests := []struct {
		name     string
		make     func(seed uint64) Latency
		min, max time.Duration
		mean     time.Duration // checked within 5% (deterministic for a seed)
	}{
		{
			"uniform", func(seed uint64) Latency { return Uniform(10*time.Millisecond, 20*time.Millisecond, seed) },
			10 * time.Millisecond, 20 * time.Millisecond, 15 * time.Millisecond,
		},
		{
			"exponential", func(seed uint64) Latency { return Exponential(5*time.Millisecond, seed) },
			0, time.Duration(1<<63 - 1), 5 * time.Millisecond,
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b, c := tt.make(42), tt.make(42), tt.make(43)

			var sum time.Duration

			same, differ := true, false

			for range n {
				da, db, dc := a.Delay(time.Time{}, 1), b.Delay(time.Time{}, 1), c.Delay(time.Time{}, 1)
				if da < tt.min || da > tt.max {
					t.Fatalf("delay %v outside [%v, %v]", da, tt.min, tt.max)
				}

				same = same && da == db
				differ = differ || da != dc
				sum += da
			}

			if !same {
				t.Error("the same seed gave different sequences")
			}

			if !differ {
				t.Error("different seeds gave the same sequence")
			}

			mean := sum / n
			if lo, hi := tt.mean*95/100, tt.mean*105/100; mean < lo || mean > hi {
				t.Errorf("mean %v, want within 5%% of %v", mean, tt.mean)
			}
		})
	}
}

func TestDegenerateLatencies(t *testing.T) {
	tests := []struct {
		name string
		l    Latency
		want time.Duration
	}{
		{"fixed zero", Fixed(0), 0},
		{"uniform empty range", Uniform(7*time.Millisecond, 7*time.Millisecond, 1), 7 * time.Millisecond},
		{"uniform inverted range", Uniform(7*time.Millisecond, time.Millisecond, 1), 7 * time.Millisecond},
		{"exponential zero mean", Exponential(0, 1), 0},
	}

	for _, tt := range tests {
		if got := tt.l.Delay(time.Now(), 1); got != tt.want {
			t.Errorf("%s: Delay = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestRandomLatenciesConcurrent checks that concurrent callers of a seeded
// random latency share one sequence: 4 goroutines drawing 1,000 delays each
// get exactly the 4,000 delays a single caller of a latency with the same
// seed gets, in some interleaving, none lost or drawn twice. Under -race it
// also checks that the generator is guarded.
func TestRandomLatenciesConcurrent(t *testing.T) {
	const workers, draws = 4, 1000

	for name, mk := range map[string]func() Latency{
		"uniform":     func() Latency { return Uniform(0, time.Second, 1) },
		"exponential": func() Latency { return Exponential(time.Second, 1) },
	} {
		t.Run(name, func(t *testing.T) {
			l := mk()
			got := make([][]time.Duration, workers)

			var wg sync.WaitGroup

			for w := range workers {
				wg.Go(func() {
					for range draws {
						got[w] = append(got[w], l.Delay(time.Now(), 1))
					}
				})
			}

			wg.Wait()

			all := slices.Concat(got...)

			seq := mk()
			want := make([]time.Duration, 0, workers*draws)

			for range workers * draws {
				want = append(want, seq.Delay(time.Now(), 1))
			}

			slices.Sort(all)
			slices.Sort(want)

			if !slices.Equal(all, want) {
				t.Errorf("concurrent draws differ from the seeded sequence (%d of them, %d distinct)", len(all), len(slices.Compact(slices.Clone(all))))
			}

			if distinct := len(slices.Compact(slices.Clone(want))); distinct < workers*draws/2 {
				t.Errorf("only %d distinct delays in %d draws: the generator is not random", distinct, workers*draws)
			}
		})
	}
}

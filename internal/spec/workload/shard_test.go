package workload

import (
	"strings"
	"testing"
)

func TestSplitAddsUp(t *testing.T) {
	for _, c := range []struct {
		total int64
		count int
		want  []int64
	}{
		{10, 3, []int64{4, 3, 3}},
		{9, 3, []int64{3, 3, 3}},
		{5, 4, []int64{2, 1, 1, 1}},
		{7, 1, []int64{7}},
	} {
		var sum int64

		for i := range c.count {
			got := Split(c.total, i, c.count)
			if got != c.want[i] {
				t.Errorf("Split(%d, %d, %d) = %d, want %d", c.total, i, c.count, got, c.want[i])
			}

			sum += got
		}

		if sum != c.total {
			t.Errorf("Split of %d over %d adds up to %d", c.total, c.count, sum)
		}
	}
}

func TestShardShare(t *testing.T) {
	p := &Phase{
		Name: "run", Concurrency: 10, MaxOperations: 1001, Rate: 0,
		Background: []Background{{Operation: "bg", Rate: 30, MaxInFlight: 4, Pacing: &Pacing{Start: 9, Min: 3, Max: 300}}},
	}

	var workers, ops int64

	var bgRate float64

	for i := range 3 {
		s, err := p.ShardShare(i, 3)
		if err != nil {
			t.Fatal(err)
		}

		workers += int64(s.Concurrency)
		ops += s.MaxOperations
		bgRate += float64(s.Background[0].Rate)

		if s.Background[0].Pacing.Start != 3 || s.Background[0].MaxInFlight < 1 {
			t.Errorf("shard %d: background %+v pacing %+v", i, s.Background[0], *s.Background[0].Pacing)
		}
	}

	if workers != 10 || ops != 1001 || bgRate != 30 {
		t.Errorf("shares add up to %d workers, %d operations, %v/s background; want 10, 1001, 30", workers, ops, bgRate)
	}

	if p.Background[0].Rate != 30 || p.Background[0].Pacing.Start != 9 {
		t.Error("ShardShare modified the phase it shares")
	}

	r := &Phase{Name: "open", Rate: 900, MaxInFlight: 64, Stages: []Stage{{Rate: 300}}}

	s, err := r.ShardShare(1, 4)
	if err != nil {
		t.Fatal(err)
	}

	if s.Rate != 225 || s.Stages[0].Rate != 75 || s.MaxInFlight != 16 || r.Stages[0].Rate != 300 {
		t.Errorf("rate share: %+v", s)
	}
}

func TestShardShareRefuses(t *testing.T) {
	for _, c := range []struct {
		p    Phase
		want string
	}{
		{Phase{Name: "run", Concurrency: 2}, "concurrency 2 is less than the 3 shards"},
		{Phase{Name: "run", Concurrency: 3, MaxOperations: 2}, "max_operations 2 is less than the 3 shards"},
		{Phase{Name: "grow", Concurrency: 3, Blocks: &Blocks{}}, "blocks phase cannot be sharded"},
	} {
		_, err := c.p.ShardShare(0, 3)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("phase %+v: error %v, want %q", c.p, err, c.want)
		}
	}
}

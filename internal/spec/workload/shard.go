package workload

import (
	"fmt"
	"slices"
)

// Split returns shard index's part of total when count shards share it:
// total/count each, and the remainder one apiece to the lowest indexes, so
// the parts add up to total exactly (10 over 3 shards: 4, 3, 3).
func Split(total int64, index, count int) int64 {
	n := int64(count)
	part := total / n

	if int64(index) < total%n {
		part++
	}

	return part
}

// ShardShare returns a copy of the phase with the load shard index of count
// applies when count shards together apply the phase's load:
//
//   - workers (concurrency, of the phase, of each ramp stage) and
//     max_operations are split with Split, so they add up exactly; a phase
//     with fewer workers or operations than shards is an error rather than
//     shards with no worker (a shard with max_operations 0 would run
//     without a limit);
//   - rates (of the phase, its stages and its background jobs, and a
//     pacing's start, min and max) are divided by count: rates are
//     fractional, so nothing remains;
//   - in-flight limits (max_in_flight, max_backlog, of the phase and its
//     background jobs) are split with Split, at least 1 per shard;
//   - durations, warm-up and the operation mix are unchanged: every shard
//     runs the whole phase, for the whole time.
//
// A blocks phase cannot be shared: its blocks end when a collection reaches
// a size, which no shard can see alone.
func (p *Phase) ShardShare(index, count int) (*Phase, error) {
	if count < 1 || index < 0 || index >= count {
		return nil, fmt.Errorf("shard %d/%d: the index must be between 0 and %d", index, count, count-1)
	}

	if m := p.LoadModel(); m.Unshardable != "" {
		return nil, fmt.Errorf("phase %q: a %s phase cannot be sharded (%s)", p.Name, m.Name, m.Unshardable)
	}

	s := *p
	s.Stages = slices.Clone(p.Stages)
	s.Background = slices.Clone(p.Background)
	div := float64(count)

	workers := func(n int, what string) (int, error) {
		if n > 0 && n < count {
			return 0, fmt.Errorf("phase %q: %s %d is less than the %d shards: every shard needs at least one worker", p.Name, what, n, count)
		}

		return int(Split(int64(n), index, count)), nil
	}

	closed := p.LoadModel().Workers

	var err error
	if closed {
		if s.Concurrency, err = workers(p.Concurrency, "concurrency"); err != nil {
			return nil, err
		}
	}

	if p.MaxOperations > 0 {
		if p.MaxOperations < int64(count) {
			return nil, fmt.Errorf("phase %q: max_operations %d is less than the %d shards", p.Name, p.MaxOperations, count)
		}

		s.MaxOperations = Split(p.MaxOperations, index, count)
	}

	s.Rate = p.Rate / Rate(div)
	s.MaxInFlight = splitLimit(p.MaxInFlight, index, count)
	s.MaxBacklog = splitLimit(p.MaxBacklog, index, count)

	for i := range s.Stages {
		st := &s.Stages[i]
		st.Rate /= Rate(div)

		if st.Concurrency, err = workers(st.Concurrency, fmt.Sprintf("stages[%d].concurrency", i)); err != nil {
			return nil, err
		}
	}

	for i := range s.Background {
		b := &s.Background[i]
		b.Rate /= Rate(div)
		b.MaxInFlight = splitLimit(b.MaxInFlight, index, count)

		if b.Pacing != nil {
			pc := *b.Pacing
			pc.Start /= Rate(div)
			pc.Min /= Rate(div)
			pc.Max /= Rate(div)
			b.Pacing = &pc
		}
	}

	return &s, nil
}

// splitLimit splits a limit, leaving every shard at least 1 (0 stays 0:
// no limit set).
func splitLimit(n, index, count int) int {
	if n <= 0 {
		return n
	}

	return max(int(Split(int64(n), index, count)), 1)
}

package datagen

import (
	"fmt"
	"slices"
	"strings"
)

// shardPos is which shard of a distributed run an Env generates for: index
// of count (0 of 1 when the run is not sharded; the zero value means that
// too).
type shardPos struct{ index, count int64 }

// shardCount is the number of shards, at least 1.
func (e *Env) shardCount() int64 { return max(e.shard.count, 1) }

// Shard makes the Env generate shard index's part of a run of count shards
// that together apply one workload: from now on every ^seq counter hands
// out start+index×step, start+(index+count)×step, ... (counting from the
// counter's current value), and ^sequential walks every count-th key from
// its index-th, so no two shards generate the same key, and inserts of
// sequential _ids never collide; the random sources of workers are seeded
// from the seed, the shard index and the worker index, so a shard repeats
// itself with the same seed and the shards do not draw the same values.
//
// Call it once, after the shared data is loaded (the load belongs to shard
// 0 and runs unsharded) and after SetCounters, before any worker starts:
// it is not safe while templates are being evaluated. ResetKeySpaces after
// Shard puts named counters back at their start without the offset.
func (e *Env) Shard(index, count int) error {
	if count < 1 || index < 0 || index >= count {
		return fmt.Errorf("shard %d/%d: the index must be between 0 and %d", index, count, count-1)
	}

	e.mu.Lock()
	defer e.mu.Unlock()

	if e.shard.count > 1 {
		return fmt.Errorf("shard %d/%d: the generators are already sharded", index, count)
	}

	e.shard = shardPos{index: int64(index), count: int64(count)}

	for n, ctr := range e.counters {
		ctr.Add(int64(index) * e.steps[n])
	}

	for _, nc := range e.named {
		nc.ctr.Add(int64(index))
	}

	return nil
}

// Counters returns the next value of every ^seq counter, keyed by the
// named counter's name or, for an unnamed ^seq, "@line:column" of its
// generator in the workload file: what shard 0 publishes after loading, so
// that the other shards continue from where the load left the key space.
func (e *Env) Counters() map[string]int64 {
	e.mu.Lock()
	defer e.mu.Unlock()

	out := make(map[string]int64, len(e.counters)+len(e.named))

	for n, ctr := range e.counters {
		out[fmt.Sprintf("@%d:%d", n.Line, n.Column)] = ctr.Load()
	}

	for name, nc := range e.named {
		out[name] = nc.ctr.Load()
	}

	return out
}

// SetCounters sets the counters to the values Counters returned in another
// process running the same workload. A key this workload has no counter for,
// or a counter the values lack, is an error: the workloads differ.
func (e *Env) SetCounters(values map[string]int64) error {
	e.mu.Lock()
	defer e.mu.Unlock()

	seen := 0

	for n, ctr := range e.counters {
		v, ok := values[fmt.Sprintf("@%d:%d", n.Line, n.Column)]
		if !ok {
			return fmt.Errorf("no value for the ^seq counter at line %d, column %d", n.Line, n.Column)
		}

		ctr.Store(v)

		seen++
	}

	for name, nc := range e.named {
		v, ok := values[name]
		if !ok {
			return fmt.Errorf("no value for counter %q", name)
		}

		nc.ctr.Store(v)

		seen++
	}

	if seen != len(values) {
		var extra []string

		for k := range values {
			if _, named := e.named[k]; !named && !strings.HasPrefix(k, "@") {
				extra = append(extra, k)
			}
		}

		slices.Sort(extra)

		return fmt.Errorf("%d counter value(s) this workload has no counter for %v", len(values)-seen, extra)
	}

	return nil
}

package workload

import (
	"math"
	"slices"
	"time"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
)

// MaxReplayOperations bounds a replay timeline: every entry is a YAML node
// held in memory while the file is parsed (about 2 KB each, measured: a
// 64,000-operation timeline takes 124 MB to validate) and is copied into
// the results file with the workload, so a timeline is a window of a
// recording, not a day of it.
const MaxReplayOperations = 100000

// Replay is a recorded timeline, as mongobench capture --replay writes it:
// for each connection of the recording, its operations in the order it
// sent them and when each started, in milliseconds from the timeline's
// start (one clock for all connections, so that what ran at once runs at
// once again). Operations are the workload's, by name: their values come
// from their generators, not from the recording.
//
// Each connection is a worker that starts its next operation at its offset
// divided by Speed, or when its previous one returns if that is later (a
// connection sends one command at a time); latency counts from the offset
// (response time), and the service time from the send is reported beside
// it.
type Replay struct {
	// Speed divides every offset: 2 replays twice as fast (default 1).
	Speed float64 `yaml:"speed" json:"speed"`

	// Connections are the recorded connections' timelines.
	Connections []ReplayConnection `yaml:"connections" json:"connections"`
}

// ReplayConnection is one connection's timeline: At[i] is when Ops[i]
// started, in milliseconds from the timeline's start, in order.
type ReplayConnection struct {
	At  []float64 `yaml:"at" json:"at"`
	Ops []string  `yaml:"ops" json:"ops"`
}

// Offset is when an entry is due, from the phase's start, at the speed.
func (r *Replay) Offset(atMS float64) time.Duration {
	return time.Duration(atMS / r.Speed * float64(time.Millisecond))
}

// Span is when the last entry is due.
func (r *Replay) Span() time.Duration {
	last := 0.0

	for _, c := range r.Connections {
		if n := len(c.At); n > 0 {
			last = math.Max(last, c.At[n-1])
		}
	}

	return r.Offset(last)
}

// replayGrace is how long a replay phase runs past its last due time by
// default, for the last operations to return.
const replayGrace = time.Second

// applyDefaults: the speed is 1, the workers are the connections, and the
// phase lasts until the last entry is due, plus a second.
func (r *Replay) applyDefaults(p *Phase) {
	if r.Speed == 0 {
		r.Speed = 1
	}

	p.Concurrency = len(r.Connections)

	if r.Speed > 0 && p.Duration == 0 && p.MaxOperations == 0 {
		p.Duration = Duration(r.Span() + replayGrace)
	}
}

// replay checks a replay phase: nothing else decides when operations start,
// and every entry names an operation of the phase's mix, in time order.
func (v *validator) replay(path string, p *Phase) {
	f := func(name string) string { return yamlpos.Field(path, name) }
	rp := f(ModelReplay)

	for _, field := range []string{ModelRate, "stages", ModelBlocks, "sequence", "concurrency", "max_in_flight", "max_backlog"} {
		if v.set(f(field)) {
			v.at(f(field), "a replay phase starts operations at their recorded times, a worker per recorded connection: %s does not apply", field)
		}
	}

	if r := p.Replay; r.Speed <= 0 || r.Speed > 1000 || math.IsNaN(r.Speed) {
		v.at(yamlpos.Field(rp, "speed"), "must be > 0 and at most 1000")
	}

	conns := p.Replay.Connections
	if len(conns) == 0 || len(conns) > maxConcurrency {
		v.at(yamlpos.Field(rp, "connections"), "must hold between 1 and %d connections (each is a worker)", maxConcurrency)

		return
	}

	mixOps := v.s.MixOperations(p)
	total := 0

	for i, c := range conns {
		cp := yamlpos.Index(yamlpos.Field(rp, "connections"), i)
		total += len(c.Ops)

		if len(c.At) != len(c.Ops) {
			v.at(yamlpos.Field(cp, "at"), "%d times for %d operations: each operation needs its time", len(c.At), len(c.Ops))

			continue
		}

		for j, at := range c.At {
			if at < 0 || math.IsNaN(at) || math.IsInf(at, 0) || (j > 0 && at < c.At[j-1]) {
				v.at(yamlpos.Index(yamlpos.Field(cp, "at"), j), "must be >= 0 and not before the connection's previous time (%v)", at)

				break
			}
		}

		for j, name := range c.Ops {
			if !slices.Contains(mixOps, name) {
				v.at(yamlpos.Index(yamlpos.Field(cp, "ops"), j), "operation %q is not one of the phase's operations", name)

				break
			}
		}
	}

	if total > MaxReplayOperations {
		v.at(yamlpos.Field(rp, "connections"), "%d operations, above the cap of %d: a timeline is held in memory whole; replay a shorter window", total, MaxReplayOperations)
	}
}

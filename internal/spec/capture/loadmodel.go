package capture

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// connState is what the load model needs of one connection: whether its
// operations ever overlapped, and how busy it was between its first
// operation's start and its last one's end.
type connState struct {
	// first and lastEnd are milliseconds since the epoch; lastTime is the
	// log time (the end) of the last record, lastStatement whether that
	// record was an update or delete statement.
	first, lastEnd, lastTime int64
	lastStatement            bool
	timed                    bool
	// busyUS is the sum of the operations' durations in microseconds.
	busyUS int64
	// overlaps counts operations that started more than overlapSlack
	// before the previous one on the connection ended.
	overlaps int64
	// steady is whether the connection ran an operation of the steady mix
	// (not only inserts of the load, see Capture.add).
	steady bool
	// lastSteady is whether the last timed record was of the steady mix:
	// a gap counts as think time only between two operations of the mix,
	// not after the load.
	lastSteady bool
}

// gapSample is a bounded, deterministic sample of the gaps between an
// operation's end and the next one's start on the same connection, in
// microseconds, for the think time (see Capture.ThinkTime). It keeps every
// stride-th gap; when full it drops every other one it holds and doubles
// the stride, so that memory stays bounded whatever the log's length and
// the sample stays spread over the whole log.
type gapSample struct {
	gaps   []int64
	stride int64
	seen   int64
}

// maxGaps bounds the sample: half a megabyte, and a median of at least
// maxGaps/2 gaps, far finer than the times' resolution.
const maxGaps = 1 << 16

func (g *gapSample) add(us int64) {
	if g.stride == 0 {
		g.stride = 1
	}

	g.seen++
	if (g.seen-1)%g.stride != 0 {
		return
	}

	if len(g.gaps) == maxGaps {
		for i := range maxGaps / 2 {
			g.gaps[i] = g.gaps[2*i]
		}

		g.gaps = g.gaps[:maxGaps/2]
		g.stride *= 2

		if (g.seen-1)%g.stride != 0 {
			return
		}
	}

	g.gaps = append(g.gaps, us)
}

// overlapSlack is the tolerance of the overlap test, in milliseconds. A
// log's times and durations are whole milliseconds, truncated: an
// operation's start computed from them is within a millisecond of the
// truth either way, and the previous one's end up to a millisecond early,
// so on a connection whose operations never overlap no computed start is
// more than a millisecond before the previous end. Overlaps shorter than
// that are not seen.
const overlapSlack = 1

// busyShare is the least share of their active time that sequential
// connections must have been busy for a closed loop: below it, the
// application waited for something else (its own users, a driver's pool
// handing the connection to whoever asks) longer than for the server, and
// arrivals that do not depend on replies are an open loop's. Above it,
// the gaps are one synchronous client's think time, which the closed loop
// keeps (think_time, see Capture.ThinkTime).
const busyShare = 0.5

// track records one timed operation of a connection for the load model.
func (c *Capture) track(r *Record, steady bool) {
	if r.Conn == "" {
		return
	}

	cs, ok := c.connStates[r.Conn]
	if !ok {
		cs = &connState{}
		c.connStates[r.Conn] = cs
	}

	cs.steady = cs.steady || steady

	if !r.HasTime {
		return
	}

	us := r.Micros
	if us <= 0 {
		us = r.Millis * 1000
	}

	end := r.Time
	start := end - r.Millis
	statement := (r.Op == OpUpdate || r.Op == OpDelete) && r.Cmd != nil

	switch {
	case !cs.timed:
		cs.first, cs.lastEnd, cs.timed = start, end, true
	case statement && cs.lastStatement && end == cs.lastTime:
		// The statements of one update or delete command, which a
		// recording proxy writes with the command's end and a share
		// of its time each: one request, not an overlap.
	case start < cs.lastEnd-overlapSlack:
		cs.overlaps++
	case steady == cs.lastSteady:
		// The think time before this operation: its start, taken from
		// its end and its duration in microseconds when the source has
		// them, less the previous end. Both ends are truncated to the
		// millisecond, independently, so the error is the difference
		// of two uniform errors: within a millisecond either way and
		// symmetric, which leaves the median where it was. Gaps of the
		// leading inserts are kept apart: they are the mix's only when
		// nothing else follows (see Capture.add).
		gap := end*1000 - us - cs.lastEnd*1000
		if steady {
			c.gaps.add(gap)
		} else {
			c.leadGaps.add(gap)
		}
	}

	cs.first = min(cs.first, start)
	cs.lastEnd = max(cs.lastEnd, end)
	cs.lastTime, cs.lastStatement, cs.lastSteady = end, statement, steady
	cs.busyUS += us
}

// ThinkTime is the median gap between an operation's end and the next
// one's start on the same connection, over the operations of the steady
// mix (not the load's inserts before it), rounded to ten microseconds (the times are whole milliseconds: no
// finer figure means anything); ok is false when no connection had two
// timed operations of the mix in a row. A connection that waits for each
// reply before it sends the next request thinks that long between them,
// and a closed loop replays it with think_time.
func (c *Capture) ThinkTime() (time.Duration, bool) {
	sample := c.gaps.gaps
	if !c.steady {
		// Inserts alone: they are the mix (see Capture.leadApplies).
		sample = c.leadGaps.gaps
	}

	if len(sample) == 0 {
		return 0, false
	}

	gaps := slices.Clone(sample)
	slices.Sort(gaps)

	n := len(gaps)
	med := gaps[n/2]

	if n%2 == 0 {
		med = (gaps[n/2-1] + gaps[n/2]) / 2
	}

	med = (max(med, 0) + 5) / 10 * 10

	return time.Duration(med) * time.Microsecond, true
}

// LoadModel is the run phase's load model, as capture infers it (or the
// user chose it).
type LoadModel struct {
	// Closed is a closed loop of Workers workers; else an open loop at
	// Rate operations per second with at most MaxInFlight in flight.
	Closed  bool
	Workers int
	// ThinkTime is a closed loop's think_time (Capture.ThinkTime); 0
	// when the source had no two operations in a row on a connection.
	ThinkTime   time.Duration
	Rate        float64
	MaxInFlight int
	// Why is one line saying which model and why.
	Why string
}

// InferLoadModel chooses the run phase's load model from the connections
// and times the capture saw (or meta's override):
//
//   - the source's times span less than a second (or it has none): a closed
//     loop, one worker per connection, since there is no arrival rate;
//   - a connection's operations overlapped (pipelined requests, or many
//     clients multiplexed on one connection): an open loop at the source's
//     arrival rate, as the arrivals did not wait for replies;
//   - no connection's operations overlapped, and the connections were busy
//     at least half of their active time (each is one synchronous client
//     that sends its next operation when the last returned): a closed
//     loop with one worker per connection;
//   - sequential, but idle more than half of the time (long think times,
//     or a driver's pool serving requests as they come): an open loop at
//     the arrival rate.
//
// meta.Closed and meta.Open override the inference. An inferred closed
// loop thinks for the median gap between operations on a connection
// (ThinkTime), so that it does not send back to back what the application
// spaced out; one the user chose (--closed-loop) does not, since its
// gaps need not be think time (a pool's idle time, or operations a log
// under slowms left out).
func (c *Capture) InferLoadModel(meta Meta) (LoadModel, error) {
	st := c.Stats()
	lead := c.leadApplies(meta)

	var total int64

	for _, s := range c.order {
		if !s.holdable() {
			continue
		}

		total += s.Count
		if lead {
			total -= s.lead
		}
	}

	first := st.First
	if lead && c.steadyTimed {
		first = c.steadyFirst
	}

	span := st.Last - first

	workers := 0
	overlapping := 0

	var busyUS, activeMS int64

	for _, cs := range c.connStates {
		if lead && !cs.steady {
			continue
		}

		workers++

		if cs.overlaps > 0 {
			overlapping++
		}

		if cs.timed {
			busyUS += cs.busyUS
			activeMS += cs.lastEnd - cs.first
		}
	}

	workers = min(max(workers, 1), 10000)
	open := LoadModel{MaxInFlight: min(max(64, workers), 10000)}
	rated := c.timed && span >= 1000 && total >= 2

	if rated {
		open.Rate = sig3(float64(total) / (float64(span) / 1000))
	}

	closed := LoadModel{Closed: true, Workers: workers}
	busy := 1.0

	if activeMS > 0 {
		busy = float64(busyUS) / 1000 / float64(activeMS)
	}

	busyText := strconv.Itoa(int(100*min(busy, 1)+0.5)) + "%"

	switch {
	case meta.Closed:
		closed.Why = fmt.Sprintf("closed loop, %d workers (one per connection): --closed-loop", workers)

		return closed, nil
	case meta.Open && !rated:
		return LoadModel{}, errors.New("--open-loop needs an arrival rate, and the source's times span less than a second (or it has none): use --closed-loop")
	case meta.Open:
		open.Why = fmt.Sprintf("open loop at %s/s (the source's arrival rate): --open-loop", fmtRate(open.Rate))

		return open, nil
	case !rated:
		closed.Why = fmt.Sprintf("closed loop, %d workers (one per connection): the source's times span less than a second (or it has none), so there is no arrival rate", workers)

		return closed, nil
	case overlapping > 0:
		open.Why = fmt.Sprintf("open loop at %s/s (the source's arrival rate): on %d of %d connections an operation started before the previous one returned (pipelined or multiplexed); --closed-loop overrides",
			fmtRate(open.Rate), overlapping, workers)

		return open, nil
	case busy < busyShare:
		open.Why = fmt.Sprintf("open loop at %s/s (the source's arrival rate): the %d connections never overlapped but were busy only %s of the time (long think times, or a pool serving requests as they come); --closed-loop overrides",
			fmtRate(open.Rate), workers, busyText)

		return open, nil
	default:
		// Only here are the gaps known to be think time: the
		// connections were synchronous clients, busy most of the time.
		// Behind --closed-loop they may be a pool's idle time, or the
		// operations a log under slowms left out.
		think := ""
		if d, ok := c.ThinkTime(); ok && d > 0 {
			closed.ThinkTime = d
			think = fmt.Sprintf("; think time %s (the median gap between an operation's end and the next one's start on a connection)", d)
		}

		closed.Why = fmt.Sprintf("closed loop, %d workers (one per connection): on each connection an operation started only after the previous one returned, busy %s of the time%s; --open-loop overrides",
			workers, busyText, think)

		return closed, nil
	}
}

func fmtRate(r float64) string { return strconv.FormatFloat(r, 'g', -1, 64) }

// holdable is whether the workload can hold the shape as an operation: not
// an update or delete command whose statements the log does not show.
func (s *Shape) holdable() bool {
	return (s.Op != OpUpdate && s.Op != OpDelete) || (s.Kind != "update" && s.Kind != "delete")
}

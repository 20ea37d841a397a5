package capture

import (
	"errors"
	"fmt"
	"sort"
	"strconv"

	"go.yaml.in/yaml/v4"

	"github.com/mongobench/mongobench/internal/spec/workload"
)

// replayPhase writes the run as a replay phase: for each connection of the
// source, its operations in the order they started, each at its start in
// milliseconds from the first operation's start (one clock for every
// connection). An operation is named by its shape's operation, so no value
// of the source is in the timeline: the operation's generators make the
// values, as in the weighted mix.
func (w *writer) replayPhase() (*yaml.Node, error) {
	type conn struct {
		name  string
		first int64
		ev    []event
	}

	byName := map[string]*conn{}

	var (
		conns   []*conn
		origin  int64
		started bool
		unheld  int64
	)

	for _, e := range w.c.timeline {
		if w.names[e.shape] == "" {
			unheld++

			continue
		}

		c, ok := byName[e.conn]
		if !ok {
			c = &conn{name: e.conn, first: e.start}
			byName[e.conn] = c
			conns = append(conns, c)
		}

		c.ev = append(c.ev, e)
		c.first = min(c.first, e.start)

		if !started || e.start < origin {
			origin, started = e.start, true
		}
	}

	if len(conns) == 0 {
		return nil, errors.New("no operation with a time to replay: the log's entries have no timestamps, or none is of an operation the workload holds")
	}

	if len(conns) > 10000 {
		return nil, fmt.Errorf("%d connections to replay, above the cap of 10000 workers: capture a shorter window", len(conns))
	}

	sort.SliceStable(conns, func(i, j int) bool { return conns[i].first < conns[j].first })

	list := seq()

	for _, c := range conns {
		// The log is written as operations end; a connection's order is
		// the order they started in.
		sort.SliceStable(c.ev, func(i, j int) bool { return c.ev[i].start < c.ev[j].start })

		at, ops := flowSeq(), flowSeq()
		for _, e := range c.ev {
			at.Content = append(at.Content, intNode(e.start-origin))
			ops.Content = append(ops.Content, str(w.names[e.shape]))
		}

		cn := flowMap()
		cn.Content = append(cn.Content, str("at"), at, str("ops"), ops)
		list.Content = append(list.Content, cn)
	}

	speed := w.meta.Speed
	if speed <= 0 {
		speed = 1
	}

	rp := block()
	rp.Content = append(rp.Content,
		str("speed"), floatNode(speed),
		str("connections"), list)

	run := block()
	run.Content = append(run.Content,
		str(workload.ModelReplay), rp,
		str("max_error_rate"), floatNode(0.01))

	n := len(w.c.timeline) - int(unheld)
	w.notes = append(w.notes, fmt.Sprintf("the run replays %d operations of %d connections in their order and at their times (speed %s), lasting until the last is due plus a second",
		n, len(conns), strconv.FormatFloat(speed, 'g', -1, 64)))

	if w.c.cut > 0 {
		w.notes = append(w.notes, fmt.Sprintf("the timeline holds the first %d operations read; %d more are not replayed (a timeline is held in memory whole)", workload.MaxReplayOperations, w.c.cut))
	}

	if w.c.untimed > 0 {
		w.notes = append(w.notes, fmt.Sprintf("%d operations without a time are not in the timeline", w.c.untimed))
	}

	if unheld > 0 {
		w.notes = append(w.notes, fmt.Sprintf("%d operations of shapes the workload cannot hold are not in the timeline", unheld))
	}

	return run, nil
}

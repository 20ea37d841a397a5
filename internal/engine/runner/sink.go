package runner

import (
	"github.com/mongobench/mongobench/internal/engine/schedule"
	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// IntervalSink receives a phase's measurements as they are made: each
// interval as soon as it is merged, each growth block as soon as it ends.
// It is how a run log gets everything the results file needs interval by
// interval, so that the engine can forget the intervals (Engine.
// KeepIntervals) and a run killed midway leaves its measurements behind.
//
// Interval is called from the phase's ticker goroutine (or the blocks
// executor's, at a block end) with the tick serialised, so calls for one
// phase never overlap; Block is called from the executor's goroutine. An
// implementation must not keep the interval's histograms past the call:
// observers receive the same ones.
type IntervalSink interface {
	// Interval is called once per closed interval, in order.
	Interval(p Phase, rec IntervalRecord)

	// Block is called once per growth block, after the interval that
	// closes it.
	Block(p Phase, b Block)
}

// IntervalRecord is one closed interval with what was decided at its end.
type IntervalRecord struct {
	// Index counts the phase's intervals from 0; growth blocks refer to
	// intervals by it.
	Index int

	// Interval is the response-time registry's interval.
	Interval metrics.Interval

	// Service is the service-time registry's interval of an open-loop
	// phase (nil for closed-loop phases).
	Service *metrics.Interval

	// Target is the plan at the interval's end (rate or concurrency),
	// nil when the phase's model has none.
	Target *Target

	// Pacing are the decisions of latency-paced background jobs made
	// since the previous interval.
	Pacing []JobPoint
}

// JobPoint is one pacing decision of the phase's background job Job
// (an index into PhaseResult.Background).
type JobPoint struct {
	Job   int
	Point schedule.Point
}

// intervalStream sends a phase's intervals to its sink with the plan
// points and pacing decisions made since the previous one.
type intervalStream struct {
	sink    IntervalSink
	planned *PhaseResult
	jobs    []*backgroundJob

	// targets and points count what was sent already: the executor's
	// plan points and each job's trajectory.
	targets int
	points  []int
}

// send is called by tick, under the tick lock, after the onTick hooks have
// recorded this interval's plan point and pacing decisions.
func (s *intervalStream) send(pr *phaseRun, iv metrics.Interval, svc *metrics.Interval) {
	rec := IntervalRecord{Index: pr.reg.NumIntervals() - 1, Interval: iv, Service: svc}

	if s.planned != nil && len(s.planned.Targets) > s.targets {
		t := s.planned.Targets[len(s.planned.Targets)-1]
		rec.Target = &t
		s.targets = len(s.planned.Targets)
	}

	if s.points == nil {
		s.points = make([]int, len(s.jobs))
	}

	for i, j := range s.jobs {
		for _, p := range j.trajectory[s.points[i]:] {
			rec.Pacing = append(rec.Pacing, JobPoint{Job: i, Point: p})
		}

		s.points[i] = len(j.trajectory)
	}

	s.sink.Interval(pr.phase, rec)
}

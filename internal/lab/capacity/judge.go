package capacity

import (
	"fmt"
	"strings"

	"github.com/mongobench/mongobench/internal/base/units"
	"github.com/mongobench/mongobench/internal/results/result"
)

// Causes of a failed step, as recorded in result.CapacityStep.Cause.
const (
	CauseLatency  = "latency"
	CauseErrors   = "errors"
	CauseAchieved = "achieved"
	CauseClient   = "client"
)

// Limits of a step's validity.
const (
	// MinAchieved is the share of the offered rate a step must complete:
	// below it the server (or the in-flight slots) did not keep up, and
	// whatever latency was measured describes a backlog.
	MinAchieved = 0.95

	// ClientSaturated is the share of the machine's cores mongobench's own
	// process may use before a step is blamed on the client: beyond it the
	// measured latency includes the client's queueing.
	ClientSaturated = 0.90

	// lateShare is the share of due operations started late by the
	// scheduler itself (not for want of a free slot) that marks a
	// saturated client.
	lateShare = 0.01
)

// Observation is what one step measured: the main phase of its run.
type Observation struct {
	// Offered is the open-loop rate (0 for a closed-loop step).
	Offered float64
	// Workers is the closed-loop workers (0 for an open-loop step).
	Workers int
	// Ops are the phase's per-operation totals; DurationS its measured
	// time.
	Ops       []result.Operation
	DurationS float64
	// Schedule is how the open-loop schedule was kept (nil when closed).
	Schedule *result.Schedule
	// ClientCPU is the share of the machine's cores this process used.
	ClientCPU float64
}

// Judge turns an observation into a step with its verdict. A step fails
// for the first of these that holds: mongobench's process was saturated
// (its CPU; or the achieved rate fell short with operations never started
// while its scheduler, not a busy slot, made them late); the achieved rate
// fell short of the offered one (operations were started but the server
// did not finish them); the scheduler made operations late for want of CPU
// and their mean lag is a quarter or more of a broken latency objective's
// measured value, so that lateness explains a share of the latency that
// matters (a step that met its objectives despite a late scheduler passes;
// a busy server that also makes a few operations late is still judged on
// its latency); an error-rate objective failed; a latency objective failed.
func Judge(kind string, o Observation, slos []SLO) result.CapacityStep {
	st := result.CapacityStep{
		Kind: kind, OfferedRate: o.Offered, Workers: o.Workers, DurationS: o.DurationS, ClientCPU: o.ClientCPU,
	}

	for _, op := range o.Ops {
		st.Count += op.Count
		for _, n := range op.Errors {
			st.Errors += n
		}
	}

	if o.DurationS > 0 {
		st.AchievedRate = float64(st.Count+st.Errors) / o.DurationS
	}

	if h := merged(o.Ops); h.TotalCount() > 0 {
		st.P50US = float64(h.ValueAtQuantile(50))
		st.P99US = float64(h.ValueAtQuantile(99))
		st.P999US = float64(h.ValueAtQuantile(99.9))
	}

	var latency, errs []string

	worst := 0.0 // the highest measured value of a failed latency objective, µs

	for _, s := range slos {
		v := s.Measure(o.Ops, o.DurationS)
		st.SLO = append(st.SLO, v)

		if v.Passed {
			continue
		}

		what := fmt.Sprintf("%s measured %s", v.Condition, s.Condition.Metric.Format(v.Measured))
		if s.Condition.Metric.Latency() {
			latency = append(latency, what)

			worst = max(worst, v.Measured)
		} else {
			errs = append(errs, what)
		}
	}

	// The rate fell short: the operations started (due, less those still
	// waiting at the end or dropped) fell below the offered rate. Started,
	// not completed: at the end of a step the operations in flight (rate ×
	// latency of them) have not completed, which says nothing about
	// keeping up. Without a schedule, the completions are all there is.
	started := st.AchievedRate
	if sc := o.Schedule; sc != nil && o.DurationS > 0 {
		started = float64(sc.Scheduled-sc.Pending-sc.Dropped) / o.DurationS
	}

	short := o.Offered > 0 && started < MinAchieved*o.Offered

	switch {
	case o.ClientCPU >= ClientSaturated:
		st.Cause = CauseClient
		st.Why = fmt.Sprintf("mongobench's own process used %.0f%% of the machine's cores: the client, not the server, is the limit", 100*o.ClientCPU)
	case short && clientLate(o.Schedule) && o.Schedule.Pending > 0:
		st.Cause = CauseClient
		st.Why = fmt.Sprintf("achieved %.1f ops/s of the %.1f offered with %d operations never started and %d started late for want of CPU, not of a free slot: the client, not the server, is the limit",
			st.AchievedRate, o.Offered, o.Schedule.Pending, o.Schedule.LateForClient)
	case short:
		st.Cause = CauseAchieved
		st.Why = fmt.Sprintf("started %.1f ops/s of the %.1f offered (%.0f%%), completed %.1f", started, o.Offered, 100*started/o.Offered, st.AchievedRate)
		if o.Schedule != nil && (o.Schedule.Dropped > 0 || o.Schedule.Pending > 0) {
			st.Why += fmt.Sprintf("; %d dropped, %d still waiting at the end", o.Schedule.Dropped, o.Schedule.Pending)
		}
	case clientLate(o.Schedule) && lagExplains(o.Schedule, worst):
		st.Cause = CauseClient
		st.Why = fmt.Sprintf("mongobench's scheduler started %d of %d operations late (by %s on average, up to %s) for want of CPU, not of a free slot: the client, not the server, is the limit",
			o.Schedule.LateForClient, o.Schedule.Scheduled, units.Micros(meanLag(o.Schedule)), units.Micros(o.Schedule.MaxSchedulerLagUS))
	case len(errs) > 0:
		st.Cause = CauseErrors
		st.Why = strings.Join(append(errs, latency...), "; ")
	case len(latency) > 0:
		st.Cause = CauseLatency
		st.Why = strings.Join(latency, "; ")
	case st.Count == 0:
		st.Cause = CauseErrors
		st.Why = "no operation succeeded"
	default:
		st.Passed = true
	}

	return st
}

// clientLate tells whether the open-loop scheduler itself fell behind:
// more than lateShare of the due operations handed out late, and more of
// them for the scheduler's lag than for a busy slot.
func clientLate(s *result.Schedule) bool {
	return s != nil && s.Scheduled > 0 && float64(s.LateForClient) >= lateShare*float64(s.Scheduled) && s.LateForClient > s.LateForSlot
}

// lagShare is the share of a broken latency objective's measured value
// that the late operations' mean lag must reach to explain it: a client a
// millisecond late on a busy machine does not explain a 10 ms p99.
const lagShare = 0.25

// lagExplains tells whether the scheduler's lateness explains a latency
// objective measured at worst µs (0: none broke). It judges by the late
// operations' mean lag, the share of their latency that lateness accounts
// for, not by the longest lag: one stall of the client's process makes one
// long lag while the server's own slowness makes the tail.
func lagExplains(s *result.Schedule, worst float64) bool {
	return worst > 0 && meanLag(s) >= lagShare*worst
}

// meanLag is the mean time the late operations waited on the scheduler,
// µs.
func meanLag(s *result.Schedule) float64 {
	if s == nil || s.Late == 0 {
		return 0
	}

	return s.ClientLagUS / float64(s.Late)
}

// certain tells whether every objective of a step was judged beyond its
// confidence interval (so a pass is a pass and a failure a failure); steps
// failed for the achieved rate or the client are certain.
func certain(st result.CapacityStep) bool {
	if st.Cause == CauseAchieved || st.Cause == CauseClient {
		return true
	}

	if !st.Passed { // one objective broken beyond doubt is enough
		for _, v := range st.SLO {
			if !v.Passed && v.Certain {
				return true
			}
		}

		return false
	}

	for _, v := range st.SLO {
		if !v.Certain {
			return false
		}
	}

	return true
}

// Describe is a step in one line for the terminal.
func Describe(st result.CapacityStep) string {
	what := fmt.Sprintf("rate %9.1f/s", st.OfferedRate)
	if st.Kind == result.CapacityStepWorkers {
		what = fmt.Sprintf("workers %5d", st.Workers)
	}

	verdict := "ok"
	if !st.Passed {
		verdict = "BROKE (" + st.Cause + "): " + st.Why
	}

	return fmt.Sprintf("%-8s %s  achieved %9.1f/s  p50 %9s  p99 %9s  errors %d  client CPU %3.0f%%  %s",
		st.Kind, what, st.AchievedRate, units.Micros(st.P50US), units.Micros(st.P99US), st.Errors, 100*st.ClientCPU, verdict)
}

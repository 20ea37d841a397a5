// Package capacity answers "how much load can this deployment take before
// its SLO breaks, and how does it scale with workers": a search over
// open-loop rate steps for the highest rate that meets a service-level
// objective, confirmed by a run of its own, and a closed-loop sweep over
// worker counts for the Universal Scalability Law.
//
// It is a use case over the existing engine, not a second one: every step
// is a single run of the workload's main phase through package bench,
// with the phase's rate (open loop, latency counted from each operation's
// intended start, so coordinated omission cannot hide a backlog) or its
// workers (closed loop) set for the step, against one target launched once
// for the whole search exactly as `run` launches it. The search itself
// (Search) only sees judged steps, so it is tested against a simulated
// server; Judge turns what a step measured into a verdict with confidence
// intervals.
package capacity

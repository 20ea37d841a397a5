package result

// ThresholdOutcome is how one of the workload's thresholds fared in a run.
type ThresholdOutcome struct {
	// Phase is the phase the threshold was checked on.
	Phase string `json:"phase"`
	// Operation is the operation's name, or "all" for every operation of
	// the phase together.
	Operation string `json:"operation"`
	// Condition is the condition in canonical form, "p99 < 20ms".
	Condition string `json:"condition"`
	// Metric is the metric's name ("p99", "throughput", ...).
	Metric string `json:"metric"`
	// Measured is the value found, in the metric's unit (microseconds for
	// latencies, operations per second, percent for the error rate); it
	// is 0 when Measurable is false.
	Measured float64 `json:"measured"`
	// Measurable is false when the run gave no value for the metric (no
	// successful operation to take a latency from, or no such phase); the
	// threshold then fails.
	Measurable bool `json:"measurable"`
	// Limit is the condition's limit in the same unit.
	Limit float64 `json:"limit"`
	// Passed says whether the condition held.
	Passed bool `json:"passed"`
	// Text is the line printed for people: "✓ get p99 < 20ms (p99 = 12.3ms)".
	Text string `json:"text"`
}

package result

// Capacity is what `mongobench capacity` found: the steps of its rate
// search, the confirmation run, the verdict and, when a concurrency sweep
// was asked for, its closed-loop steps and the Universal Scalability Law
// fitted to them. A capacity results file is otherwise a run's (its phases
// are the confirmation run's), so every reader of runs reads it; this
// section is optional and absent from other files.
type Capacity struct {
	// SLO are the service-level conditions searched against, as written
	// ("p99 < 20ms", "get:error_rate < 0.1%").
	SLO []string `json:"slo"`

	// MaxRate is the highest offered rate, in operations per second, that
	// met every SLO and was confirmed; 0 when no tested rate did.
	MaxRate float64 `json:"max_rate"`

	// MaxRateCI bounds MaxRate: from the highest rate that met the SLO
	// beyond doubt to the lowest that broke it beyond doubt (see
	// docs/capacity.md).
	MaxRateCI [2]float64 `json:"max_rate_ci"`

	// Confirmed says the confirmation run at MaxRate met the SLO.
	Confirmed bool `json:"confirmed"`

	// ClientLimited says the search stopped because mongobench's own
	// process, not the server, was the bottleneck: MaxRate is then a lower
	// bound of the server's capacity.
	ClientLimited bool `json:"client_limited,omitempty"`

	// Interrupted says the search (or its sweep) was stopped before it
	// ended (Ctrl-C, SIGTERM): Steps are those that ended, and unless the
	// search itself had finished MaxRate is 0 and Verdict says what was
	// known so far. The result's status is then "interrupted".
	Interrupted bool `json:"interrupted,omitempty"`

	// Verdict is the outcome in one sentence.
	Verdict string `json:"verdict"`

	// Steps are the open-loop steps in the order they ran, the
	// confirmation run last (Kind "confirm").
	Steps []CapacityStep `json:"steps"`

	// Broke is the index in Steps of the lowest rate that broke the SLO;
	// -1 when none did.
	Broke int `json:"broke"`

	// Sweep are the closed-loop steps of a concurrency sweep.
	Sweep []CapacityStep `json:"sweep,omitempty"`

	// Fit is the Universal Scalability Law fitted to Sweep; nil when no
	// sweep ran or no fit was made.
	Fit *USLFit `json:"fit,omitempty"`

	// Shards, on the results of shard 0 of a sharded search (capacity
	// --shard 0/N), is N: every step's figures are the merged
	// observations of the N shards, each of which offered its share of
	// the step's aggregate rate. The file's phases are shard 0's share of
	// the reported run. 0 for a search by one process.
	Shards int `json:"shards,omitempty"`
}

// CapacityFollower marks the results of a shard other than 0 of a sharded
// capacity search: the shard ran the steps shard 0 chose, and its phases
// are its share of the run shard 0 reports (the confirmation run when
// there was one), so that `merge` of every shard's file gives that run
// whole. It holds no capacity of its own: the search's is in shard 0's
// file alone, so that nothing adds capacities up.
type CapacityFollower struct {
	// Shard and Count are this shard's index and the number of shards.
	Shard int `json:"shard"`
	Count int `json:"count"`
	// Steps is how many steps of the search and sweep the shard ran.
	Steps int `json:"steps"`
}

// Kinds of capacity steps.
const (
	CapacityStepRate    = "step"
	CapacityStepConfirm = "confirm"
	CapacityStepWorkers = "workers"
)

// CapacityStep is one step of a capacity search or sweep.
type CapacityStep struct {
	// Kind is CapacityStepRate ("step", an open-loop step of the search),
	// CapacityStepConfirm or CapacityStepWorkers.
	Kind string `json:"kind"`
	// OfferedRate is the open-loop rate, operations per second.
	OfferedRate float64 `json:"offered_rate,omitempty"`
	// Workers is the number of closed-loop workers.
	Workers int `json:"workers,omitempty"`
	// AchievedRate is the operations completed (successes and errors) per
	// second of the measured time.
	AchievedRate float64 `json:"achieved_rate"`
	// DurationS is the measured time.
	DurationS float64 `json:"duration_s"`
	// Count and Errors are the successful and failed operations.
	Count  int64 `json:"count"`
	Errors int64 `json:"errors"`
	// P50US, P99US and P999US are response-time percentiles over all
	// operations, microseconds.
	P50US  float64 `json:"p50_us"`
	P99US  float64 `json:"p99_us"`
	P999US float64 `json:"p999_us"`
	// ClientCPU is the share of the machine's cores mongobench's process
	// used during the step (0 to 1).
	ClientCPU float64 `json:"client_cpu"`
	// SLO are the conditions' values at this step.
	SLO []SLOValue `json:"slo,omitempty"`
	// Passed says the step met every SLO and kept its rate.
	Passed bool `json:"passed"`
	// Cause is why a step failed: latency, errors, achieved (the achieved
	// rate fell short of the offered one) or client (mongobench's process
	// was saturated); empty when it passed.
	Cause string `json:"cause,omitempty"`
	// Why says it in words.
	Why string `json:"why,omitempty"`
}

// SLOValue is one condition measured at one step, with its 95% confidence
// interval when the samples allow one (both bounds 0 otherwise).
type SLOValue struct {
	Condition string     `json:"condition"`
	Measured  float64    `json:"measured"`
	CI        [2]float64 `json:"ci"`
	Passed    bool       `json:"passed"`
	// Certain says the whole CI is on the same side of the limit as the
	// measured value.
	Certain bool `json:"certain"`
}

// USLFit is the Universal Scalability Law, X(N) = λN / (1 + σ(N−1) +
// κN(N−1)), fitted to a concurrency sweep, with bootstrap 95% CIs.
type USLFit struct {
	Lambda   float64    `json:"lambda"`
	Sigma    float64    `json:"sigma"`
	Kappa    float64    `json:"kappa"`
	LambdaCI [2]float64 `json:"lambda_ci"`
	SigmaCI  [2]float64 `json:"sigma_ci"`
	KappaCI  [2]float64 `json:"kappa_ci"`
	// PeakN and PeakX are the predicted peak: the concurrency of the
	// highest throughput and that throughput (PeakN is +Inf-free: 0 when
	// κ is 0 and the curve has no peak).
	PeakN float64 `json:"peak_n"`
	PeakX float64 `json:"peak_x"`
	// R2 is the fit's coefficient of determination.
	R2 float64 `json:"r2"`
	// Supported says the data support a fit; Reason says why not.
	Supported bool   `json:"supported"`
	Reason    string `json:"reason,omitempty"`
	// PeakReason, on a supported fit, says why its predicted peak is not
	// located (its interval unbounded or too wide): the curve stands over
	// the measured workers, the peak does not.
	PeakReason string `json:"peak_reason,omitempty"`
}

// Throughput is the fitted curve at n workers.
func (f *USLFit) Throughput(n float64) float64 {
	d := 1 + f.Sigma*(n-1) + f.Kappa*n*(n-1)
	if d <= 0 {
		return 0
	}

	return f.Lambda * n / d
}

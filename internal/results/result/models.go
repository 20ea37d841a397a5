package result

import (
	"time"

	"github.com/mongobench/mongobench/internal/stats/metrics"
)

// Schedule records how well an open-loop schedule was kept: operations are
// counted as late or dropped instead of silently falling behind.
type Schedule struct {
	// Scheduled is the number of operations that came due while measuring.
	Scheduled int64 `json:"scheduled"`
	// Late started more than a millisecond after their due time; their
	// response times include the wait.
	Late int64 `json:"late"`
	// Dropped were never sent: the backlog of waiting operations was full.
	Dropped int64 `json:"dropped"`
	// Pending were due but not started when the phase ended.
	Pending int64 `json:"pending"`
	// LateForSlot and LateForClient split Late by cause: waiting for a
	// busy in-flight slot (server slower than the rate), or a scheduler
	// that handed operations out late (client saturated).
	LateForSlot   int64 `json:"late_for_slot"`
	LateForClient int64 `json:"late_for_client"`
	// MaxInFlight is the number of in-flight slots.
	MaxInFlight int `json:"max_in_flight"`
	// MaxWaitUS is the longest an operation waited for a slot.
	MaxWaitUS float64 `json:"max_wait_us"`
	// MaxSchedulerLagUS is the longest the scheduler itself woke up late;
	// large values mean the client was saturated.
	MaxSchedulerLagUS float64 `json:"max_scheduler_lag_us"`
	// ClientLagUS adds up, over the late operations, the time the
	// scheduler took to hand them out: with Late, the mean lag, which says
	// how much of their response times the client's lateness explains
	// (the longest lag alone may be one hiccup).
	ClientLagUS float64 `json:"client_lag_us,omitempty"`
	// Warning names the likely cause when the schedule was not kept.
	Warning string `json:"warning,omitempty"`
}

// PlanPoint is the planned rate or concurrency at an interval's end.
type PlanPoint struct {
	// ElapsedS is the interval's end, from the phase's StartedAt.
	ElapsedS float64 `json:"elapsed_s"`
	// Rate is the planned operations per second (open-loop phases).
	Rate float64 `json:"rate,omitempty"`
	// Concurrency is the planned number of workers (closed-loop ramps).
	Concurrency int `json:"concurrency,omitempty"`
}

// Block is one growth block: latency of its operations and the size of the
// watched collection at its end, the points of a latency-vs-size curve.
type Block struct {
	// Index counts blocks from 0.
	Index int `json:"index"`
	// Start and End bound the block.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// DurationS is the block's length.
	DurationS float64 `json:"duration_s"`
	// Complete is false for a block cut short by a stop.
	Complete bool `json:"complete"`
	// Collection is the watched collection's size at the block's end.
	Collection CollectionSize `json:"collection"`
	// Operations are the block's per-operation statistics, merged from
	// the phase's intervals that the block spans.
	Operations []Operation `json:"operations"`
}

// CollectionSize is what the server said about a collection's size.
type CollectionSize struct {
	Name         string `json:"name"`
	Documents    int64  `json:"documents"`
	DataBytes    int64  `json:"data_bytes"`
	StorageBytes int64  `json:"storage_bytes"`
	IndexBytes   int64  `json:"index_bytes"`
	// Note says what is missing when only part could be read.
	Note string `json:"note,omitempty"`
	// Error is set when nothing could be read.
	Error string `json:"error,omitempty"`
}

// Background is a job run beside a phase's operations.
type Background struct {
	// Operation is the job's operation; its statistics are among the
	// phase's operations.
	Operation string `json:"operation"`
	// Rate is the fixed rate, absent when paced.
	Rate float64 `json:"rate,omitempty"`
	// Pacing is the controller's configuration when paced.
	Pacing *Pacing `json:"pacing,omitempty"`
	// Trajectory is the rate decided at each interval and why.
	Trajectory []PacingPoint `json:"trajectory,omitempty"`
	// HighestSustainedRate is the highest rate whose following interval
	// kept the watched latency below the high threshold: how fast the job
	// may run.
	HighestSustainedRate float64 `json:"highest_sustained_rate,omitempty"`
	// Schedule says how well the job's schedule was kept.
	Schedule *Schedule `json:"schedule,omitempty"`
}

// Pacing is a latency-paced job's controller configuration.
type Pacing struct {
	Start      float64 `json:"start"`
	Min        float64 `json:"min"`
	Max        float64 `json:"max"`
	LowUS      float64 `json:"low_us"`
	HighUS     float64 `json:"high_us"`
	SpeedUp    float64 `json:"speed_up"`
	SlowDown   float64 `json:"slow_down"`
	Percentile float64 `json:"percentile"`
}

// PacingPoint is one controller decision: at OffsetS (from the phase's
// start, warm-up included) the rate became Rate, because the last interval's
// latency percentile was ObservedUS over Samples operations.
type PacingPoint struct {
	OffsetS    float64 `json:"offset_s"`
	Rate       float64 `json:"rate"`
	ObservedUS float64 `json:"observed_us"`
	Samples    int64   `json:"samples"`
	Action     string  `json:"action"`
}

// ServiceTimes returns the service-time fields of an operation
// (Operation.ServiceLatencyUS and ServiceHistogram) for the histogram h.
func ServiceTimes(h *metrics.Histogram) (*Latency, string, error) {
	enc, err := metrics.EncodeHistogram(h)
	if err != nil {
		return nil, "", err
	}

	l := latencyOf(metrics.Summarize(h))

	return &l, enc, nil
}

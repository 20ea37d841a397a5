package metrics

// Rate is an interval's throughput in a few numbers, for a live progress
// line: it sums the operations, not the units (sequence iterations,
// composites) made of them, so that nothing is counted twice.
type Rate struct {
	// OpsPerSec and DocsPerSec are the interval's successful operations
	// and documents per second; zero for an interval of no length.
	OpsPerSec, DocsPerSec float64

	// Errors is the number of failed operations, of every kind.
	Errors int64

	// WorstP99 is the highest p99 latency (µs) of an operation that
	// succeeded at least once in the interval.
	WorstP99 float64
}

// Rate sums the interval's operations and documents per second and finds
// its worst p99.
func (iv Interval) Rate() Rate {
	var (
		r         Rate
		ops, docs int64
	)

	for _, o := range iv.Ops {
		if o.Unit != "" {
			continue // made of the operations, counted there
		}

		ops += o.Count
		docs += o.Docs

		for _, n := range o.Errors {
			r.Errors += n
		}

		if o.Count > 0 {
			r.WorstP99 = max(r.WorstP99, Summarize(o.Hist).P99)
		}
	}

	if secs := iv.End.Sub(iv.Start).Seconds(); secs > 0 {
		r.OpsPerSec = float64(ops) / secs
		r.DocsPerSec = float64(docs) / secs
	}

	return r
}

package result

import "time"

// Explain is the normalized explain output of one operation, run once for a
// representative instance of it (values generated as in the run).
type Explain struct {
	// Operation and Collection name what was explained.
	Operation  string `json:"operation"`
	Collection string `json:"collection"`
	// Command is the explained command as sent, in extended JSON.
	Command string `json:"command"`
	// Format is the plan format detected: "mongodb", "ferretdb-sqlite",
	// "ferretdb-postgresql" or "unknown".
	Format string `json:"format"`
	// Stages are the winning plan's stages, outermost first (e.g. FETCH,
	// IXSCAN), or the backend's plan lines when it has no stages.
	Stages []string `json:"stages,omitempty"`
	// Index names the index used, empty when none.
	Index string `json:"index,omitempty"`
	// CollectionScan is true when the plan reads the whole collection.
	CollectionScan bool `json:"collection_scan"`
	// KeysExamined, DocsExamined and DocsReturned come from executionStats;
	// -1 means the server did not say.
	KeysExamined int64 `json:"keys_examined"`
	DocsExamined int64 `json:"docs_examined"`
	DocsReturned int64 `json:"docs_returned"`
	// ExecutionMS is the server's own execution time, -1 when unknown.
	ExecutionMS float64 `json:"execution_ms"`
	// Pushdown says, for FerretDB, whether the filter, sort and limit were
	// pushed down to the backend (nil when not FerretDB).
	Pushdown map[string]bool `json:"pushdown,omitempty"`
	// Warnings are findings worth a user's attention, e.g. a collection
	// scan, or many documents examined per document returned.
	Warnings []string `json:"warnings,omitempty"`
	// Error is set when explain failed or is not supported for this kind.
	Error string `json:"error,omitempty"`
	// Raw is the server's answer in extended JSON, kept because backends
	// answer in their own formats.
	Raw string `json:"raw,omitempty"`
}

// Server is what mongobench sampled from the server during the run, on a
// connection of its own.
type Server struct {
	// Supported says which sources the server answered
	// (serverStatus, top, dbStats, collStats).
	Supported map[string]bool `json:"supported"`
	// Notes explain unsupported sources ("top: not supported by this
	// server (CommandNotFound)").
	Notes []string `json:"notes,omitempty"`
	// IntervalS is the sampling period.
	IntervalS float64 `json:"interval_s"`
	// SampleCostUS is the mean time one sample took, so that its overhead
	// on the measured operations can be judged.
	SampleCostUS float64 `json:"sample_cost_us"`
	// Samples are in time order.
	Samples []ServerSample `json:"samples"`
}

// ServerSample is one sampling point. Counters are deltas since the
// previous sample (rates are delta / elapsed); gauges are current values.
type ServerSample struct {
	Time time.Time `json:"time"`
	// ElapsedS counts from the run's start.
	ElapsedS float64 `json:"elapsed_s"`
	// Phase is the phase running when the sample was taken.
	Phase string `json:"phase,omitempty"`

	// Opcounters are serverStatus.opcounters deltas (insert, query,
	// update, delete, getmore, command).
	Opcounters map[string]int64 `json:"opcounters,omitempty"`
	// Connections is serverStatus.connections.current.
	Connections int64 `json:"connections,omitempty"`
	// NetworkBytesIn and NetworkBytesOut are deltas.
	NetworkBytesIn  int64 `json:"network_bytes_in,omitempty"`
	NetworkBytesOut int64 `json:"network_bytes_out,omitempty"`
	// WiredTiger holds cache and ticket gauges when the server has them
	// (cache_bytes, cache_dirty_bytes, cache_max_bytes,
	// read_tickets_available, write_tickets_available, ...).
	WiredTiger map[string]int64 `json:"wired_tiger,omitempty"`
	// Top holds per-namespace time deltas in microseconds (mongotop's
	// source): namespace → {read_us, write_us, total_us}.
	Top map[string]map[string]int64 `json:"top,omitempty"`
	// DB holds dbStats gauges (objects, data_bytes, storage_bytes,
	// index_bytes).
	DB map[string]int64 `json:"db,omitempty"`
	// Collections holds collStats gauges per collection (count,
	// data_bytes, storage_bytes, index_bytes).
	Collections map[string]map[string]int64 `json:"collections,omitempty"`
}

// Finding is a plain-language observation for the end-of-run summary and
// the report, e.g. "find_by_message: collection scan on errors (examined
// 100000, returned 1)".
type Finding struct {
	// Severity is "warning" or "info".
	Severity string `json:"severity"`
	// Operation is the operation concerned, if any.
	Operation string `json:"operation,omitempty"`
	// Text is the finding.
	Text string `json:"text"`
}

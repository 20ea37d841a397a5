package result

import "time"

// SeedScheme names how a sharded run derives its random streams, recorded so
// that merge refuses shards whose data was generated differently: every
// worker's random source is seeded from the workload seed, the shard index
// and the worker index, and ^seq counters hand out the keys start + step ×
// (shard + count × k), so shards never generate the same key.
const SeedScheme = "seed+shard+worker/v1"

// Shard records that a run was one shard of a distributed run (run --shard
// I/N): which one, and what every shard of the run must share for merge to
// add them up.
type Shard struct {
	// Index is the shard's number, from 0; Count is the number of shards.
	Index int `json:"index"`
	Count int `json:"count"`
	// StartAt is the wall-clock instant every shard started measuring its
	// first phase (--start-at); zero when the shards started on their own.
	StartAt time.Time `json:"start_at,omitzero"`
	// StartAtMode says where StartAt came from: "time" (--start-at TIME),
	// "auto" (the shards met through the target database), or empty.
	StartAtMode string `json:"start_at_mode,omitempty"`
	// SeedScheme is SeedScheme for the runs this version makes.
	SeedScheme string `json:"seed_scheme"`
	// SpecSHA256 is the SHA-256 of the whole workload (the JSON of
	// Workload.Spec, before the shard's share was taken), the same in every
	// shard of one run.
	SpecSHA256 string `json:"spec_sha256"`
}

// Merged records the shards a merged result was made from (mongobench
// merge): their shared settings and, per shard, where it came from.
type Merged struct {
	// Count, StartAt, SeedScheme and SpecSHA256 are the shards' shared
	// values (see Shard).
	Count      int       `json:"count"`
	StartAt    time.Time `json:"start_at,omitzero"`
	SeedScheme string    `json:"seed_scheme"`
	SpecSHA256 string    `json:"spec_sha256"`
	// Sources are the merged shards, by index.
	Sources []MergeSource `json:"sources"`
}

// MergeSource is one shard of a merged result.
type MergeSource struct {
	// File is the input the shard was read from, as given to merge.
	File string `json:"file"`
	// Index is the shard's index.
	Index int `json:"index"`
	// Status and StatusReason are how the shard's run ended.
	Status       string `json:"status"`
	StatusReason string `json:"status_reason,omitempty"`
	// StartedAt, DurationS and Concurrency are the shard's own.
	StartedAt   time.Time `json:"started_at"`
	DurationS   float64   `json:"duration_s"`
	Concurrency int       `json:"concurrency"`
	// Target is the shard's target URI (redacted) and server version.
	TargetURI     string `json:"target_uri"`
	ServerVersion string `json:"server_version"`
}

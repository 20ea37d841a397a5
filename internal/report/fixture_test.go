package report

import (
	"math"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/targets"
)

// t0 is when the fixture's run started.
var t0 = time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)

// hostile is text a results file could carry that must stay text.
const hostile = `</script><script>alert("x")</script><img src=x onerror=alert(1)>`

// fakeOp is an operation's figures over secs seconds, latencies scaled
// from p50 (µs). The histograms are left empty: the report reads only the
// summaries.
func fakeOp(name string, count int64, secs, p50 float64, errs map[string]int64) result.Operation {
	if errs == nil {
		errs = map[string]int64{}
	}

	o := result.Operation{Name: name, Count: count, Errors: errs, Docs: count}
	if secs > 0 {
		o.OpsPerSec = float64(count) / secs
	}

	if count > 0 {
		o.LatencyUS = result.Latency{Mean: p50 * 1.2, P50: p50, P90: p50 * 2, P95: p50 * 2.5, P99: p50 * 4, P999: p50 * 6, Max: p50 * 8}
	}

	return o
}

// fakePhase builds a phase of n one-second intervals starting at start;
// perInterval gives an interval's operations.
func fakePhase(name, model string, start time.Time, n int, perInterval func(i int) []result.Operation) result.Phase {
	p := result.Phase{Name: name, Model: model, StartedAt: start, DurationS: float64(n)}

	totals := map[string]*result.Operation{}

	var order []string

	for i := range n {
		iv := result.Interval{
			Start:      start.Add(time.Duration(i) * time.Second),
			End:        start.Add(time.Duration(i+1) * time.Second),
			ElapsedS:   float64(i + 1),
			Operations: perInterval(i),
		}
		p.Intervals = append(p.Intervals, iv)

		for _, o := range iv.Operations {
			t, ok := totals[o.Name]
			if !ok {
				c := o
				c.Errors = map[string]int64{}
				c.Count, c.Docs, c.Clamped = 0, 0, 0
				totals[o.Name] = &c
				order = append(order, o.Name)
				t = &c
			}

			t.Count += o.Count
			t.Docs += o.Docs
			t.Clamped += o.Clamped

			for k, v := range o.Errors {
				t.Errors[k] += v
			}

			t.LatencyUS.Max = math.Max(t.LatencyUS.Max, o.LatencyUS.Max)
		}
	}

	for _, name := range order {
		t := totals[name]
		t.OpsPerSec = float64(t.Count) / float64(n)
		p.Operations = append(p.Operations, *t)
	}

	return p
}

// fullResult is a run with every part the report shows: an aborted status,
// a load phase, an excluded warm-up phase, an open-loop ramp with a
// schedule, plan, service times, decode costs, clamped latencies and
// errors, growth blocks, a paced background job, query plans, findings and
// server samples.
func fullResult(t *testing.T) *result.Result {
	t.Helper()

	r := &result.Result{
		SchemaVersion:     result.SchemaVersion,
		MongobenchVersion: "v0.0.0-test",
		Workload: result.Workload{
			Name:   "fixture",
			File:   "workloads/fixture.yaml",
			Source: "# fixture\nname: fixture\nrun:\n  rate: 100/s\n",
			Spec: map[string]any{
				"name":        "fixture",
				"description": "Every section of the report, " + hostile,
				"run":         map[string]any{"rate": "100/s"},
			},
		},
		Target: result.Target{
			Kind:          targets.KindURI,
			URI:           "mongodb://bench:xxxxx@db.example:27017/",
			ServerVersion: "MongoDB 7.0.12 (replica set)",
			Backend:       "wiredTiger",
			Notes:         []string{"client and server share a host", hostile},
		},
		StartedAt:    t0,
		DurationS:    42.5,
		Seed:         7,
		Concurrency:  8,
		Status:       result.StatusAborted,
		StatusReason: "no operation succeeded for 15s (first error: network)",
	}

	load := fakePhase("load:items", "load", t0.Add(time.Second), 2, func(i int) []result.Operation {
		o := fakeOp("load_items", 10, 1, 2000, nil)
		o.Docs = 5000
		if i == 1 {
			o.Errors = map[string]int64{"duplicate_key": 1}
		}

		return []result.Operation{o}
	})
	r.AddPhase(load)

	warm := fakePhase("warm", "closed", t0.Add(4*time.Second), 2, func(int) []result.Operation {
		return []result.Operation{fakeOp("get", 50, 1, 300, nil)}
	})
	warm.Excluded = true
	r.AddPhase(warm)

	run := fakePhase(result.PhaseRun, "ramping-rate", t0.Add(7*time.Second), 6, func(i int) []result.Operation {
		get := fakeOp("get", int64(100*(i+1)), 1, 250+float64(50*i), nil)
		if i == 3 {
			get = fakeOp("get", 0, 1, 0, map[string]int64{"timeout": 4, "network": 2})
		}

		put := fakeOp("put", int64(20*(i+1)), 1, 900, nil)
		put.Clamped = int64(i % 2)

		scan := fakeOp("scan", 5, 1, 40000, nil)
		scan.Docs = 500
		scan.Decode = "struct"

		return []result.Operation{get, put, scan}
	})
	for i := range run.Operations {
		l := run.Operations[i].LatencyUS
		l.P50 *= 0.8
		run.Operations[i].ServiceLatencyUS = &l
	}

	run.Operations[2].USPerDoc = 480.5
	run.WarmupS = 1
	run.Schedule = &result.Schedule{
		Scheduled: 2200, Late: 120, Dropped: 15, Pending: 3, MaxInFlight: 64,
		MaxWaitUS: 250000, MaxSchedulerLagUS: 1200,
		Warning: "120 of 2200 scheduled operations started late and 15 were dropped: the server did not keep up",
	}

	for i := range 6 {
		run.Targets = append(run.Targets, result.PlanPoint{ElapsedS: float64(i + 1), Rate: float64(120 * (i + 1))})
	}

	r.AddPhase(run)

	grow := fakePhase("grow", "blocks", t0.Add(14*time.Second), 4, func(int) []result.Operation {
		return []result.Operation{fakeOp("create", 200, 1, 800, nil), fakeOp("search", 200, 1, 3000, nil)}
	})
	for i := range 3 {
		grow.Blocks = append(grow.Blocks, result.Block{
			Index: i, Start: t0.Add(time.Duration(14+i) * time.Second), End: t0.Add(time.Duration(15+i) * time.Second),
			DurationS: 1, Complete: i < 2,
			Collection: result.CollectionSize{
				Name: "errors", Documents: int64(1000 * (i + 1)),
				DataBytes: int64(300000 * (i + 1)), StorageBytes: int64(400000 * (i + 1)), IndexBytes: int64(50000 * (i + 1)),
			},
			Operations: []result.Operation{
				fakeOp("create", 200, 1, 800+float64(100*i), nil),
				fakeOp("search", 200, 1, 3000*float64(i+1), nil),
			},
		})
	}

	grow.Background = []result.Background{
		{
			Operation: "touch",
			Pacing:    &result.Pacing{Start: 2, Min: 1, Max: 200, LowUS: 100000, HighUS: 300000, SpeedUp: 1.1, SlowDown: 0.66, Percentile: 99},
			Trajectory: []result.PacingPoint{
				{OffsetS: 0, Rate: 2, Action: "hold"},
				{OffsetS: 1, Rate: 2.2, ObservedUS: 50000, Samples: 2, Action: "up"},
				{OffsetS: 2, Rate: 2.42, ObservedUS: 80000, Samples: 2, Action: "up"},
				{OffsetS: 3, Rate: 1.6, ObservedUS: 400000, Samples: 3, Action: "down"},
			},
			HighestSustainedRate: 2.2,
			Schedule:             &result.Schedule{Scheduled: 8, Late: 1, MaxWaitUS: 100, MaxSchedulerLagUS: 80},
		},
		{Operation: "sweep", Rate: 0.5},
	}
	r.Phases = append(r.Phases, grow)

	r.Explain = []result.Explain{
		{
			Operation: "scan", Collection: "items", Command: `{"find": "items", "filter": {"tag": "a"}}`, Format: "mongodb",
			Stages: []string{"COLLSCAN"}, CollectionScan: true, KeysExamined: 0, DocsExamined: 100000, DocsReturned: 10, ExecutionMS: 41.5,
			Warnings: []string{"collection scan", "examined 10000 documents per document returned"},
		},
		{
			Operation: "get", Collection: "items", Format: "ferretdb-postgresql", Stages: []string{"FETCH", "IXSCAN"}, Index: "_id_",
			KeysExamined: 1, DocsExamined: 1, DocsReturned: 1, ExecutionMS: -1, Pushdown: map[string]bool{"filter": true, "sort": false},
		},
		{Operation: "put", Collection: "items", KeysExamined: -1, DocsExamined: -1, DocsReturned: -1, ExecutionMS: -1, Error: "explain is not supported for updateOne"},
	}

	r.Findings = []result.Finding{
		{Severity: "warning", Operation: "scan", Text: "collection scan on items (examined 100000, returned 10)"},
		{Severity: "warning", Text: "schedule not kept: 15 operations dropped"},
		{Severity: "info", Operation: "get", Text: "6 operations failed: timeout 4, network 2 " + hostile},
	}

	r.Server = &result.Server{
		Supported:    map[string]bool{"serverStatus": true, "top": true, "dbStats": true, "collStats": false},
		Notes:        []string{"collStats: not supported by this server (CommandNotFound)"},
		IntervalS:    2,
		SampleCostUS: 850,
	}

	for i := range 5 {
		r.Server.Samples = append(r.Server.Samples, result.ServerSample{
			Time:            t0.Add(time.Duration(2*i+2) * time.Second),
			ElapsedS:        float64(2*i + 2),
			Phase:           []string{"load:items", "load:items", result.PhaseRun, result.PhaseRun, "grow"}[i],
			Opcounters:      map[string]int64{"insert": int64(100 * i), "query": int64(400 * i), "command": 20},
			Connections:     int64(10 + i),
			NetworkBytesIn:  int64(20000 * (i + 1)),
			NetworkBytesOut: int64(90000 * (i + 1)),
			WiredTiger: map[string]int64{
				"cache_bytes": int64(50<<20 + i<<20), "cache_dirty_bytes": int64(i << 19), "cache_max_bytes": 256 << 20,
				"read_tickets_available": int64(128 - i), "write_tickets_available": 128,
			},
			Top: map[string]map[string]int64{
				"fixture.items":  {"read_us": int64(3000 * i), "write_us": int64(1000 * i), "total_us": int64(4000 * i)},
				"fixture.errors": {"read_us": 10, "write_us": 500, "total_us": 510},
			},
			DB: map[string]int64{"objects": int64(1000 * (i + 1)), "data_bytes": int64(300000 * (i + 1)), "storage_bytes": 1 << 20, "index_bytes": 65536},
		})
	}

	return r
}

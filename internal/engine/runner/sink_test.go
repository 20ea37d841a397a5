package runner

import (
	"sync"
	"testing"

	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// countingSink keeps what a phase streamed.
type countingSink struct {
	mu      sync.Mutex
	indexes []int
	counts  map[string]int64
	service map[string]int64
	targets int
	pacing  int
	blocks  int
}

func (s *countingSink) Interval(_ Phase, rec IntervalRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()

	s.indexes = append(s.indexes, rec.Index)

	for i, o := range rec.Interval.Ops {
		s.counts[o.Name] += o.Count

		if rec.Service != nil {
			s.service[o.Name] += rec.Service.Ops[i].Hist.TotalCount()
		}
	}

	if rec.Target != nil {
		s.targets++
	}

	s.pacing += len(rec.Pacing)
}

func (s *countingSink) Block(Phase, Block) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blocks++
}

// TestSinkGetsEveryIntervalEngineKeepsFew runs an open-loop phase with a
// latency-paced background job for many short intervals with a sink and
// KeepIntervals 3: the sink receives every interval in order, with every
// operation counted once (response and service times), every plan point
// and every pacing decision, while each of the phase's two registries
// holds no more than 3 intervals at the end however many there were.
func TestSinkGetsEveryIntervalEngineKeepsFew(t *testing.T) {
	t.Parallel()

	const keep = 3

	r := newRig(t, `name: sink
database: mongobench_sink
collections: [{name: items}]
run:
  interval: 100ms
  timeout: 5s
phases:
  - name: paced
    rate: 200/s
    max_in_flight: 8
    duration: 2s
    operations: [get]
    background:
      - operation: put
        max_in_flight: 2
        pacing: {start: 20/s, min: 5/s, max: 100/s, low: 100ms, high: 300ms}
operations:
  - {name: get, op: findOne, collection: items, filter: {n: 1}}
  - {name: put, op: insertOne, collection: items, document: {n: 2}}
`, wiretest.Config{}, nil)

	sink := &countingSink{counts: map[string]int64{}, service: map[string]int64{}}
	r.eng.Sink, r.eng.KeepIntervals = sink, keep

	res := r.run(r.phases()[0])

	n := res.Registry.NumIntervals()
	if n < 4*keep {
		t.Fatalf("only %d intervals in 2s of 100ms intervals", n)
	}

	for i, idx := range sink.indexes {
		if idx != i {
			t.Fatalf("sink got intervals %v, want 0..%d in order", sink.indexes, n-1)
		}
	}

	if len(sink.indexes) != n {
		t.Errorf("sink got %d intervals, the phase had %d", len(sink.indexes), n)
	}

	if got := res.Registry.RetainedIntervals(); got > keep {
		t.Errorf("response-time registry retains %d intervals, want at most %d", got, keep)
	}

	if got := res.Service.RetainedIntervals(); got > keep {
		t.Errorf("service-time registry retains %d intervals, want at most %d", got, keep)
	}

	for _, tot := range res.Registry.Totals() {
		if sink.counts[tot.Name] != tot.Count || sink.service[tot.Name] != tot.Count {
			t.Errorf("%s: sink counted %d (service %d), totals %d", tot.Name, sink.counts[tot.Name], sink.service[tot.Name], tot.Count)
		}
	}

	if sink.targets != len(res.Targets) || sink.targets == 0 {
		t.Errorf("sink got %d plan points, the phase has %d", sink.targets, len(res.Targets))
	}

	if len(res.Background) != 1 || sink.pacing != len(res.Background[0].Trajectory) {
		t.Errorf("sink got %d pacing decisions, the job's trajectory has %+v", sink.pacing, res.Background)
	}
}

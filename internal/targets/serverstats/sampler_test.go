package serverstats

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/targets"
	"github.com/mongobench/mongobench/internal/targets/embeddedtest"
)

// phaseName is a concurrency-safe phase name for Config.Phase. The
// sampler calls Phase at the start of every sample, so the calls also tell
// the test how far sampling has gone, without sleeping on the clock.
type phaseName struct {
	mu    sync.Mutex
	name  string
	calls int
	// called is signalled (without blocking) at each call.
	called chan struct{}
}

func newPhaseName(name string) *phaseName {
	return &phaseName{name: name, called: make(chan struct{}, 1)}
}

// waitCalls waits until Phase was called at least n times in all, or
// fails the test after a generous deadline (a hang guard, not a speed
// limit).
func (p *phaseName) waitCalls(t *testing.T, n int) {
	t.Helper()

	deadline := time.After(2 * time.Minute)

	for {
		p.mu.Lock()
		calls := p.calls
		p.mu.Unlock()

		if calls >= n {
			return
		}

		select {
		case <-p.called:
		case <-deadline:
			t.Fatalf("the sampler started %d samples, want %d", calls, n)
		}
	}
}

func (p *phaseName) set(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()

	p.name = name
}

func (p *phaseName) get() string {
	p.mu.Lock()
	defer p.mu.Unlock()

	p.calls++

	select {
	case p.called <- struct{}{}:
	default:
	}

	return p.name
}

// TestSamplerEmbeddedFerretDB samples a real embedded FerretDB at 100ms
// while documents are inserted through another client.
func TestSamplerEmbeddedFerretDB(t *testing.T) {
	const (
		dbName   = "bench"
		collName = "items"
		docs     = 600
		batch    = 50
	)

	for _, tc := range []struct {
		name   string
		memory bool
	}{
		{"file-backed", false},
		{"in-memory", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := embeddedtest.Start(t, targets.EmbeddedOptions{Memory: tc.memory})
			workers := connect(t, e, e.MaxPoolSize())
			sampling := connect(t, e, 2)

			phase := newPhaseName("load")

			s := Start(t.Context(), Config{
				Client:      sampling,
				Database:    dbName,
				Collections: []string{collName, "never_created"},
				Interval:    100 * time.Millisecond,
				Phase:       phase.get,
			})

			coll := workers.Database(dbName).Collection(collName)

			for i := 0; i < docs; i += batch {
				batchDocs := make([]any, batch)
				for j := range batchDocs {
					batchDocs[j] = bson.D{{Key: "n", Value: i + j}, {Key: "pad", Value: strings.Repeat("x", 100)}}
				}

				if _, err := coll.InsertMany(t.Context(), batchDocs); err != nil {
					t.Fatalf("InsertMany: %v", err)
				}

				// Samples in between the inserts: the sampler started
				// one more after every fourth batch (the first call was
				// the baseline's, in Start).
				if b := i/batch + 1; b%4 == 0 {
					phase.waitCalls(t, 1+b/4)
				}
			}

			// Two more samples started in the read phase: the sampler
			// starts a sample only after recording the one before, so at
			// least one sample of the loop is recorded besides the
			// baseline and Stop's final sample.
			phase.set("read")
			phase.mu.Lock()
			n := phase.calls
			phase.mu.Unlock()
			phase.waitCalls(t, n+2)

			res := s.Stop()

			select {
			case <-s.done:
			default:
				t.Error("Stop returned before the sampling goroutine ended")
			}

			if again := s.Stop(); again != res {
				t.Error("second Stop returned another result")
			}

			t.Logf("sample cost %.0fµs, %d samples, notes %q", res.SampleCostUS, len(res.Samples), res.Notes)
			t.Logf("last sample: %s", mustJSON(t, res.Samples[len(res.Samples)-1]))

			wantSupported := map[string]bool{
				SourceServerStatus: true,
				SourceTop:          false,
				SourceDBStats:      true,
				SourceCollStats:    true,
			}
			for k, want := range wantSupported {
				if got, ok := res.Supported[k]; !ok || got != want {
					t.Errorf("Supported[%s] = %v (present %v), want %v", k, got, ok, want)
				}
			}

			if !containsNote(res.Notes, "top: not supported by this server (CommandNotFound)") {
				t.Errorf("Notes = %q, want the top note", res.Notes)
			}

			if res.IntervalS != 0.1 {
				t.Errorf("IntervalS = %v, want 0.1", res.IntervalS)
			}

			if res.SampleCostUS <= 0 {
				t.Errorf("SampleCostUS = %v, want > 0", res.SampleCostUS)
			}

			if len(res.Samples) < 3 {
				t.Fatalf("%d samples, want at least 3", len(res.Samples))
			}

			var prevCount int64

			withColl := 0

			for i, smp := range res.Samples {
				if i > 0 && smp.ElapsedS <= res.Samples[i-1].ElapsedS {
					t.Errorf("sample %d: ElapsedS %v not after %v", i, smp.ElapsedS, res.Samples[i-1].ElapsedS)
				}

				if smp.Phase != "load" && smp.Phase != "read" {
					t.Errorf("sample %d: Phase = %q", i, smp.Phase)
				}

				if smp.Top != nil || smp.Opcounters != nil || smp.WiredTiger != nil {
					t.Errorf("sample %d has fields FerretDB cannot give: %s", i, mustJSON(t, smp))
				}

				// A sample may lack dbStats or collStats when the server
				// did not answer within the interval (SQLite's ANALYZE
				// waits for the inserts' locks, slowly under -race), but
				// only with a note saying so, and never the baseline or
				// the final sample.
				edge := i == 0 || i == len(res.Samples)-1

				if smp.DB == nil && (edge || !hasNotePrefix(res.Notes, "dbStats: failed at ")) {
					t.Errorf("sample %d: no dbStats, and no note why", i)
				}

				c, ok := smp.Collections[collName]
				if !ok {
					if edge || !hasNotePrefix(res.Notes, "collStats items: failed at ") {
						t.Errorf("sample %d: no collStats of %s, and no note why", i, collName)
					}

					continue
				}

				withColl++

				if c["count"] < prevCount {
					t.Errorf("sample %d: count %d decreased from %d", i, c["count"], prevCount)
				}

				prevCount = c["count"]

				if m, ok := smp.Collections["never_created"]; ok && m["count"] != 0 {
					t.Errorf("sample %d: never_created = %v, want count 0", i, m)
				} else if !ok && (edge || !hasNotePrefix(res.Notes, "collStats never_created: failed at ")) {
					t.Errorf("sample %d: no collStats of never_created, and no note why", i)
				}
			}

			t.Logf("%d of %d samples have collStats of %s", withColl, len(res.Samples), collName)

			last := res.Samples[len(res.Samples)-1]
			if got := last.Collections[collName]["count"]; got != docs {
				t.Errorf("last count = %d, want %d", got, docs)
			}

			if got := last.DB["objects"]; got != docs {
				t.Errorf("last dbStats objects = %d, want %d", got, docs)
			}

			if last.Phase != "read" {
				t.Errorf("last Phase = %q, want read", last.Phase)
			}
		})
	}
}

// TestSamplerStopsPromptly checks that neither Stop nor a cancelled context
// waits for the next grid point of a long interval, and that a cancelled
// context skips the final sample.
func TestSamplerStopsPromptly(t *testing.T) {
	e := embeddedtest.Start(t, targets.EmbeddedOptions{})
	client := connect(t, e, 2)

	for _, tc := range []struct {
		name        string
		cancelFirst bool
		wantSamples int
	}{
		{"Stop", false, 2},             // baseline and final
		{"context cancelled", true, 1}, // baseline only
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()

			s := Start(ctx, Config{Client: client, Database: "bench", Interval: time.Hour})

			if tc.cancelFirst {
				cancel()

				select {
				case <-s.done:
				case <-time.After(5 * time.Second):
					t.Fatal("sampling goroutine still running 5s after the context was cancelled")
				}
			}

			begin := time.Now()
			res := s.Stop()

			if d := time.Since(begin); d > 2*time.Second {
				t.Errorf("Stop took %s", d)
			}

			if len(res.Samples) != tc.wantSamples {
				t.Errorf("%d samples, want %d", len(res.Samples), tc.wantSamples)
			}

			if res.IntervalS != 3600 {
				t.Errorf("IntervalS = %v, want 3600", res.IntervalS)
			}
		})
	}
}

// TestSamplerWithoutClient checks that a missing client gives an empty
// result with a note instead of a panic.
func TestSamplerWithoutClient(t *testing.T) {
	s := Start(t.Context(), Config{Database: "bench"})
	res := s.Stop()

	if len(res.Samples) != 0 || len(res.Supported) != 0 || len(res.Notes) != 1 {
		t.Errorf("result = %s, want no samples, nothing supported and one note", mustJSON(t, res))
	}

	if res.IntervalS != DefaultInterval.Seconds() {
		t.Errorf("IntervalS = %v, want the default %v", res.IntervalS, DefaultInterval.Seconds())
	}
}

// containsNote reports whether notes has one equal to want.
func containsNote(notes []string, want string) bool {
	for _, n := range notes {
		if n == want {
			return true
		}
	}

	return false
}

// hasNotePrefix reports whether notes has one starting with prefix.
func hasNotePrefix(notes []string, prefix string) bool {
	for _, n := range notes {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}

	return false
}

// mustJSON renders v as compact JSON for messages.
func mustJSON(t *testing.T, v any) string {
	t.Helper()

	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}

	return string(b)
}

package bench

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongobench/mongobench/internal/engine/runner"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/results/runlog"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/targets"
)

// TestRoundOrder checks the exact order of the cells: target by target,
// variant by variant in odd rounds, the mirror image in even ones.
func TestRoundOrder(t *testing.T) {
	t.Parallel()

	forward := []trialCell{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}}
	backward := slices.Clone(forward)
	slices.Reverse(backward)

	for r, want := range map[int][]trialCell{1: forward, 2: backward, 3: forward, 4: backward} {
		if got := roundOrder(2, 3, r); !slices.Equal(got, want) {
			t.Errorf("round %d: %v, want %v", r, got, want)
		}
	}

	if got := roundOrder(1, 1, 2); !slices.Equal(got, []trialCell{{0, 0}}) {
		t.Errorf("one cell: %v", got)
	}
}

// TestPlanMatrix checks which plans compare something, and so give a
// matrix rather than a single run.
func TestPlanMatrix(t *testing.T) {
	t.Parallel()

	one := &Compiled{}
	two := []targets.TargetSpec{{Kind: "a"}, {Kind: "b"}}

	tests := []struct {
		name string
		plan Plan
		want bool
	}{
		{"one variant, default target, one round", Plan{Variants: []*Compiled{one}, Rounds: 1}, false},
		{"one named target", Plan{Variants: []*Compiled{one}, Targets: two[:1], Rounds: 1}, false},
		{"rounds", Plan{Variants: []*Compiled{one}, Rounds: 3}, true},
		{"variants", Plan{Variants: []*Compiled{one, one}, Rounds: 1}, true},
		{"targets", Plan{Variants: []*Compiled{one}, Targets: two, Rounds: 1}, true},
	}

	for _, tt := range tests {
		if got := tt.plan.Matrix(); got != tt.want {
			t.Errorf("%s: Matrix() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestTrialNames checks where a comparison keeps its trials' run logs:
// beside the results file, and one file per trial whose name sorts in the
// order the trials ran.
func TestTrialNames(t *testing.T) {
	t.Parallel()

	for in, want := range map[string]string{
		"results/foo.json": "results/foo" + TrialsSuffix,
		"foo":              "foo" + TrialsSuffix,
		"a.b/c.d.json":     "a.b/c.d" + TrialsSuffix,
	} {
		if got := TrialsDirFor(in); got != want {
			t.Errorf("TrialsDirFor(%q) = %q, want %q", in, got, want)
		}
	}

	names := []string{trialLogName(10, 2, 0, 1), trialLogName(9, 2, 1, 0), trialLogName(0, 1, 0, 0)}
	if names[0] != "trial-00010-round-2-target-0-variant-1"+runlog.Suffix {
		t.Errorf("trial log name %q", names[0])
	}

	if sorted := slices.Sorted(slices.Values(names)); !slices.Equal(sorted, []string{names[2], names[1], names[0]}) {
		t.Errorf("trial logs sort as %v: not in the order they ran", sorted)
	}
}

// TestVariantName checks the name a trial's variant is recorded under.
func TestVariantName(t *testing.T) {
	t.Parallel()

	if got := variantName(&workload.Spec{Name: "w", Variant: "v"}); got != "v" {
		t.Errorf("named variant: %q", got)
	}

	if got := variantName(&workload.Spec{Name: "w"}); got != "w" {
		t.Errorf("the workload itself: %q", got)
	}
}

// TestShardCheck checks the refusals of a shard plan: bad input, one line.
func TestShardCheck(t *testing.T) {
	t.Parallel()

	tests := []struct {
		shard Shard
		want  string // "" when it is accepted
	}{
		{Shard{Index: 0, Count: 1, Wait: time.Second}, ""},
		{Shard{Index: 2, Count: 3, Wait: time.Second, AutoStart: true}, ""},
		{Shard{Index: 3, Count: 3, Wait: time.Second}, "shard 3/3: the index must be between 0 and 2"},
		{Shard{Index: -1, Count: 3, Wait: time.Second}, "shard -1/3: the index must be between 0 and 2"},
		{Shard{Index: 0, Count: 0, Wait: time.Second}, "shard 0/0: the index must be between 0 and -1"},
		{Shard{Index: 0, Count: 2, Wait: time.Second, AutoStart: true, NoSetup: true}, "with --shard-setup none give --start-at TIME"},
		{Shard{Index: 0, Count: 2}, "--shard-wait must be > 0"},
	}

	for _, tt := range tests {
		err := tt.shard.Check()

		if tt.want == "" {
			if err != nil {
				t.Errorf("%+v: %v", tt.shard, err)
			}

			continue
		}

		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want a one-line input error saying %q", tt.shard, err, tt.want)
		}
	}
}

// parseSpec parses a workload without compiling it.
func parseSpec(t *testing.T, text string) *workload.Spec {
	t.Helper()

	spec, errs := workload.Parse("w.yaml", []byte(text))
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	return spec
}

// TestShardCheckShares checks that a workload whose phase the shards cannot
// share is refused, naming the file, and that one they can is not.
func TestShardCheckShares(t *testing.T) {
	t.Parallel()

	spec := parseSpec(t, nullInsert) // concurrency 1

	if err := (&Shard{Index: 0, Count: 1, Wait: time.Second}).CheckShares(spec); err != nil {
		t.Errorf("one shard: %v", err)
	}

	err := (&Shard{Index: 1, Count: 2, Wait: time.Second}).CheckShares(spec)

	var ie *InputError
	if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), "w.yaml: ") || !strings.Contains(err.Error(), "shards") {
		t.Errorf("1 worker on 2 shards: %v, want an input error naming w.yaml", err)
	}
}

// TestSpecHash checks the hash that tells whether shards ran one workload:
// the same spec gives the same hash, any change another.
func TestSpecHash(t *testing.T) {
	t.Parallel()

	a, err := SpecHash(parseSpec(t, nullInsert))
	if err != nil {
		t.Fatal(err)
	}

	b, err := SpecHash(parseSpec(t, nullInsert))
	if err != nil {
		t.Fatal(err)
	}

	c, err := SpecHash(parseSpec(t, strings.Replace(nullInsert, "{n: 1}", "{n: 2}", 1)))
	if err != nil {
		t.Fatal(err)
	}

	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(a) || a != b || a == c {
		t.Errorf("hashes %s, %s (same spec), %s (another document)", a, b, c)
	}
}

// TestShardRecord checks the results file's record of a shard, and which
// shard sets the database up.
func TestShardRecord(t *testing.T) {
	t.Parallel()

	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

	tests := []struct {
		shard Shard
		mode  string
		sets  bool
	}{
		{Shard{Index: 0, Count: 2}, "", true},
		{Shard{Index: 1, Count: 2, StartAt: at}, "time", false},
		{Shard{Index: 0, Count: 2, AutoStart: true, StartAt: at}, "auto", true},
		{Shard{Index: 0, Count: 2, NoSetup: true, StartAt: at}, "time", false},
	}

	for _, tt := range tests {
		s := &shardRun{Shard: &tt.shard, hash: "abc"}

		got := s.record()
		want := result.Shard{Index: tt.shard.Index, Count: 2, StartAt: tt.shard.StartAt, StartAtMode: tt.mode, SeedScheme: result.SeedScheme, SpecSHA256: "abc"}

		if *got != want {
			t.Errorf("%+v: record %+v, want %+v", tt.shard, *got, want)
		}

		if s.sets() != tt.sets {
			t.Errorf("%+v: sets up %v, want %v", tt.shard, s.sets(), tt.sets)
		}
	}
}

// TestInFlightBound checks the most operations a phase can have in flight,
// which an interrupt's message quotes.
func TestInFlightBound(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name  string
		phase workload.Phase
		want  int
	}{
		{"closed loop", workload.Phase{Concurrency: 8}, 8},
		{"open loop", workload.Phase{Rate: 100, MaxInFlight: 64, Concurrency: 8}, 64},
		{"ramp of workers", workload.Phase{Concurrency: 2, Stages: []workload.Stage{{Concurrency: 4}, {Concurrency: 16}, {Concurrency: 1}}}, 16},
		{"background jobs", workload.Phase{Concurrency: 8, Background: []workload.Background{{MaxInFlight: 3}, {}}}, 8 + 3 + 1},
	}

	for _, tt := range tests {
		if got := inFlightBound(&tt.phase); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestCleanupBound checks how long the drop after a trial may take: longer
// after a completed trial, whose server is alive.
func TestCleanupBound(t *testing.T) {
	t.Parallel()

	if got := cleanupBound(&runner.PhaseResult{Status: runner.StatusCompleted}); got != liveCleanupTimeout {
		t.Errorf("completed: %s", got)
	}

	for _, final := range []*runner.PhaseResult{nil, {Status: runner.StatusAborted}, {Status: runner.StatusInterrupted}} {
		if got := cleanupBound(final); got != cleanupTimeout {
			t.Errorf("%+v: %s, want %s", final, got, cleanupTimeout)
		}
	}

	if cleanupTimeout >= liveCleanupTimeout {
		t.Errorf("a dead server's drop (%s) is given as long as a live one's (%s)", cleanupTimeout, liveCleanupTimeout)
	}
}

// TestCreatedCollections checks the collections a run's owner record
// lists: the workload's, and the shards' meeting place when sharded.
func TestCreatedCollections(t *testing.T) {
	t.Parallel()

	spec := &workload.Spec{Collections: []workload.Collection{{Name: "a"}, {Name: "b"}}}

	if got := createdCollections(spec, false); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("unsharded: %v", got)
	}

	if got := createdCollections(spec, true); !slices.Equal(got, []string{"a", "b", ShardCollection}) {
		t.Errorf("sharded: %v", got)
	}
}

// TestRefusal checks which errors are mongobench refusing to touch data
// that is not its own (bad input for the user to settle), wrapped or not.
func TestRefusal(t *testing.T) {
	t.Parallel()

	for _, err := range []error{
		&targets.NotOwnedError{DB: "d"},
		&targets.ForeignCollectionError{DB: "d", Collections: []string{"c"}},
		&targets.CollectionExistsError{DB: "d", Collection: "c"},
		fmt.Errorf("trial 1: %w", &targets.NotVerifiedError{DB: "d", Collection: "c"}),
	} {
		if !refusal(err) {
			t.Errorf("%T is not taken for a refusal", errors.Unwrap(err))
		}
	}

	for _, err := range []error{nil, errors.New("connection refused"), mongo.CommandError{Code: namespaceExists}} {
		if refusal(err) {
			t.Errorf("%v is taken for a refusal", err)
		}
	}
}

// TestVersionList checks the adapter versions as the results record them:
// sorted by name, whatever order the adapter sent them in.
func TestVersionList(t *testing.T) {
	t.Parallel()

	if got := versionList(nil); got != "no versions reported" {
		t.Errorf("none: %q", got)
	}

	if got := versionList(map[string]string{"node": "v22.1.0", "driver": "6.9.0", "bson": "6.8"}); got != "bson 6.8, driver 6.9.0, node v22.1.0" {
		t.Errorf("versions: %q", got)
	}
}

// TestFinishTrialsRefusals checks that finishing a comparison that left
// nothing to finish says so, naming the directory: one whose manifest was
// written before any trial ran, and one without a manifest.
func TestFinishTrialsRefusals(t *testing.T) {
	t.Parallel()

	dir := filepath.Join(t.TempDir(), "foo"+TrialsSuffix)
	skeleton := &result.Result{
		SchemaVersion: result.SchemaVersion, Status: result.StatusCompleted,
		Workload: result.Workload{Name: "w"}, StartedAt: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC),
		Matrix: &result.Matrix{
			Targets:  []result.MatrixTarget{{Name: "a", Kind: "uri"}, {Name: "b", Kind: "uri"}},
			Variants: []string{"w"}, Rounds: 3,
		},
	}

	if err := writeTrialsManifest(dir, skeleton); err != nil {
		t.Fatal(err)
	}

	if _, err := FinishTrials(t.Context(), dir); err == nil || !strings.Contains(err.Error(), dir+": no trial run log") {
		t.Errorf("no trial yet: %v", err)
	}

	none := filepath.Join(t.TempDir(), "none"+TrialsSuffix)
	if _, err := FinishTrials(t.Context(), none); err == nil || !strings.Contains(err.Error(), "none"+TrialsSuffix) {
		t.Errorf("no manifest: %v", err)
	}
}

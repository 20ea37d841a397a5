//go:build e2e

package cli

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/lab/historystore"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// TestHistoryStoreRoundTrip imports real results files (8 runs against the
// test server at 1ms, then 5 at 30ms) into a store in the embedded
// FerretDB, twice, and checks that the second import adds nothing, that
// history from the store prints and writes (--json) exactly what history
// from the files does, change points included, that a database holding
// anything else is refused, and that the password planted in the store's
// URI appears in no output, no --json file and no stored document.
func TestHistoryStoreRoundTrip(t *testing.T) {
	srv := startServer(t)

	u, err := url.Parse(srv.URI())
	if err != nil {
		t.Fatal(err)
	}

	// The embedded FerretDB takes the PLAIN mechanism with any password,
	// so the driver really sends the canary.
	storeURI := func(db string) string {
		return "mongodb://bench:" + canaryPlain + "@" + u.Host + "/" + db + "?authMechanism=PLAIN"
	}

	stepped, err := wiretest.Start(wiretest.Config{Latency: wiretest.Fixed(time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = stepped.Close() })

	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")

	if err := os.Mkdir(runs, 0o755); err != nil {
		t.Fatal(err)
	}

	const sha = "0123456789abcdef0123456789abcdef01234567"

	historyRuns(t, stepped, runs, "step", 1, 8, "v1", sha, "20")
	stepped.SetLatency(wiretest.Fixed(30 * time.Millisecond))
	historyRuns(t, stepped, runs, "step", 9, 5, "v2", sha, "20")

	var outputs []canaryRun

	expect := func(code int, args ...string) canaryRun {
		t.Helper()

		r := runWithEnv(t, nil, args...)
		outputs = append(outputs, r)

		if r.code != code {
			t.Fatalf("mongobench %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
		}

		assertNoStackTrace(t, r.stderr)

		return r
	}

	uri := storeURI("team_history")

	if r := expect(0, "history", "import", "--store", uri, runs); !strings.HasPrefix(r.stdout, "imported 13, already present 0") {
		t.Errorf("first import printed %q", r.stdout)
	}

	if r := expect(0, "history", "import", "--store", uri, runs); !strings.HasPrefix(r.stdout, "imported 0, already present 13") {
		t.Errorf("second import printed %q", r.stdout)
	}

	fromFiles, fromStore := filepath.Join(dir, "files.json"), filepath.Join(dir, "store.json")
	files := expect(0, "history", runs, "--json", fromFiles)
	store := expect(0, "history", "--store", uri, "--json", fromStore)

	if files.stdout != store.stdout {
		t.Errorf("history from the store prints\n%s\nfrom the files\n%s", store.stdout, files.stdout)
	}

	a, b := readHistoryJSON(t, fromFiles), readHistoryJSON(t, fromStore)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("--json from the store differs from --json from the files:\n%v\n%v", b, a)
	}

	// Not a vacuous equality: the history has its step.
	var doc struct {
		Series []struct {
			Runs    []any `json:"runs"`
			Metrics []struct {
				Operation    string `json:"operation"`
				Metric       string `json:"metric"`
				ChangePoints []struct {
					Run  int    `json:"run"`
					File string `json:"file"`
				} `json:"change_points"`
			} `json:"metrics"`
		} `json:"series"`
	}

	data, err := os.ReadFile(fromStore)
	if err != nil {
		t.Fatal(err)
	}

	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}

	found := false

	for _, s := range doc.Series {
		for _, m := range s.Metrics {
			if m.Operation == "read" && m.Metric == "p50" {
				for _, cp := range m.ChangePoints {
					found = found || (cp.Run >= 7 && cp.Run <= 9 && len(s.Runs) == 13)
				}
			}
		}
	}

	if !found {
		t.Errorf("history from the store has no change in read p50 at run 9 ±1:\n%s", store.stdout)
	}

	// A database that holds something else is refused, whatever the
	// command, in one line naming the reason; it is left as it was.
	c := connectClient(t, srv.URI())
	if _, err := c.Database("app").Collection("orders").InsertOne(t.Context(), bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}

	for _, args := range [][]string{
		{"history", "import", "--store", storeURI("app"), runs},
		{"history", "--store", storeURI("app")},
	} {
		r := expect(ExitBadInput, args...)
		if !strings.Contains(r.stderr, "not a mongobench history store") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%q on a foreign database: stderr %q, want one line saying it is not a store", args, r.stderr)
		}
	}

	if names, err := c.Database("app").ListCollectionNames(t.Context(), bson.D{}); err != nil || !reflect.DeepEqual(names, []string{"orders"}) {
		t.Errorf("the foreign database after the refusals: %q (%v), want only orders", names, err)
	}

	// A server that does not answer fails the command, in words without
	// the password.
	expect(ExitFailed, "history", "--store", "mongodb://bench:"+canaryPlain+"@127.0.0.1:1/h?authMechanism=PLAIN&serverSelectionTimeoutMS=300")

	// run --history-store records the finished run, the file as written.
	recorded := filepath.Join(runs, "step-14.json")
	r := expect(0, "run", "../../workloads/ycsb/c.yaml", "--uri", stepped.URI(), "--out", recorded, "--quiet",
		"--no-explain", "--server-stats-interval", "0", "--set", "recordcount=20", "--max-operations", "40",
		"--label", "v2", "--history-store", uri)

	if !strings.Contains(r.stderr, "Run recorded in the history store") {
		t.Errorf("run --history-store said nothing of the store:\n%s", r.stderr)
	}

	written, err := os.ReadFile(recorded)
	if err != nil {
		t.Fatal(err)
	}

	var rec struct {
		Results string `bson:"results"`
	}
	if err := c.Database("team_history").Collection(historystore.RunsCollection).FindOne(t.Context(), bson.D{{Key: "name", Value: recorded}}).Decode(&rec); err != nil {
		t.Fatalf("the recorded run: %v", err)
	}

	if rec.Results != string(written) {
		t.Errorf("the recorded run differs from its results file")
	}

	for _, r := range outputs {
		assertNoFragment(t, "stdout of "+strings.Join(r.args, " "), []byte(r.stdout))
		assertNoFragment(t, "stderr of "+strings.Join(r.args, " "), []byte(r.stderr))
	}

	for _, p := range []string{fromFiles, fromStore} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}

		assertNoFragment(t, p, data)
	}

	cur, err := c.Database("team_history").Collection(historystore.RunsCollection).Find(t.Context(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}

	var stored []bson.Raw
	if err := cur.All(t.Context(), &stored); err != nil {
		t.Fatal(err)
	}

	if len(stored) != 14 {
		t.Errorf("%d runs stored, want 14 (13 imported, 1 recorded by run)", len(stored))
	}

	for _, d := range stored {
		assertNoFragment(t, "a stored run", []byte(d.String()))
	}
}

// readHistoryJSON is a --json file as generic JSON.
func readHistoryJSON(t *testing.T, path string) any {
	t.Helper()

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}

	return v
}

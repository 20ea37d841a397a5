package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/results/runlog"
	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// spliceWorkload is a short run of many intervals against the null server.
const spliceWorkload = `name: splice
database: mongobench_splice
collections: [{name: items}]
run: {concurrency: 2, duration: 1500ms, warmup: 0s, interval: 100ms}
operations:
  - {name: get, op: findOne, collection: items, filter: {_id: {^int: {min: 1, max: 100}}}}
`

// TestFinishRefusesSplicedRunLogs runs the workload twice against the null
// test server and gives finish (and merge, which reads run logs the same
// way) the first run's log as it is, which it turns into exactly the
// results file the run wrote, and spliced: an interval of the second run
// renumbered to the next index, the same with its run id rewritten (caught
// by the gap in time), and the second run's header in place of the
// first's. Each splice is refused with exit code 2 and a one-line error
// naming the file and the line.
func TestFinishRefusesSplicedRunLogs(t *testing.T) {
	t.Parallel()

	srv, err := wiretest.Start(wiretest.Config{Latency: wiretest.Fixed(200 * time.Microsecond)})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { _ = srv.Close() })

	w := writeWorkload(t, spliceWorkload)
	dir := t.TempDir()

	logs := map[string][]string{}

	for _, name := range []string{"a", "b"} {
		out := filepath.Join(dir, name+".json")
		if code, _, stderr := runMain(t, "run", w, "--uri", srv.URI(), "--out", out, "-q", "--no-explain", "--server-stats-interval", "0"); code != 0 {
			t.Fatalf("run %s: exit code %d\n%s", name, code, stderr)
		}

		data, err := os.ReadFile(runlog.PathFor(out))
		if err != nil {
			t.Fatal(err)
		}

		logs[name] = strings.SplitAfter(string(data), "\n")
	}

	// The clean log: finish writes what run wrote.
	finished := filepath.Join(dir, "a-finished.json")
	if code, _, stderr := runMain(t, "finish", runlog.PathFor(filepath.Join(dir, "a.json")), "-o", finished); code != 0 {
		t.Fatalf("finish of a clean log: exit code %d\n%s", code, stderr)
	}

	want, _ := os.ReadFile(filepath.Join(dir, "a.json"))
	if got, _ := os.ReadFile(finished); len(want) == 0 || !bytes.Equal(got, want) {
		t.Errorf("finish of the run's own log differs from the results file the run wrote:\n%s\nwant\n%s", got, want)
	}

	a, b := logs["a"], logs["b"]
	lastA, lastB := lastInterval(t, a), lastInterval(t, b)
	next := recordField(t, a[lastA], "index") + 1
	runA, runB := recordField2(t, a[0], "run_id"), recordField2(t, b[0], "run_id")

	foreign := renumber(t, b[lastB-2], next)
	disguised := strings.Replace(foreign, `"run":"`+runB+`"`, `"run":"`+runA+`"`, 1)

	if runA == runB || disguised == foreign {
		t.Fatalf("run ids %q and %q: the runs cannot be told apart", runA, runB)
	}

	spliced := func(lines []string, at int, line string) []string {
		return append(append(append([]string{}, lines[:at]...), line), lines[at:]...)
	}

	line := func(n int) string { return ".runlog.jsonl:" + itoa(n) + ": " }

	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"foreign interval", spliced(a, lastA+1, foreign), line(lastA+2) + "interval " + itoa(next) + " belongs to run " + runB + ", not " + runA},
		{"foreign interval with the run id rewritten", spliced(a, lastA+1, disguised), line(lastA+2) + `phase "run": interval ` + itoa(next) + " starts "},
		{"foreign header", append([]string{b[0]}, a[1:]...), line(2) + "phase 0 belongs to run " + runA + ", not " + runB},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+runlog.Suffix)
		if err := os.WriteFile(path, []byte(strings.Join(tc.lines, "")), 0o600); err != nil {
			t.Fatal(err)
		}

		for _, args := range [][]string{{"finish", path, "-o", filepath.Join(dir, "x.json")}, {"merge", path, "-o", filepath.Join(dir, "x.json")}} {
			code, _, stderr := runMain(t, args...)
			errs := errorLines(stderr)

			if code != ExitBadInput || len(errs) != 1 || !strings.Contains(errs[0], path) || !strings.Contains(errs[0], strings.TrimPrefix(tc.want, ".runlog.jsonl")) {
				t.Errorf("%s: %s: exit code %d, stderr:\n%s\nwant exit code 2 and one error line naming %s and saying %q",
					tc.name, args[0], code, stderr, path, tc.want)
			}
		}

		if _, err := os.Stat(filepath.Join(dir, "x.json")); !os.IsNotExist(err) {
			t.Fatalf("%s: a results file was written from a spliced log (%v)", tc.name, err)
		}
	}
}

// lastInterval returns the index of the last interval line of the main
// phase ("run") in a run log's lines.
func lastInterval(t *testing.T, lines []string) int {
	t.Helper()

	last := -1

	for i, l := range lines {
		if strings.HasPrefix(l, `{"type":"interval"`) {
			last = i
		}
	}

	if last < 3 {
		t.Fatalf("run log with too few intervals: last at line %d", last+1)
	}

	return last
}

// recordField returns a number field of a record.
func recordField(t *testing.T, line, field string) int {
	t.Helper()

	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}

	var n int
	if err := json.Unmarshal(m[field], &n); err != nil {
		t.Fatalf("%s of %s: %v", field, line, err)
	}

	return n
}

// recordField2 returns a string field of a record.
func recordField2(t *testing.T, line, field string) string {
	t.Helper()

	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}

	var s string
	if err := json.Unmarshal(m[field], &s); err != nil || s == "" {
		t.Fatalf("%s of the record: %q, %v", field, s, err)
	}

	return s
}

// renumber gives an interval line another index, as a hand splice would.
func renumber(t *testing.T, line string, index int) string {
	t.Helper()

	old := `"index":` + itoa(recordField(t, line, "index")) + `,`
	if !strings.Contains(line, old) {
		t.Fatalf("no %s in %s", old, line)
	}

	return strings.Replace(line, old, `"index":`+itoa(index)+`,`, 1)
}

func itoa(n int) string { return strconv.Itoa(n) }

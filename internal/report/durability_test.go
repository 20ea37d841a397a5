package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
)

func durabilityResult() *result.Result {
	return &result.Result{Durability: []result.Durability{
		{Target: "pg_sync", Kind: "ferretdb-postgres", WriteConcern: "w:1", Crash: "SIGKILL of PostgreSQL", Acknowledged: 12100, Present: 12100, Unacknowledged: 400, RestartS: 1.25},
		{Target: "pg_async", Kind: "ferretdb-postgres", WriteConcern: "w:1", Crash: "SIGKILL of PostgreSQL", Acknowledged: 12000, Lost: 37, Present: 11963},
		{Target: "prod", Variant: "w1_j", Kind: "uri", WriteConcern: "w:1,j:true", Error: "a uri target is not crashed by mongobench; not verified here"},
	}}
}

// TestWriteDurability checks the terminal table: a line per check with its
// counts, the crash said once, a row without counts for a target not
// crashed, and the answer as the last line.
func TestWriteDurability(t *testing.T) {
	t.Parallel()

	var b bytes.Buffer
	WriteDurability(&b, durabilityResult())

	out := b.String()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")

	rows := map[string]string{}
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 0 {
			rows[f[0]] = strings.Join(f, " ")
		}
	}

	for name, want := range map[string]string{
		"pg_sync":   "pg_sync w:1 12,100 0 400 (0 present) 1.2s -",
		"pg_async":  "pg_async w:1 12,000 37 0 (0 present) 0.0s -",
		"prod/w1_j": "prod/w1_j w:1,j:true - - - - not checked: a uri target is not crashed by mongobench; not verified here",
	} {
		if rows[name] != want {
			t.Errorf("row %s = %q, want %q\n%s", name, rows[name], want, out)
		}
	}

	if n := strings.Count(out, "crash: SIGKILL of PostgreSQL"); n != 1 {
		t.Errorf("the crash is said %d times, want once:\n%s", n, out)
	}

	want := "Answer (acknowledged documents lost after a crash under load): pg_sync lost 0 of 12,100; pg_async lost 37 of 12,000; prod/w1_j not checked"
	if last := lines[len(lines)-1]; last != want {
		t.Errorf("last line = %q, want %q", last, want)
	}

	if md := DurabilityMarkdown(durabilityResult()); !strings.Contains(md, "| pg_async | w:1 | 12,000 | 37 |") || !strings.HasSuffix(md, want+"\n") {
		t.Errorf("Markdown:\n%s", md)
	}
}

func TestWriteDurabilityNothingWithoutAPhase(t *testing.T) {
	t.Parallel()

	var b bytes.Buffer
	WriteDurability(&b, &result.Result{})

	if b.Len() != 0 || DurabilityMarkdown(&result.Result{}) != "" {
		t.Errorf("wrote %q for a run without a durability phase", b.String())
	}
}

package analysis

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
)

// sidesRun is a one-phase run of workload with one interval per operation
// named in ops.
func sidesRun(workload string, ops ...string) *result.Result {
	r := &result.Result{Workload: result.Workload{Name: workload}}

	p := result.Phase{Name: result.PhaseRun, DurationS: 1, Intervals: []result.Interval{{}}}
	for _, o := range ops {
		p.Operations = append(p.Operations, result.Operation{Name: o, Count: 10})
	}

	r.Phases = []result.Phase{p}

	return r
}

func TestSidePaths(t *testing.T) {
	for _, tt := range []struct {
		arg  string
		want []string
	}{
		{"a.json", []string{"a.json"}},
		{"dir/", []string{"dir/"}},
		{"a.json, b.json,,c.json", []string{"a.json", "b.json", "c.json"}},
	} {
		if got := SidePaths(tt.arg); !slices.Equal(got, tt.want) {
			t.Errorf("SidePaths(%q) = %q, want %q", tt.arg, got, tt.want)
		}
	}
}

// TestSidesRunsOfOneSide: a side of several files has one run per file,
// labelled by its argument; the next side gets the next label.
func TestSidesRunsOfOneSide(t *testing.T) {
	var s Sides

	s.Add("base", []result.File{{Path: "b1.json", Result: sidesRun("w", "get")}, {Path: "b2.json", Result: sidesRun("w", "get")}})
	s.Add("new.json", []result.File{{Path: "new.json", Result: sidesRun("w", "get")}})

	if err := s.Check(); err != nil {
		t.Fatal(err)
	}

	if len(s.Files) != 2 || s.Files[0].Label != "A" || s.Files[1].Label != "B" {
		t.Fatalf("sides %+v", s.Files)
	}

	if s.Files[0].Path != "base" || len(s.Files[0].Runs) != 2 || len(s.Files[1].Runs) != 1 {
		t.Errorf("runs: A %s %d, B %d", s.Files[0].Path, len(s.Files[0].Runs), len(s.Files[1].Runs))
	}

	if len(s.Refused) != 0 || len(s.Warnings) != 0 {
		t.Errorf("refused %v, warnings %q", s.Refused, s.Warnings)
	}
}

// TestSidesRefuse: a comparison's file among several runs, and a run with
// nothing measured, cannot be compared; each refusal names its file.
func TestSidesRefuse(t *testing.T) {
	var s Sides

	matrix := sidesRun("w", "get")
	matrix.ResultKind = result.KindMatrix

	empty := sidesRun("w", "get")
	empty.Phases[0].Intervals = nil

	s.Add("x", []result.File{{Path: "m.json", Result: matrix}, {Path: "empty.json", Result: empty}, {Path: "ok.json", Result: sidesRun("w", "get")}})

	if len(s.Refused) != 2 {
		t.Fatalf("refused %v, want 2", s.Refused)
	}

	if !strings.Contains(s.Refused[0].Error(), "m.json") || !strings.Contains(s.Refused[0].Error(), "side of its own") {
		t.Errorf("matrix refusal: %v", s.Refused[0])
	}

	if !strings.Contains(s.Refused[1].Error(), "empty.json") || !strings.Contains(s.Refused[1].Error(), "no intervals") {
		t.Errorf("empty refusal: %v", s.Refused[1])
	}

	if len(s.Files) != 1 || len(s.Files[0].Runs) != 1 {
		t.Errorf("the readable run is still a side: %+v", s.Files)
	}
}

// TestSidesCheck: another workload is a warning while an operation is
// shared, and an error when none is.
func TestSidesCheck(t *testing.T) {
	var s Sides

	s.Add("a.json", []result.File{{Path: "a.json", Result: sidesRun("w", "get", "put")}})
	s.Add("b.json", []result.File{{Path: "b.json", Result: sidesRun("w2", "put")}, {Path: "b2.json", Result: sidesRun("w3", "put")}})

	if err := s.Check(); err != nil {
		t.Fatal(err)
	}

	if len(s.Warnings) != 2 || !strings.Contains(s.Warnings[0], `b2.json ran workload "w3"`) || !strings.Contains(s.Warnings[1], `the baseline "w"`) {
		t.Errorf("warnings %q", s.Warnings)
	}

	s.Add("c.json", []result.File{{Path: "c.json", Result: sidesRun("other", "scan")}})

	err := s.Check()
	if err == nil || !strings.Contains(err.Error(), "c.json") || !strings.Contains(err.Error(), "no operation in common") {
		t.Errorf("no common operation: %v", err)
	}
}

// TestReadSides reads real files: a directory side and a list side are
// read, a file that is no results file is named in Unread, and Complete
// then refuses the comparison, counting every file tried.
func TestReadSides(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, r *result.Result) string {
		path := filepath.Join(dir, name)
		if err := result.WriteFile(path, r); err != nil {
			t.Fatal(err)
		}

		return path
	}

	a := write("a.json", sidesRun("w", "get"))
	b1 := write("b1.json", sidesRun("w", "get"))
	b2 := write("b2.json", sidesRun("w", "get"))

	s, err := ReadSides(context.Background(), []string{a, b1 + "," + b2})
	if err != nil {
		t.Fatal(err)
	}

	if len(s.Files) != 2 || s.Tried != 3 || len(s.Unread) != 0 || s.Complete() != nil {
		t.Fatalf("sides %d, tried %d, unread %v, complete %v; want 2 sides of 3 files, all read", len(s.Files), s.Tried, s.Unread, s.Complete())
	}

	junk := filepath.Join(dir, "junk.json")
	if err := os.WriteFile(junk, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}

	s, err = ReadSides(context.Background(), []string{a, b1 + "," + junk})
	if err != nil {
		t.Fatal(err)
	}

	if len(s.Unread) != 1 || !strings.Contains(s.Unread[0].Error(), junk) {
		t.Fatalf("unread %v, want the junk file named", s.Unread)
	}

	if err := s.Complete(); err == nil || !strings.Contains(err.Error(), "1 of 3 results files could not be read") {
		t.Fatalf("Complete() = %v, want 1 of 3 unread", err)
	}
}

package result

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// legacyMatrix is a matrix results file written by mongobench before the
// result kind field existed (one variant on two embedded targets, two
// rounds, `mongobench run` at commit b3bc5f1): its target kind is "matrix",
// it has no "kind", and its cross-target verdicts name the targets
// "variants".
const legacyMatrix = "testdata/matrix-before-kind.json"

// TestReadLegacyMatrix reads the older file as a matrix result: the result
// kind is set from the legacy target kind, which is no longer presented as
// a target kind, and the file passes Check.
func TestReadLegacyMatrix(t *testing.T) {
	raw, err := os.ReadFile(legacyMatrix)
	if err != nil {
		t.Fatal(err)
	}

	// The fixture is what it claims to be.
	var head struct {
		Kind   *string `json:"kind"`
		Target Target  `json:"target"`
	}
	if err := json.Unmarshal(raw, &head); err != nil || head.Kind != nil || head.Target.Kind != KindMatrix {
		t.Fatalf("fixture: kind %v, target kind %q, err %v: not a file of the older form", head.Kind, head.Target.Kind, err)
	}

	r, err := Read(context.Background(), legacyMatrix)
	if err != nil {
		t.Fatal(err)
	}

	if r.ResultKind != KindMatrix || r.Kind() != KindMatrix || r.Target.Kind != "" {
		t.Errorf("read as kind %q (Kind() %q), target kind %q; want a matrix naming no target kind", r.ResultKind, r.Kind(), r.Target.Kind)
	}

	for i, tr := range r.Matrix.Trials {
		if tr.Result.Kind() != KindRun || tr.Result.ResultKind != KindRun {
			t.Errorf("trial %d: kind %q", i, tr.Result.ResultKind)
		}
	}

	if errs := r.Check(); len(errs) != 0 {
		t.Errorf("Check() = %v", errs)
	}

	if err := r.CheckContents(); err != nil {
		t.Errorf("CheckContents() = %v", err)
	}
}

// TestLegacyCrossTargetVerdicts reads the older file's verdicts that
// compare targets (under "variants") and rewrites them with the targets
// named as targets: no cell of a cross-target verdict says "variant", and
// reading the new form gives back the same verdicts.
func TestLegacyCrossTargetVerdicts(t *testing.T) {
	r, err := Read(context.Background(), legacyMatrix)
	if err != nil {
		t.Fatal(err)
	}

	var cross []MatrixVerdict

	for _, mv := range r.Matrix.Verdicts {
		if mv.ComparesTargets() {
			cross = append(cross, mv)
		}
	}

	if len(cross) == 0 {
		t.Fatal("the fixture has no verdict comparing targets")
	}

	for _, mv := range cross {
		if len(mv.Variants) != 2 || mv.Variants[0].Variant != "disk" || mv.Variants[1].Variant != "memory" {
			t.Fatalf("legacy verdict %s/%s read as %+v, want the cells of targets disk and memory", mv.Operation, mv.Metric, mv.Variants)
		}
	}

	path := filepath.Join(t.TempDir(), "new.json")
	if err := WriteFile(path, r); err != nil {
		t.Fatal(err)
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	var written struct {
		Kind   string `json:"kind"`
		Target struct {
			Kind string `json:"kind"`
		} `json:"target"`
		Matrix struct {
			Verdicts []struct {
				Target   string            `json:"target"`
				Variants []json.RawMessage `json:"variants"`
				Targets  []struct {
					Target  string  `json:"target"`
					Variant *string `json:"variant"`
				} `json:"targets"`
			} `json:"verdicts"`
		} `json:"matrix"`
	}
	if err := json.Unmarshal(data, &written); err != nil {
		t.Fatal(err)
	}

	if written.Kind != KindMatrix || written.Target.Kind != "" {
		t.Errorf("written with kind %q and target kind %q, want %q and none", written.Kind, written.Target.Kind, KindMatrix)
	}

	crossWritten := 0

	for _, v := range written.Matrix.Verdicts {
		if v.Target != CrossTarget {
			if len(v.Variants) == 0 || v.Targets != nil {
				t.Errorf("verdict on %s written with %d variants and targets %v", v.Target, len(v.Variants), v.Targets)
			}

			continue
		}

		crossWritten++

		if v.Variants != nil || len(v.Targets) != 2 || v.Targets[0].Target != "disk" || v.Targets[1].Target != "memory" {
			t.Errorf("cross-target verdict written with variants %s and targets %+v", v.Variants, v.Targets)
		}

		for _, c := range v.Targets {
			if c.Variant != nil {
				t.Errorf("target %s's cell also says variant %q", c.Target, *c.Variant)
			}
		}
	}

	if crossWritten != len(cross) {
		t.Errorf("%d cross-target verdicts written, %d read", crossWritten, len(cross))
	}

	back, err := Read(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}

	before, _ := json.Marshal(r.Matrix.Verdicts)
	after, _ := json.Marshal(back.Matrix.Verdicts)

	if !bytes.Equal(before, after) {
		t.Errorf("verdicts changed through a write and a read:\n%s\n%s", before, after)
	}

	if errs := back.Check(); len(errs) != 0 {
		t.Errorf("rewritten file: Check() = %v", errs)
	}
}

// TestTargetCellKeepsEveryField checks that a cross-target cell written
// and read back keeps every field of a CellVerdict, so that a field added
// to CellVerdict later cannot be lost by the target form.
func TestTargetCellKeepsEveryField(t *testing.T) {
	cell := CellVerdict{
		Variant: "memory", N: 6, Median: 1, Lo: 0.5, Hi: 2, Best: true, Ratio: 1.5, RatioLo: 1.2, RatioHi: 1.9,
		P: 0.01, Kind: verdict.Difference, Text: "1.5× slower",
	}
	in := MatrixVerdict{Target: CrossTarget, Operation: "add", Metric: "p50", Variants: []CellVerdict{cell}}

	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}

	if !strings.Contains(string(data), `"targets":[{"target":"memory",`) || strings.Contains(string(data), `"variant"`) {
		t.Errorf("written as %s", data)
	}

	var out MatrixVerdict
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}

	if len(out.Variants) != 1 || out.Variants[0] != cell {
		t.Errorf("read back as %+v, want %+v", out.Variants, cell)
	}

	both := []byte(`{"target":"*","operation":"add","metric":"p50","variants":[{"variant":"a"}],"targets":[{"target":"b"}]}`)
	if err := json.Unmarshal(both, &out); err == nil {
		t.Error("a verdict with both variants and targets was read")
	}
}

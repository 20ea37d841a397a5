package cli

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/stats/verdict"
	"github.com/mongobench/mongobench/internal/targets/pglaunch"
)

// TestRunMatrix runs three variants on two real targets (the embedded
// SQLite server and FerretDB on a launched PostgreSQL) and checks that the
// matrix is complete and its verdicts consistent: the variant doing ten
// times the work per operation is reported slower on both targets.
func TestRunMatrix(t *testing.T) {
	t.Parallel()

	targets := []string{"--target", "embedded"}

	if err := pglaunch.Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL is needed in CI: %v", err)
		}

		t.Logf("PostgreSQL not available, matrix on the embedded target only: %v", err)
	} else {
		targets = append(targets, "--target", "ferretdb-postgres:synchronous_commit=off,name=pg")
	}

	out := outPath(t)
	md := strings.TrimSuffix(out, ".json") + ".md"

	args := append([]string{"run", "testdata/matrix.yaml", "--out", out, "--markdown", md, "--quiet"}, targets...)

	code, stdout, stderr := runMain(t, args...)
	if code != ExitOK {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	res, err := result.Read(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}

	m := res.Matrix
	if m == nil {
		t.Fatal("no matrix in the results file")
	}

	nTargets := len(targets) / 2
	if len(m.Targets) != nTargets || len(m.Variants) != 3 || m.Rounds != 6 {
		t.Fatalf("matrix %d targets × %v × %d rounds", len(m.Targets), m.Variants, m.Rounds)
	}

	// Complete: every target × variant × round ran and measured exactly
	// max_operations, in interleaved order: the first round target by
	// target and variant by variant, every even round the one before it
	// backwards.
	cells := nTargets * 3
	if len(m.Trials) != cells*6 {
		t.Fatalf("%d trials, want %d", len(m.Trials), cells*6)
	}

	for i, tr := range m.Trials {
		round, pos := i/cells+1, i%cells
		if tr.Round != round {
			t.Errorf("trial %d is of round %d, want %d", i, tr.Round, round)
		}

		var wantTarget, wantVariant string

		switch {
		case round == 1:
			wantTarget, wantVariant = m.Targets[pos/3].Name, m.Variants[pos%3]
		case round%2 == 0:
			mirror := m.Trials[i-pos-1-pos] // the previous round, backwards
			wantTarget, wantVariant = mirror.Target, mirror.Variant
		default:
			same := m.Trials[i-2*cells] // as two rounds before
			wantTarget, wantVariant = same.Target, same.Variant
		}

		if tr.Target != wantTarget || tr.Variant != wantVariant {
			t.Errorf("trial %d is %s · %s, want %s · %s (interleaved order)", i, tr.Target, tr.Variant, wantTarget, wantVariant)
		}

		p := tr.Result.MainPhase()
		if p == nil || len(p.Operations) != 1 || p.Operations[0].Count != 40 {
			t.Errorf("trial %d (%s, %s, round %d) did not measure 40 operations: %+v", i, tr.Target, tr.Variant, tr.Round, p)
		}
	}

	for _, target := range m.Targets {
		if target.Error != "" {
			t.Errorf("target %s: %s", target.Name, target.Error)
		}

		tp := findVerdict(m, target.Name, "insert", "throughput")
		if tp == nil {
			t.Fatalf("no throughput verdict for %s", target.Name)
		}

		byName := map[string]result.CellVerdict{}
		for _, cv := range tp.Variants {
			byName[cv.Variant] = cv
		}

		// Six rounds of trials this short on a loaded machine can leave a
		// real difference undetected (the interval of six rounds spans all
		// of them), so the check is on the estimate and the direction: heavy
		// is clearly slower, and never judged faster.
		heavy := byName["heavy"]
		if heavy.Best || heavy.Ratio < 1.5 || heavy.Kind == verdict.Inconclusive ||
			(heavy.Kind == verdict.Difference && !strings.Contains(heavy.Text, "slower")) {
			t.Errorf("%s: heavy should be slower: %+v", target.Name, heavy)
		}

		// Identical variants differ only by chance: a false alarm is
		// possible (about 5%), an interval that rules out ratios below 1.5
		// is not.
		if tw := byName["light_twin"]; tw.Kind == verdict.Difference && tw.RatioLo > 1.5 {
			t.Errorf("%s: identical twin judged %s", target.Name, tw.Text)
		}
	}

	if !strings.Contains(stdout, "insert — throughput") || !strings.Contains(stdout, "95% CI") {
		t.Errorf("matrix not printed:\n%s", stdout)
	}

	data, err := os.ReadFile(md)
	if err != nil || !strings.Contains(string(data), "| variant |") {
		t.Errorf("markdown: %v\n%s", err, data)
	}
}

func findVerdict(m *result.Matrix, target, op, metric string) *result.MatrixVerdict {
	for i := range m.Verdicts {
		v := &m.Verdicts[i]
		if v.Target == target && v.Operation == op && v.Metric == metric {
			return v
		}
	}

	return nil
}

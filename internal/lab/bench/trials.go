package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/results/runlog"
)

// A comparison run keeps its trials' run logs in a directory beside its
// results file (Options.TrialLogs), each written as the trial runs, so that
// a comparison killed after hours loses only the trial it was in: finish of
// the directory (FinishTrials) rebuilds a results file of the completed
// trials. The directory holds the comparison's description (TrialsManifest,
// a matrix results file without trials, written once the targets are open)
// and one run log per trial, named by its place in the run's order.

// TrialsManifest is the name of the description of the comparison in a
// trials directory.
const TrialsManifest = "comparison.json"

// TrialsSuffix ends the name of a trials directory: results/foo.json keeps
// its trials in results/foo.trials.
const TrialsSuffix = ".trials"

// TrialsDirFor returns the trials directory that goes with a results file.
func TrialsDirFor(resultsPath string) string {
	return strings.TrimSuffix(resultsPath, filepath.Ext(resultsPath)) + TrialsSuffix
}

// trialLogName is the run log of the seq-th trial (from 0, in the order
// they ran), of round round on target t with variant v (indexes into the
// matrix's targets and variants).
func trialLogName(seq, round, t, v int) string {
	return fmt.Sprintf("trial-%05d-round-%d-target-%d-variant-%d%s", seq, round, t, v, runlog.Suffix)
}

// writeTrialsManifest creates the trials directory and describes the
// comparison in it.
func writeTrialsManifest(dir string, res *result.Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating the trials directory: %w", err)
	}

	skeleton := *res
	m := *res.Matrix
	m.Trials, m.Verdicts = nil, nil
	skeleton.Matrix = &m

	if err := result.WriteFile(filepath.Join(dir, TrialsManifest), &skeleton); err != nil {
		return fmt.Errorf("describing the comparison in %s: %w", dir, err)
	}

	return nil
}

// FinishTrials rebuilds the results of a comparison that did not end (it
// was killed) from its trials directory: every trial whose run log is
// complete; the finisher (package finish) gives it the verdicts they
// allow, as it does a comparison's that ended. The result has status
// incomplete, its reason saying how many trials it holds and which were
// left out. A directory without the comparison's description is refused.
func FinishTrials(ctx context.Context, dir string) (*result.Result, error) {
	res, err := result.Read(ctx, filepath.Join(dir, TrialsManifest))
	if err != nil {
		return nil, fmt.Errorf("%s: not a comparison's trials directory: %w", dir, err)
	}

	m := res.Matrix
	if m == nil {
		return nil, fmt.Errorf("%s: %s describes no comparison", dir, TrialsManifest)
	}

	names, err := filepath.Glob(filepath.Join(dir, "trial-*"+runlog.Suffix))
	if err != nil {
		return nil, err
	}

	slices.Sort(names)

	var skipped []string

	for _, name := range names {
		var seq, round, t, v int
		if _, err := fmt.Sscanf(filepath.Base(name), "trial-%d-round-%d-target-%d-variant-%d", &seq, &round, &t, &v); err != nil ||
			t < 0 || t >= len(m.Targets) || v < 0 || v >= len(m.Variants) {
			return nil, fmt.Errorf("%s: not a trial run log of this comparison (its name does not fit %s)", name, TrialsManifest)
		}

		tr, err := runlog.Build(ctx, name)
		if err != nil {
			return nil, err
		}

		if tr.Status == result.StatusIncomplete {
			skipped = append(skipped, filepath.Base(name))
			continue
		}

		tr.Workload.Source = "" // the matrix keeps the file's text once
		m.Trials = append(m.Trials, result.Trial{Target: m.Targets[t].Name, Variant: m.Variants[v], Round: round, Result: tr})
	}

	if len(m.Trials) == 0 && len(skipped) == 0 {
		return nil, errors.New(dir + ": no trial run log; the comparison ended before its first trial")
	}

	res.Status = result.StatusIncomplete
	res.StatusReason = fmt.Sprintf("the comparison was stopped before its end; rebuilt from %d completed trial(s) in %s", len(m.Trials), dir)

	if len(skipped) > 0 {
		res.StatusReason += fmt.Sprintf("; left out, cut short: %s", strings.Join(skipped, ", "))
	}

	for _, tr := range m.Trials {
		res.DurationS = max(res.DurationS, tr.Result.StartedAt.Sub(res.StartedAt).Seconds()+tr.Result.DurationS)
	}

	return res, nil
}

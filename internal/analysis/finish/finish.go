// Package finish turns a measured result into a finished one: its findings,
// its threshold outcomes, the error budget, a comparison's verdicts, and the
// status the command exits with.
//
// It exists so that `run`, `finish` (of a run log) and `merge` (of shards)
// cannot disagree about a result: each builds the measured result its own
// way (the engine, the run log, the shards' sum) and hands it to Finish,
// the one place that judges it. A run that breaks a threshold exits 99
// whichever of the three commands produced its results file.
//
// It sits above the results contract and analysis (whose checks it calls)
// and below the engine, targets and commands: it reads results and the
// workload's parsed rules, never a server.
package finish

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/threshold"
)

// Status is how a finished result ends, which a command maps to its exit
// code in one place: OK, Failed, ThresholdsFailed.
type Status int

const (
	// OK means the run ended and kept its error budget and thresholds (or
	// records them without gating, as a shard does).
	OK Status = iota
	// Failed means the run did not give a result: it was interrupted or
	// aborted, nothing succeeded, or more operations failed than
	// run.max_error_rate allows.
	Failed
	// ThresholdsFailed means the run gave a result, and a threshold of the
	// workload did not hold on it.
	ThresholdsFailed
)

// String names the status for messages and tests.
func (s Status) String() string {
	switch s {
	case OK:
		return "ok"
	case Failed:
		return "failed"
	case ThresholdsFailed:
		return "thresholds failed"
	}

	return fmt.Sprintf("Status(%d)", int(s))
}

// Outcome is what Finish decided about a result.
type Outcome struct {
	// Status is how the result ends.
	Status Status
	// Reason says why Status is not OK, in one sentence (a first error
	// on a line of its own after it); empty when OK.
	Reason string
	// Notes are things the user should be told even when Status is OK:
	// errors within the budget, thresholds a shard records without gating.
	Notes []string
}

// Options are what a command knows about a result that the result does
// not hold.
type Options struct {
	// Rules are the thresholds to check. Nil means the result's own
	// (see RulesOf); merge passes shard 0's, which the merged result
	// does not record.
	Rules []workload.ThresholdRule
	// FirstError is the run's first operation error, quoted in a
	// failure's reason; only a live run knows it.
	FirstError string
}

// Finish finishes res in place and says how it ends:
//
//   - findings, for the result and each trial of a comparison;
//   - thresholds, on a single run only (a comparison's trials are short
//     and its question is the comparison), recorded in res.Thresholds;
//   - a comparison's verdicts, judged by the workload's run.min_effect
//     and run.reference;
//   - the status: Failed for a run interrupted or aborted, one where no
//     measured operation succeeded, or one over run.max_error_rate;
//     otherwise ThresholdsFailed when a threshold failed, except for one
//     shard of a distributed run (its figures are its share of the load;
//     the merge of the shards gates), else OK.
//
// A result with status incomplete (rebuilt from the run log of a run that
// was killed) is judged on what it holds: its status alone is no failure.
//
// The error is for rules the result records that cannot be read again
// (a results file edited by hand): bad input, not a failed run.
func Finish(res *result.Result, opts Options) (Outcome, error) {
	set, err := settingsOf(res)
	if err != nil {
		return Outcome{}, err
	}

	res.Findings = analysis.Findings(res)

	if m := res.Matrix; m != nil {
		for i := range m.Trials {
			if tr := m.Trials[i].Result; tr != nil {
				tr.Findings = analysis.Findings(tr)
			}
		}

		m.Verdicts = analysis.MatrixVerdicts(m, analysis.JudgingOfSpec(res.Workload.Spec))

		return statusOnly(res), nil
	}

	rules := opts.Rules
	if rules == nil {
		if rules, err = RulesOf(res); err != nil {
			return Outcome{}, err
		}
	}

	res.Thresholds = nil
	if len(rules) > 0 {
		res.Thresholds = Thresholds(res, rules)
	}

	if out := statusOnly(res); out.Status != OK {
		out.Reason = withFirstError(out.Reason, opts.FirstError)
		return out, nil
	}

	var out Outcome

	if reason, note := errorBudget(res, set.Run.MaxErrorRate); reason != "" {
		return Outcome{Status: Failed, Reason: withFirstError(reason, opts.FirstError)}, nil
	} else if note != "" {
		out.Notes = append(out.Notes, note)
	}

	n := analysis.ThresholdsFailed(res.Thresholds)

	switch {
	case len(res.Thresholds) == 0:
	case res.Shard != nil && res.Merged == nil:
		out.Notes = append(out.Notes, "A shard's thresholds describe its share of the load only; 'mongobench merge' checks them on the merged result.")
	case n > 0:
		out.Status, out.Reason = ThresholdsFailed, fmt.Sprintf("%d of %d thresholds failed", n, len(res.Thresholds))
	}

	return out, nil
}

// Thresholds checks rules on res, one outcome per rule in their order. It
// is Finish's check, exported for the engine, which records the outcomes in
// a run's log as the run ends so that finish of the log reads the rules
// back in the workload's order (see RulesOf).
func Thresholds(res *result.Result, rules []workload.ThresholdRule) []result.ThresholdOutcome {
	return analysis.CheckThresholds(res, rules)
}

// statusOnly fails a result whose run did not end by itself.
func statusOnly(res *result.Result) Outcome {
	switch res.Status {
	case result.StatusInterrupted:
		if strings.HasPrefix(res.StatusReason, "interrupted") {
			return Outcome{Status: Failed, Reason: "run " + res.StatusReason} // "run interrupted by the user"
		}

		return Outcome{Status: Failed, Reason: "run interrupted" + because(res.StatusReason)}
	case result.StatusAborted:
		return Outcome{Status: Failed, Reason: "run aborted" + because(res.StatusReason)}
	}

	return Outcome{}
}

func because(reason string) string {
	if reason == "" {
		return ""
	}

	return ": " + reason
}

func withFirstError(reason, first string) string {
	if first == "" {
		return reason
	}

	return reason + "\nFirst error: " + first
}

// errorBudget counts the measured phases' operations (a unit's steps are
// counted as themselves, not again as the unit): a run where nothing
// succeeded is no result whatever the budget, and one whose failed share
// is above maxRate failed. Within the budget, note says how many failed.
func errorBudget(res *result.Result, maxRate float64) (reason, note string) {
	var (
		ok, bad  int64
		measured bool
	)

	for _, p := range res.Phases {
		if p.Excluded {
			continue
		}

		measured = true

		for _, o := range p.Operations {
			if o.Unit != "" {
				continue
			}

			ok += o.Count
			for _, n := range o.Errors {
				bad += n
			}
		}
	}

	switch {
	case ok == 0 && measured && bad > 0:
		return fmt.Sprintf("all %d operations failed; no operation succeeded in the measured phases", bad), ""
	case ok == 0 && measured:
		return "no operation succeeded in the measured phases", ""
	case bad == 0:
		return "", ""
	}

	rate := float64(bad) / float64(ok+bad)
	if rate > maxRate {
		return fmt.Sprintf("%d of %d operations failed (%.2f%%), above the workload's run.max_error_rate of %.2f%%",
			bad, ok+bad, 100*rate, 100*maxRate), ""
	}

	return "", fmt.Sprintf("%d operations failed (%.2f%%), within run.max_error_rate", bad, 100*rate)
}

// settings are the workload's settings Finish judges by, read from the
// result's own copy of the workload so that a results file or a run log
// is judged as the run was.
type settings struct {
	Run struct {
		MaxErrorRate float64 `json:"max_error_rate"`
		MinEffect    string  `json:"min_effect"`
		Reference    string  `json:"reference"`
	} `json:"run"`
	// Thresholds are selector → conditions, as a workload writes them.
	Thresholds map[string][]string `json:"thresholds"`
}

// settingsOf reads the settings from res.Workload.Spec: the parsed
// workload during a run, its JSON form once read from a file. A result
// without one is judged by the defaults (no errors tolerated).
func settingsOf(res *result.Result) (settings, error) {
	var s settings

	if res.Workload.Spec == nil {
		return s, nil
	}

	data, err := json.Marshal(res.Workload.Spec)
	if err != nil {
		return s, fmt.Errorf("the result's workload: %w", err)
	}

	if string(data) == "null" {
		return s, nil
	}

	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("the result's workload: %w", err)
	}

	return s, nil
}

// RulesOf returns the thresholds a result is checked on: those its
// outcomes record (a run's, in the workload's order, the limit exact), or,
// when it records none (the run log of a run killed before its end), the
// workload's as the result keeps them (ordered by selector: the results
// file's form of the workload keeps no other order).
func RulesOf(res *result.Result) ([]workload.ThresholdRule, error) {
	if len(res.Thresholds) > 0 {
		rules := make([]workload.ThresholdRule, 0, len(res.Thresholds))

		for _, o := range res.Thresholds {
			c, err := threshold.Parse(o.Condition)
			if err != nil {
				return nil, fmt.Errorf("threshold %q: %w", o.Condition, err)
			}

			c.Limit = o.Limit // the canonical text rounds it
			rules = append(rules, workload.ThresholdRule{Operation: o.Operation, Phase: writtenPhase(o), Condition: c, Text: o.Condition})
		}

		return rules, nil
	}

	set, err := settingsOf(res)
	if err != nil {
		return nil, err
	}

	return specRules(set.Thresholds)
}

// writtenPhase is the phase a recorded outcome's rule was written with:
// the outcome names the phase it was checked on, the main phase's name for
// a rule written without one, which its line ("✓ get p99 < 20ms ...", not
// "✓ get@run p99 < 20ms ...") tells apart. Checked again, the rule then
// gives the same line.
func writtenPhase(o result.ThresholdOutcome) string {
	_, line, ok := strings.Cut(o.Text, " ")
	if ok && o.Phase != "" && !strings.HasPrefix(line, o.Operation+"@"+o.Phase+" ") {
		return ""
	}

	return o.Phase
}

// specRules parses the workload's thresholds as a results file keeps them.
func specRules(m map[string][]string) ([]workload.ThresholdRule, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}

	slices.Sort(keys)

	var rules []workload.ThresholdRule

	for _, k := range keys {
		op, phase, _ := strings.Cut(k, "@")

		for _, text := range m[k] {
			c, err := threshold.Parse(text)
			if err != nil {
				return nil, fmt.Errorf("threshold %s: %q: %w", k, text, err)
			}

			rules = append(rules, workload.ThresholdRule{Operation: op, Phase: phase, Condition: c, Text: text})
		}
	}

	return rules, nil
}

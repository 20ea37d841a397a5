// Package merge adds up the results files of the shards of one distributed
// run (run --shard I/N) into one result, exactly: it adds the recorded
// latency histograms rather than averaging percentiles, sums counts, errors
// and documents, lays the shards' intervals on one wall-clock grid, and
// recomputes every summary (percentiles, means, rates) from the merged
// histograms, so the merged file is what one client applying the whole load
// would have recorded, and passes result.Check like any other.
package merge

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mongobench/mongobench/internal/results/result"
)

// Input is one results file to merge.
type Input struct {
	// Name is the file the result was read from, for messages and for
	// the merged file's record of its sources.
	Name string
	// Result is the shard's result.
	Result *result.Result
}

// InputError is a refusal caused by the inputs: they do not belong to one
// sharded run. Its message is one line naming the file.
type InputError struct{ msg string }

// Error returns the message.
func (e *InputError) Error() string { return e.msg }

func refuse(format string, args ...any) error {
	return &InputError{msg: fmt.Sprintf(format, args...)}
}

// Results merges the shards of one run. It refuses, with an *InputError,
// inputs that are not shards, shards of different runs (workload, seed
// scheme, shard count, start instant), duplicate shard indexes and missing
// ones; every shard from 0 to count-1 must be given exactly once.
func Results(inputs []Input) (*result.Result, error) {
	shards, err := check(inputs)
	if err != nil {
		return nil, err
	}

	first := shards[0].Result
	out := &result.Result{
		SchemaVersion:     result.SchemaVersion,
		MongobenchVersion: first.MongobenchVersion,
		Workload:          first.Workload,
		Target:            first.Target,
		Seed:              first.Seed,
		Status:            result.StatusCompleted,
		Explain:           first.Explain,
		Server:            first.Server,
		Merged: &result.Merged{
			Count:      first.Shard.Count,
			StartAt:    first.Shard.StartAt,
			SeedScheme: first.Shard.SeedScheme,
			SpecSHA256: first.Shard.SpecSHA256,
		},
	}
	out.Target.Notes = append(slices.Clone(first.Target.Notes),
		fmt.Sprintf("merged from %d shards; explain plans and server counters are shard 0's", len(shards)))

	var end time.Time

	for i, in := range shards {
		r := in.Result
		if i == 0 || r.StartedAt.Before(out.StartedAt) {
			out.StartedAt = r.StartedAt
		}

		if e := r.StartedAt.Add(seconds(r.DurationS)); e.After(end) {
			end = e
		}

		out.Concurrency += r.Concurrency
		out.Status = worse(out.Status, r.Status)

		if r.Status != result.StatusCompleted {
			reason := fmt.Sprintf("shard %d (%s): %s", r.Shard.Index, in.Name, r.Status)
			if r.StatusReason != "" {
				reason += ": " + r.StatusReason
			}

			out.StatusReason = joinReason(out.StatusReason, reason)
		}

		if r.MongobenchVersion != first.MongobenchVersion {
			out.Target.Notes = append(out.Target.Notes,
				fmt.Sprintf("shard %d ran mongobench %s, shard 0 ran %s", r.Shard.Index, r.MongobenchVersion, first.MongobenchVersion))
		}

		out.Merged.Sources = append(out.Merged.Sources, result.MergeSource{
			File: in.Name, Index: r.Shard.Index, Status: r.Status, StatusReason: r.StatusReason,
			StartedAt: r.StartedAt, DurationS: r.DurationS, Concurrency: r.Concurrency,
			TargetURI: r.Target.URI, ServerVersion: r.Target.ServerVersion,
		})
	}

	out.DurationS = end.Sub(out.StartedAt).Seconds()

	interval, err := intervalOf(shards[0])
	if err != nil {
		return nil, err
	}

	for _, name := range phaseNames(shards) {
		p, err := mergePhase(name, interval, shards)
		if err != nil {
			return nil, err
		}

		out.AddPhase(p)
	}

	return out, nil
}

// check verifies that the inputs are the shards of one run, each once, and
// returns them ordered by shard index.
func check(inputs []Input) ([]Input, error) {
	if len(inputs) == 0 {
		return nil, refuse("merge: no results files given")
	}

	for _, in := range inputs {
		r := in.Result
		switch {
		case r == nil:
			return nil, refuse("%s: no result", in.Name)
		case r.Matrix != nil:
			return nil, refuse("%s: a comparison (matrix) result cannot be merged; merge the shards of one run", in.Name)
		case r.Merged != nil:
			return nil, refuse("%s: already a merged result; merge the shards' own files", in.Name)
		case r.Shard == nil:
			return nil, refuse("%s: not a shard of a distributed run (no shard record); run each shard with --shard I/N", in.Name)
		}
	}

	first := inputs[0]
	f := first.Result.Shard

	byIndex := make([]*Input, f.Count)

	for i := range inputs {
		in := &inputs[i]
		s := in.Result.Shard

		switch {
		case s.Count != f.Count:
			return nil, refuse("%s: shard of a %d-shard run, but %s is of a %d-shard run", in.Name, s.Count, first.Name, f.Count)
		case s.SpecSHA256 != f.SpecSHA256:
			return nil, refuse("%s: ran a different workload than %s (spec hash %.12s, not %.12s)", in.Name, first.Name, s.SpecSHA256, f.SpecSHA256)
		case s.SeedScheme != f.SeedScheme:
			return nil, refuse("%s: seed scheme %q differs from %s's %q", in.Name, s.SeedScheme, first.Name, f.SeedScheme)
		case !s.StartAt.Equal(f.StartAt):
			return nil, refuse("%s: started at %s, but %s at %s: not the same run", in.Name, stamp(s.StartAt), first.Name, stamp(f.StartAt))
		case s.Index < 0 || s.Index >= s.Count:
			return nil, refuse("%s: shard index %d is outside 0..%d", in.Name, s.Index, s.Count-1)
		case byIndex[s.Index] != nil:
			return nil, refuse("%s: shard %d/%d is given twice (also %s)", in.Name, s.Index, s.Count, byIndex[s.Index].Name)
		}

		byIndex[s.Index] = in
	}

	var missing []string

	out := make([]Input, 0, len(byIndex))

	for i, in := range byIndex {
		if in == nil {
			missing = append(missing, fmt.Sprint(i))
			continue
		}

		out = append(out, *in)
	}

	if len(missing) > 0 {
		return nil, refuse("merge: shard %s of %d missing (given: %d file(s), first %s)", strings.Join(missing, ", "), f.Count, len(inputs), first.Name)
	}

	return out, nil
}

// stamp formats an instant for messages, "none" for the zero time.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "no common instant"
	}

	return t.UTC().Format(time.RFC3339Nano)
}

// worse returns the status that says more went wrong.
func worse(a, b string) string {
	rank := func(s string) int {
		switch s {
		case result.StatusAborted:
			return 3
		case result.StatusIncomplete:
			return 2
		case result.StatusInterrupted:
			return 1
		}

		return 0
	}

	if rank(b) > rank(a) {
		return b
	}

	return a
}

func joinReason(a, b string) string {
	if a == "" {
		return b
	}

	return a + "; " + b
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// phaseNames lists the phases of every shard in the order they ran: shard 0's
// (the only one that loads), then any another shard has that it lacks.
func phaseNames(shards []Input) []string {
	var names []string

	for _, in := range shards {
		for _, p := range in.Result.Phases {
			if !slices.Contains(names, p.Name) {
				names = append(names, p.Name)
			}
		}
	}

	return names
}

// intervalOf reads the run's interval length (run.interval) from the
// recorded workload.
func intervalOf(in Input) (time.Duration, error) {
	// The spec is whatever JSON form the result came in (a map read from
	// a results file, raw JSON built from a run log): read it as JSON.
	var spec struct {
		Run struct {
			Interval string `json:"interval"`
		} `json:"run"`
	}

	if data, err := json.Marshal(in.Result.Workload.Spec); err == nil {
		_ = json.Unmarshal(data, &spec)
	}

	text := spec.Run.Interval

	d, err := time.ParseDuration(text)
	if err != nil || d <= 0 {
		return 0, refuse("%s: workload.spec.run.interval %q is not a duration", in.Name, text)
	}

	return d, nil
}

package report

import (
	"slices"
	"sort"
	"strings"

	"github.com/mongobench/mongobench/internal/units"

	"github.com/mongobench/mongobench/internal/result"
)

// The report groups a run's findings by collection and cause and ranks the
// groups by the time they cost. The terminal's grouping lives in
// internal/analysis (findgroup.go); this one is computed here from the
// results file alone until the two are given one home.

// findingGroup is the findings of one cause on one collection.
type findingGroup struct {
	Collection string
	Cause      string
	Operations string
	Count      int
	// Cost is the time spent in the operations concerned (successful
	// operations' count × mean latency over the measured phases), the
	// rank of the group; "–" when the findings name no operation.
	Cost  string
	costS float64
	Texts []string
}

// findingCause names what a finding is about, from its text as the
// findings are written (see internal/cli's findings).
func findingCause(f result.Finding) string {
	t := strings.ToLower(f.Text)

	switch {
	case strings.Contains(t, "collection scan") || strings.Contains(t, "collscan"):
		return "collection scan"
	case strings.Contains(t, "examined"):
		return "heavy examination"
	case strings.Contains(t, "errors in"):
		return "errors"
	case strings.HasPrefix(t, "background job"):
		return "background schedule not kept"
	case strings.Contains(t, "phase:") || strings.Contains(t, "schedule"):
		return "schedule not kept"
	case strings.HasPrefix(t, "server counters"):
		return "server counters"
	case f.Operation != "":
		return "query plan"
	default:
		return "other"
	}
}

// groupFindings groups r's findings by collection and cause, the groups
// that cost the most time first.
func groupFindings(r *result.Result) []findingGroup {
	if len(r.Findings) == 0 {
		return nil
	}

	collOf := map[string]string{}
	for _, o := range readSpecCollections(r) {
		collOf[o[0]] = o[1]
	}

	for _, e := range r.Explain {
		if e.Collection != "" {
			collOf[e.Operation] = e.Collection
		}
	}

	// Time spent per operation over the measured phases, in seconds.
	spent := map[string]float64{}

	for _, p := range r.Phases {
		if p.Excluded || isLoad(&p) {
			continue
		}

		for _, o := range p.Operations {
			spent[o.Name] += float64(o.Count) * o.LatencyUS.Mean / 1e6
		}
	}

	var groups []*findingGroup

	ops := map[*findingGroup][]string{}

	for _, f := range r.Findings {
		coll := collOf[f.Operation]
		if coll == "" {
			coll = "–"
		}

		cause := findingCause(f)

		i := slices.IndexFunc(groups, func(g *findingGroup) bool { return g.Collection == coll && g.Cause == cause })
		if i < 0 {
			groups = append(groups, &findingGroup{Collection: coll, Cause: cause})
			i = len(groups) - 1
		}

		g := groups[i]
		g.Count++
		g.Texts = append(g.Texts, f.Text)

		if f.Operation != "" && !slices.Contains(ops[g], f.Operation) {
			ops[g] = append(ops[g], f.Operation)
			g.costS += spent[f.Operation]
		}
	}

	out := make([]findingGroup, len(groups))

	for i, g := range groups {
		g.Operations = strings.Join(ops[g], ", ")

		g.Cost = "–"
		if len(ops[g]) > 0 {
			g.Cost = units.Micros(g.costS * 1e6)
		}

		out[i] = *g
	}

	sort.SliceStable(out, func(i, j int) bool { return out[i].costS > out[j].costS })

	return out
}

// readSpecCollections returns each operation's name and collection from the
// run's workload spec.
func readSpecCollections(r *result.Result) [][2]string {
	var out [][2]string

	var spec struct {
		Operations []struct {
			Name       string `json:"name"`
			Collection string `json:"collection"`
		} `json:"operations"`
	}

	if !decodeSpec(r.Workload.Spec, &spec) {
		return nil
	}

	for _, o := range spec.Operations {
		out = append(out, [2]string{o.Name, o.Collection})
	}

	return out
}

package analysis

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/opkind"
	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// planEvidence is what the server's explain says it did for the
// operations of one compared phase, in words ("explain: sorted_indexed
// SCAN events on events, no index; …"), and whether the phase is an index
// tweak the server did not do: unused is true when the phase compares a
// collection the workload indexes with one it does not, and no operation
// of the phase used an index. Empty
// when the results hold no plan for these operations (writes, a server
// without explain).
func planEvidence(res *result.Result, ops []string) (text string, unused bool) {
	indexed := indexedCollections(res)

	var parts, plans, commands []string

	readsIndexed, readsPlain, usedIndex := false, false, false

	for _, name := range ops {
		k := slices.IndexFunc(res.Explain, func(e result.Explain) bool { return e.Operation == name && e.Error == "" })
		if k < 0 {
			continue
		}

		e := res.Explain[k]

		plan := strings.Join(e.Stages, " > ")
		if plan == "" {
			plan = "plan"
		}

		part := fmt.Sprintf("%s on %s", plan, e.Collection)

		switch {
		case e.Index != "":
			part += ", index " + e.Index
			usedIndex = true
		default:
			part += ", no index"
		}

		if e.DocsExamined >= 0 {
			part += fmt.Sprintf(", %d documents examined", e.DocsExamined)
		}

		if e.Pushdown != nil {
			part += ", filter pushed down: " + yesNo(e.Pushdown["filter"])
		}

		if indexed[e.Collection] {
			readsIndexed = true
		} else {
			readsPlain = true
		}

		parts = append(parts, name+" "+part)
		plans = append(plans, part)
		commands = append(commands, name+" "+e.Command)
	}

	if len(parts) == 0 {
		return "", false
	}

	// The same plan on every side: what differs is the command itself,
	// which is then the evidence (findOne sends singleBatch: true where
	// find().limit(1) does not; nothing else).
	if len(plans) > 1 && !slices.ContainsFunc(plans, func(p string) bool { return p != plans[0] }) {
		return "explain: the same plan for " + strings.Join(ops, " and ") + " (" + plans[0] + "); as sent: " +
			strings.Join(commands, "; "), readsIndexed && readsPlain && !usedIndex
	}

	return "explain: " + strings.Join(parts, "; "), readsIndexed && readsPlain && !usedIndex
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}

	return "no"
}

// indexedCollections are the workload's collections that declare an
// index, from the workload the results record.
func indexedCollections(res *result.Result) map[string]bool {
	var spec struct {
		Collections []struct {
			Name    string            `json:"name"`
			Indexes []json.RawMessage `json:"indexes"`
		} `json:"collections"`
	}

	if b, err := json.Marshal(res.Workload.Spec); err == nil {
		_ = json.Unmarshal(b, &spec)
	}

	out := map[string]bool{}

	for _, c := range spec.Collections {
		if len(c.Indexes) > 0 {
			out[c.Name] = true
		}
	}

	return out
}

// whereIndexShows says, for the plan format of a server that used no
// index, where the index would be used: the formats are FerretDB's, whose
// v1 backends use no secondary index for these queries.
func whereIndexShows(res *result.Result) string {
	format := ""
	if res != nil && len(res.Explain) > 0 {
		format = res.Explain[0].Format
	}

	switch format {
	case "ferretdb-sqlite":
		return "FerretDB's SQLite backend uses no secondary index; on mongod (--target mongod, or --uri) the index is used"
	case "ferretdb-postgresql":
		return "FerretDB v1 on PostgreSQL uses none either (it pushes down equality filters only, as JSONB containment tests its indexes do not serve); on mongod (--target mongod, or --uri) the index is used"
	default:
		return "the server's plan used no index"
	}
}

// answerGroups is the one-line answer of a block of several questions,
// its last line: per group (a phase of a single run, a comparison group
// of variants on a target), named by its label, its difference, or that
// there is none, or that the server did not do what the tweak is about
// (with the explain evidence above it, and where it would show).
func (b *Block) answerGroups(res *result.Result, groups []BlockGroup, labels []string, unused []bool, extra ...string) string {
	worse, better := b.Figure.worse()

	var parts, same, negligible, short []string

	for i, g := range groups {
		// A group with an answer of its own (a decode-time ranking, a
		// growth fit) answers in its own words; the block does not
		// repeat it in ratios.
		if g.Answer != "" {
			continue
		}

		phase := labels[i]

		var diff []string

		inconclusive, meaningless := false, true

		for _, l := range g.Lines[1:] {
			meaningless = meaningless && l.Kind == verdict.NoDifference && strings.HasPrefix(l.Verdict, "no meaningful difference")

			switch l.Kind {
			case verdict.Difference:
				word, r, lo, hi := worse, l.Ratio, l.RatioLo, l.RatioHi
				if r < 1 {
					word, r, lo, hi = better, 1/r, 1/hi, 1/lo
				}

				diff = append(diff, fmt.Sprintf("%s %s %s than %s (95%% CI %s)", l.Name, verdict.FormatRatio(r), word, g.Lines[0].Name,
					verdict.FormatInterval(lo, hi)))
			case verdict.Inconclusive:
				inconclusive = true
			}
		}

		switch {
		case len(diff) > 0:
			parts = append(parts, phase+": "+strings.Join(diff, ", "))
		case i < len(unused) && unused[i]:
			parts = append(parts, phase+": no index was used on either side (explain), so the index cannot show here: "+whereIndexShows(res))
		case inconclusive:
			short = append(short, phase)
		case meaningless:
			negligible = append(negligible, phase)
		default:
			same = append(same, phase)
		}
	}

	if len(negligible) > 0 {
		parts = append(parts, "no meaningful difference (the interval within the minimum effect): "+strings.Join(negligible, ", "))
	}

	if len(same) > 0 {
		parts = append(parts, "no significant difference: "+strings.Join(same, ", "))
	}

	if len(short) > 0 {
		parts = append(parts, "inconclusive (too few intervals): "+strings.Join(short, ", "))
	}

	parts = append(parts, extra...)

	if len(parts) == 0 {
		return ""
	}

	return "Answer: " + strings.Join(parts, "; ")
}

// specOperation is what readBackEvidence reads of a workload's operation.
type specOperation struct {
	Name       string `json:"name"`
	Op         string `json:"op"`
	Collection string `json:"collection"`
	Filter     any    `json:"filter"`
}

// readBackEvidence is what the read-back phases (verdict: false) of a run
// found that bears on a tweak: a full read of a capped collection that
// returned more documents than its max says the server does not trim the
// collection as it inserts, so a capped insert did no extra work.
func readBackEvidence(res *result.Result, j Judging) []string {
	var spec struct {
		Collections []struct {
			Name   string `json:"name"`
			Capped bool   `json:"capped"`
			Max    int64  `json:"max"`
		} `json:"collections"`
		Operations []specOperation `json:"operations"`
	}

	if b, err := json.Marshal(res.Workload.Spec); err == nil {
		_ = json.Unmarshal(b, &spec)
	}

	var out []string

	for _, p := range res.Phases {
		if p.Excluded || j.judged(p.Name) {
			continue
		}

		for _, o := range p.Operations {
			k := slices.IndexFunc(spec.Operations, func(op specOperation) bool { return op.Name == o.Name })
			if k < 0 || spec.Operations[k].Op != opkind.Find || !emptyFilter(spec.Operations[k].Filter) {
				continue
			}

			coll := spec.Operations[k].Collection

			for _, c := range spec.Collections {
				if c.Name == coll && c.Capped && c.Max > 0 && o.Count > 0 && o.Docs/o.Count > c.Max {
					out = append(out, fmt.Sprintf("%s (read back): %s holds %d documents, over its max of %d, so this server does not remove the oldest as it inserts",
						p.Name, coll, o.Docs/o.Count, c.Max))
				}
			}
		}
	}

	return out
}

// emptyFilter reports whether a find's filter selects every document.
func emptyFilter(f any) bool {
	if f == nil {
		return true
	}

	m, ok := f.(map[string]any)

	return ok && len(m) == 0
}

package result

import (
	"bytes"
	"encoding/json"

	"github.com/mongobench/mongobench/internal/spec/opkind"
)

// VerifyPhase is the name of the phase that reads back what a run wrote
// (see workloads/studies/write-durability.yaml): the documents its find
// operations return are those present at the end.
const VerifyPhase = "verify"

// Verification compares, for one collection, the documents the run's
// inserts had acknowledged with the documents a verify phase found there.
type Verification struct {
	// Target and Variant name a matrix cell; both are empty for a single
	// run.
	Target  string `json:"target,omitempty"`
	Variant string `json:"variant,omitempty"`
	// Trials is the number of runs summed (1 for a single run).
	Trials     int    `json:"trials"`
	Collection string `json:"collection"`
	// Acknowledged is the documents written by successful insert
	// operations into Collection before the verify phase.
	Acknowledged int64 `json:"acknowledged"`
	// Present is the documents the verify phase's finds returned.
	Present int64 `json:"present"`
	// Lost is Acknowledged − Present when positive: acknowledged writes
	// that were not found.
	Lost int64 `json:"lost"`
}

// specOps is the part of a workload spec the verification needs: each
// operation's kind and collection. The spec is read through JSON because a
// results file holds it as generic JSON.
type specOps struct {
	Operations []struct {
		Name       string `json:"name"`
		Op         string `json:"op"`
		Collection string `json:"collection"`
	} `json:"operations"`
}

func readSpecOps(spec any) specOps {
	var out specOps

	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(spec); err != nil {
		return out
	}

	_ = json.Unmarshal(buf.Bytes(), &out) // a spec without operations verifies nothing

	return out
}

// Verifications returns the write verification of a run with a verify
// phase: per collection its finds read, the documents acknowledged by the
// inserts into it before that phase and the documents found. A run
// without a verify phase, or whose spec does not say what its operations
// are, has none.
func (r *Result) Verifications() []Verification {
	ops := readSpecOps(r.Workload.Spec)
	kind := map[string]string{}
	coll := map[string]string{}

	for _, o := range ops.Operations {
		kind[o.Name], coll[o.Name] = o.Op, o.Collection
	}

	var out []Verification

	for i := range r.Phases {
		p := &r.Phases[i]
		if p.Name != VerifyPhase || p.Excluded {
			continue
		}

		for _, o := range p.Operations {
			if !opkind.Lists(kind[o.Name]) || coll[o.Name] == "" {
				continue
			}

			v := Verification{Trials: 1, Collection: coll[o.Name], Present: o.Docs}

			for _, before := range r.Phases[:i] {
				if before.Excluded {
					continue
				}

				for _, w := range before.Operations {
					if opkind.Inserts(kind[w.Name]) && coll[w.Name] == v.Collection {
						v.Acknowledged += w.Docs
					}
				}
			}

			v.Lost = max(0, v.Acknowledged-v.Present)
			out = append(out, v)
		}
	}

	return out
}

// Verifications sums the write verification of a matrix's trials per
// target, variant and collection, in trial order.
func (m *Matrix) Verifications() []Verification {
	var out []Verification

	for _, tr := range m.Trials {
		if tr.Result == nil {
			continue
		}

		for _, v := range tr.Result.Verifications() {
			i := 0
			for i < len(out) && (out[i].Target != tr.Target || out[i].Variant != tr.Variant || out[i].Collection != v.Collection) {
				i++
			}

			if i == len(out) {
				out = append(out, Verification{Target: tr.Target, Variant: tr.Variant, Collection: v.Collection})
			}

			out[i].Trials++
			out[i].Acknowledged += v.Acknowledged
			out[i].Present += v.Present
			out[i].Lost += v.Lost
		}
	}

	return out
}

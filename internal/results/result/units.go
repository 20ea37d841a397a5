package result

import "fmt"

// executions is the number of times an operation ran and was measured:
// successes and failures.
func executions(op *Operation) int64 {
	n := op.Count
	for _, v := range op.Errors {
		n += v
	}
	return n
}

// failures is the number of failed executions.
func failures(op *Operation) int64 {
	var n int64
	for _, v := range op.Errors {
		n += v
	}
	return n
}

// checkUnits verifies the measured units of a phase (Operation.Unit)
// against their steps. A unit is recorded only when every one of its steps
// was, so each step ran at least as often as the unit times the number of
// times the unit lists it, and the unit failed no more often than its steps
// did in all. Equality is not required: a stop can cut an iteration after
// some of its steps were measured, and a step may also run outside the unit.
func (c *checker) checkUnits(where string, p *Phase) {
	byName := make(map[string]*Operation, len(p.Operations))
	for i := range p.Operations {
		byName[p.Operations[i].Name] = &p.Operations[i]
	}

	for i := range p.Operations {
		u := &p.Operations[i]
		opWhere := fmt.Sprintf("%s: operation %s", where, u.Name)

		switch u.Unit {
		case "":
			if len(u.Steps) > 0 {
				c.addf("%s: steps without a unit", opWhere)
			}
			continue
		case UnitIteration, UnitComposite:
		case UnitDecode:
			if len(u.Steps) != 1 {
				c.addf("%s: a decode unit has one step, not %d", opWhere, len(u.Steps))
				continue
			}
		default:
			c.addf("%s: unit %q is not %q, %q or %q", opWhere, u.Unit, UnitIteration, UnitComposite, UnitDecode)
			continue
		}

		if len(u.Steps) == 0 {
			c.addf("%s: a %s unit without steps", opWhere, u.Unit)
			continue
		}

		times := map[string]int64{}
		var stepFailures int64
		for _, name := range u.Steps {
			st := byName[name]
			switch st {
			case nil:
				c.addf("%s: step %q is not an operation of the phase", opWhere, name)
				return
			case u:
				c.addf("%s: the unit lists itself as a step", opWhere)
				return
			}
			if times[name] == 0 {
				stepFailures += failures(st)
			}
			times[name]++
		}

		n := executions(u)
		for name, k := range times {
			if got := executions(byName[name]); got < k*n {
				c.addf("%s: %d executions, but its step %s ran only %d times (listed %d times)", opWhere, n, name, got, k)
			}
		}
		if f := failures(u); f > stepFailures {
			c.addf("%s: %d failed executions, but its steps failed only %d times", opWhere, f, stepFailures)
		}

		for n := range p.Intervals {
			if ops := p.Intervals[n].Operations; i < len(ops) && ops[i].Unit != u.Unit {
				c.addf("%s: interval %d: unit %q, the phase has %q", opWhere, n, ops[i].Unit, u.Unit)
			}
		}
	}
}

// checkCompareOn verifies that the figure the workload compares on is
// measured in some phase of a run result.
func (c *checker) checkCompareOn(r *Result) {
	name := r.Workload.CompareOn
	if name == "" || len(r.Phases) == 0 {
		return
	}
	for i := range r.Phases {
		for j := range r.Phases[i].Operations {
			if r.Phases[i].Operations[j].Name == name {
				return
			}
		}
	}
	c.addf("workload compare_on %q is not an operation of any phase", name)
}

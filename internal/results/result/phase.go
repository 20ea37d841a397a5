package result

import "strings"

// IsLoad reports whether p loaded the initial data set rather than
// measured the workload: its load model is PhaseLoad, or it is named
// PhaseLoad (results files older than Phase.Model) or "load:STEP" (one
// load step of a workload with several). Summaries, findings, comparison
// blocks and the main phase leave such phases out: their operations are
// the loader's inserts, not the workload's requests. It is the one copy
// of this rule.
func (p *Phase) IsLoad() bool {
	return p.Model == PhaseLoad || p.Name == PhaseLoad || strings.HasPrefix(p.Name, PhaseLoad+":")
}

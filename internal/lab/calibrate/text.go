package calibrate

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// WriteText prints the report for a terminal; its last line is the answer:
// the measured false-positive rates beside what the method states, and the
// power.
func (r *Report) WriteText(w io.Writer) {
	c := r.Config

	fmt.Fprintf(w, "Calibration against %s\n", r.Against)
	fmt.Fprintf(w, "workload %q, %d A/A experiments, %d A/B experiments per effect, %d gate pairs; %d rounds, %s trials\n\n",
		c.Spec.Name, c.AA, c.AB, c.GatePairs, c.Rounds, c.Trial)

	fmt.Fprintf(w, "A/A verdicts (one server under two names, %d rounds each):\n", c.Rounds)
	fmt.Fprintf(w, "  \"difference\" in %s; the method states at most %.1f%% per verdict\n", r.AA, 100*r.Stated)

	metrics := slices.Sorted(func(yield func(string) bool) {
		for m := range r.AAByMetric {
			if !yield(m) {
				return
			}
		}
	})
	for _, m := range metrics {
		fmt.Fprintf(w, "    %-10s %s\n", m, r.AAByMetric[m])
	}

	for _, pw := range r.Power {
		fmt.Fprintf(w, "\nPlanted %.0f%% p50 difference: a second server replying in %s, measured p50 %.2f× the first's:\n",
			100*pw.Effect, pw.Delay.Round(time.Microsecond), pw.Ratio)
		fmt.Fprintf(w, "  found (p50 \"difference\", the right way) in %s experiments\n", pw.Found)
	}

	if len(r.Power) == 0 && len(c.Effects) > 0 {
		fmt.Fprintln(w, "\nPlanted difference: not measured (it needs the built-in test server, whose delay calibration sets)")
	}

	fmt.Fprintf(w, "\nSmallest p50 increase %d rounds detect with 80%% power: %s\n", c.Rounds, resolveText(r))

	gates := make([]string, len(c.Gates))
	for i, g := range c.Gates {
		gates[i] = "'" + g.Expr + "'"
	}

	fmt.Fprintf(w, "\nGate %s, %d runs a side, the sides run one after the other:\n", strings.Join(gates, " "), c.RunsPerSide)
	fmt.Fprintf(w, "  failed in %s A/A pairs\n", r.Gate)

	fmt.Fprintln(w)
	fmt.Fprintln(w, r.Summary())
}

// Summary is the answer in one line.
func (r *Report) Summary() string {
	p := func(c Count) string {
		if c.N == 0 {
			return "not measured"
		}

		return fmt.Sprintf("%.1f%% (%d/%d)", 100*float64(c.K)/float64(c.N), c.K, c.N)
	}

	s := fmt.Sprintf("On this machine: false \"difference\" %s of verdicts (stated ≤ %.1f%%), gate false failures %s",
		p(r.AA), 100*r.Stated, p(r.Gate))
	for _, pw := range r.Power {
		s += fmt.Sprintf(", power for a %.0f%% p50 difference %s", 100*pw.Effect, p(pw.Found))
	}

	return s + "."
}

func resolveText(r *Report) string {
	switch {
	case math.IsNaN(r.Resolve):
		return "not measured (no A/A rounds with values)"
	case math.IsInf(r.Resolve, 1):
		return "none below 10× (the rounds are too noisy)"
	}

	s := fmt.Sprintf("%.1f%%", 100*r.Resolve)
	if !math.IsNaN(r.ResolveLo) {
		hi := fmt.Sprintf("%.1f%%", 100*r.ResolveHi)
		if math.IsInf(r.ResolveHi, 1) {
			hi = "over 1000%"
		}

		s += fmt.Sprintf(" (95%% CI %.1f%%–%s)", 100*r.ResolveLo, hi)
	}

	return s
}

package cli

import (
	"fmt"
	"io"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/results/result"
)

// printFindings writes the top findings under the tables, grouped by
// collection and cause and ranked by the time they cost (see
// analysis.GroupFindings), so that one cause is said once.
func printFindings(w io.Writer, res *result.Result) {
	const top = 8

	n := 0

	for _, g := range analysis.GroupFindings(res) {
		if g.Severity != "warning" {
			continue
		}

		if n == 0 {
			fmt.Fprintln(w, "\nFindings:")
		}

		if n == top {
			fmt.Fprintln(w, "  … more in the results file")
			break
		}

		fmt.Fprintf(w, "  ! %s\n", g.Text)

		n++
	}
}

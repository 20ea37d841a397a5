package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/mongobench/mongobench/internal/results/result"
)

// printVerification writes the write verification of a run or a matrix
// with a verify phase (see result.Verification): per collection (and
// matrix cell) the documents acknowledged, present and lost. It writes
// nothing when there is none.
func printVerification(w io.Writer, res *result.Result) {
	var rows []result.Verification
	if res.Matrix != nil {
		rows = res.Matrix.Verifications()
	} else {
		rows = res.Verifications()
	}

	if len(rows) == 0 {
		return
	}

	fmt.Fprintln(w, "\nWrite verification (documents acknowledged by inserts vs found by the verify phase)")

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tvariant\tcollection\ttrials\tacknowledged\tpresent\tlost\t")

	for _, v := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t\n", orDash(v.Target), orDash(v.Variant), v.Collection, v.Trials, v.Acknowledged, v.Present, v.Lost)
	}

	_ = tw.Flush()
}

// orDash shows an empty cell as "-".
func orDash(s string) string {
	if s == "" {
		return "-"
	}

	return s
}

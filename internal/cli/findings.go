package cli

import (
	"fmt"
	"strings"

	"github.com/mongobench/mongobench/internal/result"
)

// printFindings writes the top findings under the tables.
func printFindings(w interface{ Write([]byte) (int, error) }, fs []result.Finding) {
	const top = 8

	n := 0

	for _, f := range fs {
		if f.Severity != "warning" {
			continue
		}

		if n == 0 {
			fmt.Fprintln(w, "\nFindings:")
		}

		if n == top {
			fmt.Fprintln(w, "  … more in the results file")
			break
		}

		text := strings.TrimSpace(f.Text)
		if f.Operation != "" {
			text = f.Operation + ": " + text
		}

		fmt.Fprintf(w, "  ! %s\n", text)

		n++
	}
}

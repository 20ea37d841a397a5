package analysis

import (
	"fmt"
	"strings"

	"github.com/mongobench/mongobench/internal/stats/verdict"
)

// decodeAnswer words a decode-time ranking as the answer to its question,
// "what does loading a document cost my client": every contender's decode
// time per document, then each one's cost over the reference with its
// interval (the block's own comparison, not a second one). It is the
// group's last line, so that a run's output ends with it.
func decodeAnswer(fig Figure, lines []BlockLine) string {
	if len(lines) < 2 {
		return ""
	}

	values := make([]string, 0, len(lines))
	for _, l := range lines {
		values = append(values, l.Name+" "+l.Value)
	}

	ref := lines[0].Name
	clauses := []string{fmt.Sprintf("Answer: %s: %s", fig, strings.Join(values, ", "))}

	for _, l := range lines[1:] {
		clauses = append(clauses, decodeClause(l, ref))
	}

	return strings.Join(clauses, "; ")
}

// decodeClause is one contender's cost over the reference ref in words.
func decodeClause(l BlockLine, ref string) string {
	if l.Cost == nil {
		return fmt.Sprintf("%s against %s: %s", l.Name, ref, l.Verdict)
	}

	// CostText is "+1.2µs/doc (95% CI +1.1µs/doc to +1.3µs/doc)".
	switch {
	case l.Cost.Kind == verdict.Difference && l.Cost.Estimate > 0:
		return fmt.Sprintf("%s decoding costs %s more than %s", l.Name, l.CostText, ref)
	case l.Cost.Kind == verdict.Difference:
		return fmt.Sprintf("%s decoding costs %s less than %s", l.Name, strings.TrimPrefix(l.CostText, "−"), ref)
	case l.Cost.Kind == verdict.NoDifference:
		return fmt.Sprintf("%s decoding: no significant difference from %s (%s)", l.Name, ref, l.CostText)
	default:
		return fmt.Sprintf("%s against %s: %s", l.Name, ref, l.CostText)
	}
}

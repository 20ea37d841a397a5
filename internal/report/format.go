package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mongobench/mongobench/internal/base/units"
)

// latencyCell is units.Micros, or "-" when the operation never completed
// (count 0): its latencies are zeros standing for nothing, whereas a
// measured 0µs is a value. The dash is the analysis tables' mark for no
// data (analysis.TableCell), so that the terminal, Markdown and the HTML
// page show a missing latency the same way. It is the one copy of this
// rule, used by the terminal's summary and the page alike.
func latencyCell(count int64, us float64) string {
	if count == 0 {
		return "-"
	}

	return units.Micros(us)
}

// formatRate writes operations per second.
func formatRate(v float64) string {
	switch {
	case v >= 100:
		return groupDigits(int64(math.Round(v)))
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// formatSeconds writes a length of time given in seconds.
func formatSeconds(s float64) string {
	switch {
	case s < 60:
		return strconv.FormatFloat(s, 'f', 1, 64) + " s"
	default:
		return time.Duration(s * float64(time.Second)).Round(time.Second).String()
	}
}

// groupDigits writes an integer with thousands separators.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)

	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}

	var b strings.Builder

	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}

		b.WriteRune(c)
	}

	if neg {
		return "-" + b.String()
	}

	return b.String()
}

// formatTime writes a timestamp in UTC to the second.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return "–"
	}

	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// errorKinds returns the kinds of errs with a non-zero count, most frequent
// first, then by name.
func errorKinds(errs map[string]int64) []string {
	kinds := make([]string, 0, len(errs))

	for k, v := range errs {
		if v != 0 {
			kinds = append(kinds, k)
		}
	}

	sort.Slice(kinds, func(i, j int) bool {
		if errs[kinds[i]] != errs[kinds[j]] {
			return errs[kinds[i]] > errs[kinds[j]]
		}

		return kinds[i] < kinds[j]
	})

	return kinds
}

// errorTotal sums error counts.
func errorTotal(errs map[string]int64) int64 {
	var n int64
	for _, v := range errs {
		n += v
	}

	return n
}

// errorsList lists error counts by kind ("timeout: 3"), most frequent
// first, or just "0".
func errorsList(errs map[string]int64) []string {
	kinds := errorKinds(errs)
	if len(kinds) == 0 {
		return []string{"0"}
	}

	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s: %s", k, groupDigits(errs[k]))
	}

	return parts
}

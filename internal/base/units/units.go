// Package units formats measured quantities for people, the same way in the
// terminal, the comparison tables and the HTML report.
package units

import "fmt"

// Micros formats a latency given in microseconds with a human unit: µs
// below a millisecond, ms below a second, s above.
func Micros(us float64) string {
	switch {
	case us < 1000:
		return fmt.Sprintf("%.0fµs", us)
	case us < 1e6:
		return fmt.Sprintf("%.2fms", us/1000)
	default:
		return fmt.Sprintf("%.2fs", us/1e6)
	}
}

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

// Bytes formats a byte count in binary units: "812 B", "3.5 KiB", "64 MiB",
// with one decimal unless the value is whole. It is the one size format
// of the messages, the terminal's tables and the HTML report.
func Bytes(n int64) string {
	const unit = 1024

	if n > -unit && n < unit {
		return fmt.Sprintf("%d B", n)
	}

	f, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB", "TiB", "PiB", "EiB"} {
		if f > -unit && f < unit {
			break
		}

		f, suffix = f/unit, s
	}

	if f == float64(int64(f)) {
		return fmt.Sprintf("%d %s", int64(f), suffix)
	}

	return fmt.Sprintf("%.1f %s", f, suffix)
}

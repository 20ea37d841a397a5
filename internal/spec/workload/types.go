package workload

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
)

// Duration is a time.Duration written as "15s", "500ms" or "1m30s".
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String formats the duration the way it is written in workload files.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as a string, so results stay readable.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

func (d *Duration) decodeNode(n *yaml.Node, path string) *yamlpos.Error {
	if n.Kind != yaml.ScalarNode {
		return yamlpos.At(n, path, "must be a duration such as 15s or 500ms")
	}

	if n.Tag == "!!int" && n.Value == "0" {
		*d = 0
		return nil
	}

	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return yamlpos.At(n, path, "%q is not a duration (write it with a unit, such as 15s or 500ms)", n.Value)
	}

	if v < 0 {
		return yamlpos.At(n, path, "must not be negative")
	}

	*d = Duration(v)

	return nil
}

// W is a write concern's w: a number of members or a tag such as "majority".
type W struct {
	// N is the number of members, used when Tag is empty.
	N int

	// Tag is "majority" or a custom tag set name.
	Tag string
}

// String formats w as MongoDB shows it.
func (w W) String() string {
	if w.Tag != "" {
		return w.Tag
	}

	return strconv.Itoa(w.N)
}

// MarshalJSON writes w as a number or a string, as MongoDB does.
func (w W) MarshalJSON() ([]byte, error) {
	if w.Tag != "" {
		return json.Marshal(w.Tag)
	}

	return json.Marshal(w.N)
}

func (w *W) decodeNode(n *yaml.Node, path string) *yamlpos.Error {
	if n.Kind != yaml.ScalarNode {
		return yamlpos.At(n, path, `must be a number of members or a tag such as "majority"`)
	}

	switch n.Tag {
	case "!!int":
		var i int
		if err := n.Decode(&i); err != nil || i < 0 {
			return yamlpos.At(n, path, "must be a number >= 0")
		}

		*w = W{N: i}
	case "!!str":
		if n.Value == "" {
			return yamlpos.At(n, path, "must not be empty")
		}

		*w = W{Tag: n.Value}
	default:
		return yamlpos.At(n, path, `must be a number of members or a tag such as "majority", not %s`, describe(n))
	}

	return nil
}

// Label is a short human-readable form used in tables, e.g. "w:1,j:true".
func (wc *WriteConcern) Label() string {
	if wc == nil {
		return "default"
	}

	s := ""
	if wc.W != nil {
		s = "w:" + wc.W.String()
	}

	if wc.J != nil {
		if s != "" {
			s += ","
		}

		s += fmt.Sprintf("j:%t", *wc.J)
	}

	if s == "" {
		return "default"
	}

	return s
}

// Rate is a number of operations per second, written "2000/s", "90/m",
// "5/h" or as a plain number of operations per second.
type Rate float64

// PerSecond returns the rate in operations per second.
func (r Rate) PerSecond() float64 { return float64(r) }

// String formats the rate as "2000/s".
func (r Rate) String() string { return strconv.FormatFloat(float64(r), 'g', -1, 64) + "/s" }

// MarshalJSON writes the rate in operations per second.
func (r Rate) MarshalJSON() ([]byte, error) { return json.Marshal(float64(r)) }

func (r *Rate) decodeNode(n *yaml.Node, path string) *yamlpos.Error {
	const hint = `must be a rate such as "2000/s", "90/m" or a number of operations per second`

	if n.Kind != yaml.ScalarNode {
		return yamlpos.At(n, path, hint)
	}

	num, unit, hasUnit := strings.Cut(n.Value, "/")

	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return yamlpos.At(n, path, "%q: %s", n.Value, hint)
	}

	if hasUnit {
		per := map[string]float64{"s": 1, "m": 60, "h": 3600, "ms": 0.001}[strings.TrimSpace(unit)]
		if per == 0 {
			return yamlpos.At(n, path, "%q: unknown unit %q (use /s, /m, /h or /ms)", n.Value, unit)
		}

		v /= per
	}

	if v < 0 {
		return yamlpos.At(n, path, "must not be negative")
	}

	*r = Rate(v)

	return nil
}

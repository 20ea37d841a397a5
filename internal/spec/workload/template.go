package workload

import (
	"bytes"
	"encoding/json"
	"strconv"

	"go.yaml.in/yaml/v4"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
)

// Template is a YAML node holding a document template (a document, filter,
// update, pipeline, command, index keys or variables). It stays a YAML node,
// with its positions, because the datagen package compiles it; it is a type
// of its own so that results files show it as ordinary JSON in written
// order, not as a YAML node structure.
type Template yaml.Node

// Node returns the template as the YAML node it is.
func (t *Template) Node() *yaml.Node { return (*yaml.Node)(t) }

// maxTemplateDepth bounds nesting when converting to JSON, so that a YAML
// alias cycle cannot recurse forever.
const maxTemplateDepth = 100

// MarshalJSON writes the template as JSON, keeping the key order of the file
// (index keys and sorts depend on it) and the generators as written.
func (t *Template) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := writeJSON(&b, t.Node(), 0); err != nil {
		return nil, err
	}

	return b.Bytes(), nil
}

func writeJSON(b *bytes.Buffer, n *yaml.Node, depth int) error {
	n = yamlpos.Resolve(n)
	if n == nil || depth > maxTemplateDepth {
		b.WriteString("null")
		return nil
	}

	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			b.WriteString("null")
			return nil
		}

		return writeJSON(b, n.Content[0], depth+1)
	case yaml.MappingNode:
		b.WriteByte('{')

		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}

			k, _ := json.Marshal(n.Content[i].Value)
			b.Write(k)
			b.WriteByte(':')

			if err := writeJSON(b, n.Content[i+1], depth+1); err != nil {
				return err
			}
		}

		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')

		for i, item := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}

			if err := writeJSON(b, item, depth+1); err != nil {
				return err
			}
		}

		b.WriteByte(']')
	default:
		return writeScalar(b, n)
	}

	return nil
}

func writeScalar(b *bytes.Buffer, n *yaml.Node) error {
	switch n.Tag {
	case "!!null":
		b.WriteString("null")
		return nil
	case "!!bool", "!!int", "!!float":
		var v any
		if err := n.Decode(&v); err == nil {
			if f, ok := v.(float64); ok {
				// JSON has no NaN or infinities: keep them as text.
				s := strconv.FormatFloat(f, 'g', -1, 64)
				if _, err := strconv.ParseFloat(s, 64); err != nil || s == "NaN" || s == "+Inf" || s == "-Inf" {
					v = n.Value
				}
			}

			out, err := json.Marshal(v)
			if err == nil {
				b.Write(out)
				return nil
			}
		}
	}

	out, err := json.Marshal(n.Value)
	if err != nil {
		return err
	}

	b.Write(out)

	return nil
}

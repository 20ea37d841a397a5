package kube

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// WriteYAML writes the objects as YAML documents separated by "---", in
// apply order, ready for `kubectl apply -f -`.
//
// The API structs marshal a few empty fields the API server fills in
// (status: {}, creationTimestamp: null); they are left out, so that what a
// person reads is what was asked for.
func (m *Manifests) WriteYAML(w io.Writer) error {
	var b bytes.Buffer

	for i, obj := range m.Objects() {
		doc, err := marshal(obj)
		if err != nil {
			return err
		}

		if i > 0 {
			b.WriteString("---\n")
		}

		b.Write(doc)
	}

	_, err := w.Write(b.Bytes())

	return err
}

// marshal is yaml.Marshal of obj without its empty server-filled fields.
func marshal(obj any) ([]byte, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding %T: %w", obj, err)
	}

	var tree map[string]any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return nil, fmt.Errorf("encoding %T: %w", obj, err)
	}

	pruneEmpty(tree)

	return yaml.Marshal(tree)
}

// pruneEmpty removes, at any depth, the keys whose value is null or an
// empty object: status, creationTimestamp and resources the structs always
// write. Empty lists and strings are kept: none is written by default, so
// one that appears was meant.
func pruneEmpty(tree map[string]any) {
	for k, v := range tree {
		switch v := v.(type) {
		case nil:
			delete(tree, k)
		case map[string]any:
			pruneEmpty(v)

			if len(v) == 0 && k != "emptyDir" {
				delete(tree, k)
			}
		case []any:
			for _, e := range v {
				if m, ok := e.(map[string]any); ok {
					pruneEmpty(m)
				}
			}
		}
	}
}

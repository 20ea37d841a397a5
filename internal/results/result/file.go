package result

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mongobench/mongobench/internal/base/atomicfile"
	"github.com/mongobench/mongobench/internal/base/inputfile"

	"github.com/mongobench/mongobench/internal/base/redact"
)

// WriteFile writes r to path as indented JSON, atomically: the data goes to
// a temporary file in the same directory, which is synced and then renamed
// over path, so readers see either the old file or the complete new one and
// a failed write never leaves a partial file behind. Missing parent
// directories are created.
//
// Everything written goes through the same masking as Sanitize, so no
// password reaches the file whatever field it got into; a zero
// SchemaVersion is written as SchemaVersion. r itself is not modified.
func WriteFile(path string, r *Result) error {
	data, err := Marshal(r)
	if err != nil {
		return fmt.Errorf("write results file %s: %w", path, err)
	}
	return atomicfile.WriteBytes(path, data)
}

// Marshal returns the content WriteFile writes, for callers that send the
// results elsewhere (standard output with `run -o -`).
func Marshal(r *Result) ([]byte, error) {
	if r == nil {
		return nil, errors.New("nil result")
	}
	out := withKinds(r)
	switch out.SchemaVersion {
	case 0:
		out.SchemaVersion = SchemaVersion
	case SchemaVersion:
	default:
		return nil, fmt.Errorf("schema_version %d, this mongobench writes only version %d",
			out.SchemaVersion, SchemaVersion)
	}
	out.Target.URI = redact.URI(out.Target.URI)

	raw, err := json.Marshal(&out)
	if err != nil {
		return nil, err
	}
	clean, err := sanitizeJSON(raw, redact.Known{})
	if err != nil {
		return nil, err
	}
	var indented, buf bytes.Buffer
	if err := json.Indent(&indented, clean, "", "  "); err != nil {
		return nil, err
	}
	json.HTMLEscape(&buf, indented.Bytes()) // as json.Marshal writes strings
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// ReadFile reads and parses a results file. It rejects files without a
// schema_version or with a version other than SchemaVersion, naming the file
// in the error, rather than misreading them. It does not verify the
// numbers; call Check for that.
func ReadFile(path string) (*Result, error) {
	return Read(context.Background(), path)
}

// Read is ReadFile under a context: cancelling ctx stops a read that waits,
// e.g. on a named pipe, with an error that wraps the context's cause. Files
// over inputfile.DefaultLimit are refused.
func Read(ctx context.Context, path string) (*Result, error) {
	data, err := inputfile.Read(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("read results file: %w", err)
	}
	var head struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("results file %s is not valid JSON: %w", path, err)
	}
	switch {
	case head.SchemaVersion == nil:
		return nil, fmt.Errorf("results file %s has no schema_version; it is not a mongobench results file", path)
	case *head.SchemaVersion != SchemaVersion:
		return nil, fmt.Errorf("results file %s has schema_version %d, but this mongobench reads only version %d; use the mongobench release that wrote it",
			path, *head.SchemaVersion, SchemaVersion)
	}
	// Files written before every field was masked may hold secrets: mask
	// them on the way in too. A document that cannot be rewritten fails
	// in Unmarshal below with a better message.
	if clean, err := sanitizeJSON(data, redact.Known{}); err == nil {
		data = clean
	}
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return nil, fmt.Errorf("results file %s: field %s has the wrong type: %w", path, typeErr.Field, err)
		}
		return nil, fmt.Errorf("results file %s: %w", path, err)
	}
	r.upgrade()
	return &r, nil
}

// withKinds returns a shallow copy of r that says its result kind, as do
// its matrix's trials, and whose matrix names no target kind: what a file
// is written as. r is not modified.
func withKinds(r *Result) Result {
	out := *r
	out.ResultKind = r.Kind()
	if out.ResultKind == KindMatrix && out.Target.Kind == legacyMatrixTarget {
		out.Target.Kind = ""
	}
	if r.Matrix == nil {
		return out
	}
	m := *r.Matrix
	m.Trials = slices.Clone(m.Trials)
	for i, tr := range m.Trials {
		if tr.Result != nil {
			trial := withKinds(tr.Result)
			m.Trials[i].Result = &trial
		}
	}
	out.Matrix = &m
	return out
}

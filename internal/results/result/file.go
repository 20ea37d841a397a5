package result

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	clean, err := compact(r)
	if err != nil {
		return fmt.Errorf("write results file %s: %w", path, err)
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 64<<10)
		if err := indentTo(bw, clean); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// Encode writes what WriteFile writes to w (standard output with `run -o
// -`), indented as it goes: no indented copy of the file is held.
func Encode(w io.Writer, r *Result) error {
	clean, err := compact(r)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := indentTo(bw, clean); err != nil {
		return err
	}
	return bw.Flush()
}

// compact is the results as masked compact JSON, the one copy of them
// WriteFile and Encode hold while they write.
func compact(r *Result) ([]byte, error) {
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
	return sanitizeJSON(raw, redact.Known{})
}

// indentTo writes the compact JSON src to w as json.Indent with two spaces
// and then json.HTMLEscape would (<, >, & and U+2028/U+2029 in strings
// escaped, as json.Marshal writes them), followed by a newline, without
// building the indented copy: for a results file of megabytes those two
// copies were most of what writing it cost above the run's own memory.
// TestIndentToMatchesIndent holds it to the standard library's output.
func indentTo(w *bufio.Writer, src []byte) error {
	const hex = "0123456789abcdef"
	depth := 0
	inString, escaped := false, false
	newline := func() {
		_ = w.WriteByte('\n')
		for range depth {
			_, _ = w.WriteString("  ")
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			case c == '<' || c == '>' || c == '&':
				_, _ = w.WriteString(`\u00`)
				_ = w.WriteByte(hex[c>>4])
				_ = w.WriteByte(hex[c&0xF])
				continue
			case c == 0xE2 && i+2 < len(src) && src[i+1] == 0x80 && src[i+2]&^1 == 0xA8:
				_, _ = w.WriteString(`\u202`)
				_ = w.WriteByte(hex[src[i+2]&0xF])
				i += 2
				continue
			}
			_ = w.WriteByte(c)
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue // compact input; json.Indent drops insignificant space
		case '"':
			inString = true
			_ = w.WriteByte(c)
		case '{', '[':
			_ = w.WriteByte(c)
			// An empty object or array stays as it is, as json.Indent leaves it.
			j := i + 1
			for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\n' || src[j] == '\r') {
				j++
			}
			if j < len(src) && (src[j] == '}' || src[j] == ']') {
				_ = w.WriteByte(src[j])
				i = j
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			_ = w.WriteByte(c)
		case ',':
			_ = w.WriteByte(c)
			newline()
		case ':':
			_, _ = w.WriteString(": ")
		default:
			_ = w.WriteByte(c)
		}
	}
	if inString || depth != 0 {
		return errors.New("results JSON ends inside a value")
	}
	return w.WriteByte('\n')
}

// Read reads and parses a results file. It rejects files without a
// schema_version or with a version other than SchemaVersion, naming the file
// in the error, rather than misreading them. It does not verify the
// numbers; call Check for that. Cancelling ctx stops a read that waits,
// e.g. on a named pipe, with an error that wraps the context's cause. Files
// over inputfile.DefaultLimit are refused.
func Read(ctx context.Context, path string) (*Result, error) {
	data, err := inputfile.Read(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("read results file: %w", err)
	}
	return Parse(path, data)
}

// Parse parses the content of a results file as Read does, name standing
// for the file in errors: results kept elsewhere than in a file (a history
// store) are read by the same rules as a file.
func Parse(name string, data []byte) (*Result, error) {
	path := name
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

// Clean returns the content of a results file with every secret masked as
// Read masks it (see Sanitize): data itself when there is nothing to mask,
// as in every file mongobench writes, so that a copy of the file kept
// elsewhere is byte for byte what run wrote; otherwise (a file written by
// an older mongobench) the masked document, indented as WriteFile writes
// it. It checks only that data is JSON; Parse says whether it is a
// results file.
func Clean(data []byte) ([]byte, error) {
	clean, err := sanitizeJSON(data, redact.Known{})
	if err != nil {
		return nil, fmt.Errorf("results file is not valid JSON: %w", err)
	}
	var compacted bytes.Buffer
	if err := json.Compact(&compacted, data); err != nil {
		return nil, fmt.Errorf("results file is not valid JSON: %w", err)
	}
	if bytes.Equal(compacted.Bytes(), clean) {
		return data, nil
	}
	var out bytes.Buffer
	bw := bufio.NewWriter(&out)
	if err := indentTo(bw, clean); err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Marshal returns the content WriteFile writes, for callers that send the
// results elsewhere than a file (`run -o -` recorded in a history store).
func Marshal(r *Result) ([]byte, error) {
	var buf bytes.Buffer
	if err := Encode(&buf, r); err != nil {
		return nil, err
	}

	return buf.Bytes(), nil
}

package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mongobench/mongobench/internal/base/redact"
)

// Sanitize returns a copy of r with every secret masked that can be
// recognised by its form, so that nothing written or printed from it holds
// a password. Every writer of results (WriteFile, the HTML and CSV reports,
// the Markdown tables, the terminal summary) goes through it, and Read
// applies it to what it reads, so that even a file written by an older
// mongobench is shown masked.
//
// It works on the document as it is written, field by field, so a field
// added later is covered without being named here:
//
//   - every string (notes, errors, explain and server answers, the parsed
//     workload, target URIs, matrix targets and trials) has its connection
//     strings redacted as by redact.URI and its secret key=value pairs
//     masked (redact.Text);
//   - every string under a key that names a secret (password, secret,
//     token, api_key, ...; see redact.IsSecretKey) is replaced by
//     redact.Mask, nested values included, and so is every number under
//     such a key in the parsed workload; a value that is exactly a ${NAME}
//     reference to an environment variable is kept;
//   - the workload's source text is masked as YAML (redact.YAML): secret
//     keys' values and connection strings, comments included;
//   - the value and default of every secret workload parameter (recorded
//     in workload.spec.params, see SecretParams) are masked wherever they
//     appear, in any string or key, and as a number in the parsed
//     workload: a ${name} reference puts the value into a connection
//     string, a filter or a document, from where it reaches explain's
//     commands, server answers and error messages.
//
// Secrets that appear in free text without any of these forms (a bare
// password in a driver's message) cannot be recognised here; they must be
// scrubbed where the connection string is known, with redact.Error.
//
// r itself is not modified. The copy's Workload.Spec is the sanitized JSON
// (a json.RawMessage), which keeps the order of its keys.
func Sanitize(r *Result) (*Result, error) {
	if r == nil {
		return nil, errors.New("sanitize results: nil result")
	}

	data, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("sanitize results: %w", err)
	}

	clean, err := sanitizeJSON(data, redact.Known{})
	if err != nil {
		return nil, fmt.Errorf("sanitize results: %w", err)
	}

	var out Result
	if err := json.Unmarshal(clean, &out); err != nil {
		return nil, fmt.Errorf("sanitize results: %w", err)
	}

	var spec struct {
		Workload struct {
			Spec json.RawMessage `json:"spec"`
		} `json:"workload"`
	}

	if err := json.Unmarshal(clean, &spec); err == nil && len(spec.Workload.Spec) > 0 && string(spec.Workload.Spec) != "null" {
		out.Workload.Spec = spec.Workload.Spec
	}

	return &out, nil
}

// SanitizeAll sanitizes each result (see Sanitize).
func SanitizeAll(results []*Result) ([]*Result, error) {
	out := make([]*Result, len(results))

	for i, r := range results {
		s, err := Sanitize(r)
		if err != nil {
			return nil, fmt.Errorf("result %d: %w", i+1, err)
		}

		out[i] = s
	}

	return out, nil
}

// Keys the sanitizer treats specially.
const (
	// sourceKey is the workload's source text, masked as YAML.
	sourceKey = "source"
	// specKey is the parsed workload: generic JSON where numbers under a
	// secret key are masked too. Elsewhere a secret-looking key is a name
	// (a collection called "tokens" keys the server's statistics) over
	// typed numbers, which stay.
	specKey = "spec"
)

// isEncoded reports whether a key's string value is an encoding (base64
// histograms) that free-text masking must not touch: a run of base64 can
// look like "...pwd...=" by chance.
func isEncoded(key string) bool { return strings.HasSuffix(key, "histogram") }

// isTimestamp reports whether a string outside the parsed workload is one
// of the results' instants. mongobench writes those itself, so they cannot
// hold a substituted parameter, and masking a short secret value inside
// one ("15" of a time of day) would leave a field that no longer decodes.
func isTimestamp(s string) bool {
	if len(s) < len("2006-01-02T15:04:05Z") || s[4] != '-' || s[10] != 'T' {
		return false
	}

	_, err := time.Parse(time.RFC3339Nano, s)

	return err == nil
}

// SanitizeJSON masks the secrets of any JSON document holding results-file
// fields (a run log's records, for example) the way Sanitize masks a
// Result: every field is covered by its key and form, whatever struct it
// came from. The output is compact and keeps the order of keys.
//
// known adds secret values to mask, for a document that does not record
// them itself: a run log's interval and end records are masked with the
// secret parameters of its header (SecretParams).
func SanitizeJSON(data []byte, known redact.Known) ([]byte, error) { return sanitizeJSON(data, known) }

// SecretParams returns the values and defaults of the secret workload
// parameters a JSON document records in workload.spec.params (a results
// file, or a run log's header): those marked "secret" and those named like
// a secret (redact.IsSecretKey, the rule the workload marks them by), so
// that files written before parameters carried the mark are masked too.
// A document without parameters, or that is not JSON, has none.
func SecretParams(data []byte) redact.Known {
	var doc struct {
		Workload struct {
			Spec struct {
				Params []struct {
					Name    string `json:"name"`
					Default any    `json:"default"`
					Value   any    `json:"value"`
					Secret  bool   `json:"secret"`
				} `json:"params"`
			} `json:"spec"`
		} `json:"workload"`
	}

	if !bytes.Contains(data, []byte(`"params"`)) || json.Unmarshal(data, &doc) != nil {
		return redact.Known{}
	}

	var values []string

	for _, p := range doc.Workload.Spec.Params {
		if !p.Secret && !redact.IsSecretKey(p.Name) {
			continue
		}

		for _, v := range []any{p.Value, p.Default} {
			if str, ok := v.(string); ok {
				values = append(values, str)
			}
		}
	}

	return redact.KnownValues(values...)
}

// sanitizeJSON rewrites a JSON document with its secrets masked (see
// Sanitize), keeping its structure and the order of its keys: known's
// values and those of the secret parameters the document records. The
// output is compact.
func sanitizeJSON(data []byte, known redact.Known) ([]byte, error) {
	if own := SecretParams(data); !own.Empty() {
		known = redact.KnownValues(append(known.Values(), own.Values()...)...)
	}

	s := &jsonSanitizer{dec: json.NewDecoder(bytes.NewReader(data)), known: known}
	s.dec.UseNumber()

	tok, err := s.dec.Token()
	if err != nil {
		return nil, err
	}

	if err := s.value(tok, "", scope{}); err != nil {
		return nil, err
	}

	if _, err := s.dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the JSON document")
	}

	return s.out.Bytes(), nil
}

// jsonSanitizer copies JSON tokens from dec to out, masking as it goes.
type jsonSanitizer struct {
	dec *json.Decoder
	out bytes.Buffer
	// known are the secret values masked wherever they appear.
	known redact.Known
}

// scope is where a value sits in the document.
type scope struct {
	// secret says the value is under a secret key, so every string in it
	// (and, in the spec, every number) is masked.
	secret bool
	// spec says the value is inside the parsed workload.
	spec bool
}

// value copies one value that starts with tok. key is the object key it is
// the value of (inherited by array elements).
func (s *jsonSanitizer) value(tok json.Token, key string, sc scope) error {
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return s.object(sc)
		case '[':
			return s.array(key, sc)
		}

		return fmt.Errorf("unexpected %q", t)

	case string:
		switch {
		case sc.secret && !redact.IsEnvRef(t):
			t = redact.Mask
		case sc.secret, isEncoded(key):
			// A ${NAME} reference names the secret's variable; an
			// encoding is no text.
		case key == sourceKey:
			t = redact.YAML(t)
		default:
			t = redact.Text(t)
		}

		if !isEncoded(key) && (sc.spec || !isTimestamp(t)) {
			t = s.known.Mask(t)
		}

		return s.writeString(t)

	case json.Number:
		if sc.spec && (sc.secret || s.known.Is(t.String())) {
			return s.writeString(redact.Mask)
		}

		s.out.WriteString(t.String())

	case bool:
		if t {
			s.out.WriteString("true")
		} else {
			s.out.WriteString("false")
		}

	case nil:
		s.out.WriteString("null")
	}

	return nil
}

func (s *jsonSanitizer) object(sc scope) error {
	s.out.WriteByte('{')

	for n := 0; ; n++ {
		tok, err := s.dec.Token()
		if err != nil {
			return err
		}

		if d, ok := tok.(json.Delim); ok && d == '}' {
			s.out.WriteByte('}')

			return nil
		}

		key, ok := tok.(string)
		if !ok {
			return fmt.Errorf("object key %v is not a string", tok)
		}

		if n > 0 {
			s.out.WriteByte(',')
		}

		if err := s.writeString(s.known.Mask(redact.Text(key))); err != nil {
			return err
		}

		s.out.WriteByte(':')

		tok, err = s.dec.Token()
		if err != nil {
			return err
		}

		inner := scope{secret: sc.secret || redact.IsSecretKey(key), spec: sc.spec || key == specKey}
		if err := s.value(tok, key, inner); err != nil {
			return err
		}
	}
}

func (s *jsonSanitizer) array(key string, sc scope) error {
	s.out.WriteByte('[')

	for n := 0; ; n++ {
		tok, err := s.dec.Token()
		if err != nil {
			return err
		}

		if d, ok := tok.(json.Delim); ok && d == ']' {
			s.out.WriteByte(']')

			return nil
		}

		if n > 0 {
			s.out.WriteByte(',')
		}

		if err := s.value(tok, key, sc); err != nil {
			return err
		}
	}
}

// writeString writes str as a JSON string. '<', '>' and '&' are not
// escaped, so that a sanitized spec reads as written wherever it is shown;
// WriteFile escapes them in the file as encoding/json does.
func (s *jsonSanitizer) writeString(str string) error {
	enc := json.NewEncoder(&s.out)
	enc.SetEscapeHTML(false)

	if err := enc.Encode(str); err != nil {
		return err
	}

	s.out.Truncate(s.out.Len() - 1) // Encode's newline

	return nil
}

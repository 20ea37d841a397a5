package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mongobench/mongobench/internal/redact"
)

// Sanitize returns a copy of r with every secret masked that can be
// recognised by its form, so that nothing written or printed from it holds
// a password. Every writer of results (WriteFile, the HTML and CSV reports,
// the Markdown tables, the terminal summary) goes through it, and ReadFile
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
//   - every value under a key that names a secret (password, secret,
//     token, api_key, ...; see redact.IsSecretKey), at any depth of the
//     parsed workload, is replaced by redact.Mask, nested values included;
//   - the workload's source text is masked as YAML (redact.YAML): secret
//     keys' values and connection strings, comments included.
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

	clean, err := sanitizeJSON(data)
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

// sourceKey is the JSON key of the workload's source text, masked as YAML.
const sourceKey = "source"

// sanitizeJSON rewrites a JSON document with its secrets masked (see
// Sanitize), keeping its structure and the order of its keys. The output is
// compact.
func sanitizeJSON(data []byte) ([]byte, error) {
	s := &jsonSanitizer{dec: json.NewDecoder(bytes.NewReader(data))}
	s.dec.UseNumber()

	tok, err := s.dec.Token()
	if err != nil {
		return nil, err
	}

	if err := s.value(tok, "", false); err != nil {
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
}

// value copies one value that starts with tok. key is the object key it is
// the value of (inherited by array elements), and secret says that it is
// under a secret key, so every scalar in it is masked.
func (s *jsonSanitizer) value(tok json.Token, key string, secret bool) error {
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return s.object(secret)
		case '[':
			return s.array(key, secret)
		}

		return fmt.Errorf("unexpected %q", t)

	case string:
		switch {
		case secret && !redact.IsEnvRef(t):
			t = redact.Mask
		case secret:
			// A ${NAME} reference names the secret's variable; kept.
		case key == sourceKey:
			t = redact.YAML(t)
		default:
			t = redact.Text(t)
		}

		return s.writeString(t)

	case json.Number:
		if secret {
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

func (s *jsonSanitizer) object(secret bool) error {
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

		if err := s.writeString(redact.Text(key)); err != nil {
			return err
		}

		s.out.WriteByte(':')

		tok, err = s.dec.Token()
		if err != nil {
			return err
		}

		if err := s.value(tok, key, secret || redact.IsSecretKey(key)); err != nil {
			return err
		}
	}
}

func (s *jsonSanitizer) array(key string, secret bool) error {
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

		if err := s.value(tok, key, secret); err != nil {
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

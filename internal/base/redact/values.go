package redact

import (
	"encoding/json"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// Known masks secrets known by value rather than by form, such as a
// workload parameter declared secret (or named like one) whose value was
// substituted into a connection string, a filter or a document: wherever
// the value went, Mask replaces it. The zero Known masks nothing.
type Known struct {
	values []string // as given, for Is
	r      *strings.Replacer
}

// KnownValues returns a Known for the given secret values. Each is masked
// as given and in the forms text quotes it in: percent-encoded as in a URL
// or query, and escaped as inside a JSON string.
//
// Empty values, and values that are part of Mask itself, are ignored:
// masking them would make Mask change an already masked text again (and
// they are no secrets worth the name).
func KnownValues(values ...string) Known {
	var k Known

	seen := map[string]bool{}

	var pairs []string

	add := func(f string) {
		if f == "" || seen[f] || strings.Contains(Mask, f) {
			return
		}

		seen[f] = true
		pairs = append(pairs, f, Mask)
	}

	for _, v := range values {
		if v == "" || strings.Contains(Mask, v) {
			continue
		}

		if !slices.Contains(k.values, v) {
			k.values = append(k.values, v)
		}

		add(v)
		add(url.QueryEscape(v))
		add(url.PathEscape(v))

		for _, html := range []bool{true, false} {
			add(jsonInner(v, html))
		}
	}

	if len(pairs) == 0 {
		return k
	}

	// strings.Replacer tries the old strings in argument order at each
	// position: longer forms first, so a value wins over its substrings.
	sortPairsByLength(pairs)
	k.r = strings.NewReplacer(pairs...)

	return k
}

// jsonInner is v as written inside a JSON string, with '<', '>' and '&'
// escaped (as encoding/json writes them by default) or not.
func jsonInner(v string, html bool) string {
	var b strings.Builder

	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)

	if err := enc.Encode(v); err != nil {
		return ""
	}

	q := strings.TrimSuffix(b.String(), "\n")

	return q[1 : len(q)-1]
}

// Mask returns s with every occurrence of a known value replaced by Mask.
func (k Known) Mask(s string) string {
	if k.r == nil || s == "" {
		return s
	}

	return k.r.Replace(s)
}

// Is reports whether s is exactly one of the known values, for a value
// that cannot be rewritten in place (a number where a number must stay).
func (k Known) Is(s string) bool { return slices.Contains(k.values, s) }

// Values returns the known values as given, for a caller that masks
// records one at a time and needs to carry them from the first.
func (k Known) Values() []string { return slices.Clone(k.values) }

// Empty reports whether there is nothing to mask.
func (k Known) Empty() bool { return len(k.values) == 0 }

// Stream is a writer that masks known values (see Known) in everything
// written through it. Values can be added while it is in use: a command
// learns its secret values (a workload's secret parameters) only after it
// started printing. Each Write is masked on its own, so a value split
// across two writes is not recognised; messages are written a line at a
// time.
type Stream struct {
	w     io.Writer
	mu    sync.Mutex
	known Known
}

// NewStream returns a Stream writing to w, masking nothing until Add.
func NewStream(w io.Writer) *Stream { return &Stream{w: w} }

// Add masks k's values too from now on.
func (s *Stream) Add(k Known) {
	if k.Empty() {
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()

	s.known = KnownValues(append(s.known.Values(), k.values...)...)
}

// Write masks p and writes it, reporting all of p as written when the
// masked text was.
func (s *Stream) Write(p []byte) (int, error) {
	s.mu.Lock()
	k := s.known
	s.mu.Unlock()

	if k.Empty() {
		return s.w.Write(p)
	}

	if _, err := io.WriteString(s.w, k.Mask(string(p))); err != nil {
		return 0, err
	}

	return len(p), nil
}

// Package yamlpos ties problems found in YAML input to the place they were
// found, so that every message a user sees names file, line, column and the
// field path, e.g. "quickstart.yaml:12:5: operations[1].weight: must be > 0".
package yamlpos

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v4"
)

// Error is one problem in an input file.
//
// Line and Column are 1-based; zero means the position is unknown (for
// example a required field that is missing has no node of its own, so the
// position of its parent mapping is used instead).
type Error struct {
	File   string
	Line   int
	Column int
	Path   string
	Msg    string
}

// Error formats the problem the way compilers do, so editors can jump to it.
func (e *Error) Error() string {
	var b strings.Builder

	if e.File != "" {
		b.WriteString(e.File)
		b.WriteByte(':')
	}

	switch {
	case e.Line > 0 && e.Column > 0:
		fmt.Fprintf(&b, "%d:%d:", e.Line, e.Column)
	case e.Line > 0:
		fmt.Fprintf(&b, "%d:", e.Line)
	}

	if b.Len() > 0 {
		b.WriteByte(' ')
	}

	if e.Path != "" {
		b.WriteString(oneLine(e.Path))
		b.WriteString(": ")
	}

	b.WriteString(oneLine(e.Msg))

	return b.String()
}

// oneLine escapes the control characters a message can carry from its
// input (a YAML tag may hold a percent-encoded newline, a key a tab), so
// that every message stays one line, however the value got into it.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}

	var b strings.Builder

	for _, r := range s {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])

			continue
		}

		b.WriteRune(r)
	}

	return b.String()
}

// At returns an error positioned at node n (which may be nil).
func At(n *yaml.Node, path, format string, args ...any) *Error {
	e := &Error{Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}

	return e
}

// Field joins a parent path and a mapping key: Field("run", "duration") is
// "run.duration" and Field("", "run") is "run".
func Field(parent, key string) string {
	if parent == "" {
		return key
	}

	return parent + "." + key
}

// Index joins a parent path and a sequence index: Index("operations", 1) is
// "operations[1]".
func Index(parent string, i int) string {
	return fmt.Sprintf("%s[%d]", parent, i)
}

// WithFile sets File on every *Error in errs that has none, so packages that
// do not know the file name can still produce complete messages.
func WithFile(file string, errs []error) []error {
	for _, err := range errs {
		var pe *Error
		if errors.As(err, &pe) && pe.File == "" {
			pe.File = file
		}
	}

	return errs
}

// Sort orders errors by position so that users read them top to bottom.
// Errors without a position keep their relative order and come first.
func Sort(errs []error) {
	pos := func(err error) (int, int) {
		var pe *Error
		if errors.As(err, &pe) {
			return pe.Line, pe.Column
		}

		return 0, 0
	}

	sort.SliceStable(errs, func(i, j int) bool {
		li, ci := pos(errs[i])
		lj, cj := pos(errs[j])

		if li != lj {
			return li < lj
		}

		return ci < cj
	})
}

// Resolve follows YAML aliases (*name) to the anchored node, so that callers
// can reuse a template with YAML anchors without knowing about aliases.
func Resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}

	return n
}

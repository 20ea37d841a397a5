package workload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/mongobench/mongobench/internal/base/inputfile"
	"github.com/mongobench/mongobench/internal/base/yamlpos"
)

// Defaults applied to fields a workload file leaves out.
const (
	DefaultSeed        = 1
	DefaultConcurrency = 1
	DefaultDuration    = 10 * time.Second
	DefaultInterval    = time.Second
	DefaultTimeout     = 10 * time.Second
	DefaultAbortAfter  = 15 * time.Second
	DefaultBatchSize   = 1000
)

// DefaultServerSelectionTimeout is run.server_selection_timeout's default: a
// few seconds, far below the driver's 30, so that a run against a dead server
// ends while the user is still looking.
const DefaultServerSelectionTimeout = 5 * time.Second

// MaxFileSize bounds what Parse reads, so a wrong path (a database dump, a
// binary) gives an error instead of eating memory.
const MaxFileSize = 4 << 20

// ReadWith reads and parses a workload file, with parameter overrides,
// "name=value" each (--set). The returned errors are *yamlpos.Error values
// naming the file; a spec is returned only when there are none. Cancelling
// ctx stops a read that waits, e.g. on a named pipe, with an error that
// wraps the context's cause.
func ReadWith(ctx context.Context, path string, set []string) (*Spec, []error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, []error{fmt.Errorf("%s: %w", path, unwrapPathError(err))}
	}

	if st.IsDir() {
		return nil, []error{fmt.Errorf("%s: is a directory, not a workload file", path)}
	}

	// A named pipe or a device is refused before opening it: the open
	// of a pipe nobody writes to would wait until Ctrl-C.
	if err := inputfile.CheckFile(path); err != nil {
		return nil, []error{err}
	}

	data, err := inputfile.ReadLimit(ctx, path, MaxFileSize)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = fmt.Errorf("%s: %w", path, pe.Err)
		}

		// The other errors name the file already.
		return nil, []error{err}
	}

	return ParseWith(path, data, set)
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}

	return err
}

// Parse parses and validates a workload file's content. file is used in
// messages only.
func Parse(file string, data []byte) (*Spec, []error) {
	return ParseWith(file, data, nil)
}

// ParseWith is Parse with parameter overrides, "name=value" each (--set).
func ParseWith(file string, data []byte, set []string) (*Spec, []error) {
	doc, err := readDocument(file, data)
	if err != nil {
		return nil, []error{err}
	}

	params, errs := applyParams(file, doc, set)
	if len(errs) > 0 {
		return nil, errs
	}

	s, errs := parseRoot(file, data, doc)
	if len(errs) > 0 {
		return nil, errs
	}

	s.Params = params

	// Variants are checked now, so that validate reports their problems.
	if _, errs := s.VariantSpecs(); len(errs) > 0 {
		return nil, errs
	}

	return s, nil
}

// readDocument returns the root node of the file's only YAML document. A
// second document ("---") is an error rather than silently ignored: a user
// who appends a variant of the workload that way would otherwise run the
// first one and never know.
func readDocument(file string, data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))

	var doc yaml.Node

	err := dec.Decode(&doc)
	if errors.Is(err, io.EOF) || (err == nil && (len(doc.Content) == 0 || isNull(doc.Content[0]))) {
		return nil, &yamlpos.Error{File: file, Line: 1, Msg: "file is empty; a workload needs at least name, database and operations"}
	}

	if err != nil {
		return nil, syntaxError(file, data, err)
	}

	if deep := tooDeep(doc.Content[0], 0); deep != nil {
		return nil, &yamlpos.Error{
			File: file, Line: deep.Line, Column: deep.Column,
			Msg: fmt.Sprintf("nested more than %d levels deep; no workload needs that (MongoDB stores at most %d levels)", maxFileDepth, maxTemplateDepth),
		}
	}

	var extra yaml.Node

	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
		return doc.Content[0], nil
	case err != nil:
		return nil, syntaxError(file, data, err)
	default:
		e := yamlpos.At(&extra, "", "a second YAML document starts here; a workload file holds exactly one (remove the \"---\" line, or put each workload in its own file)")
		e.File = file

		return nil, e
	}
}

// maxFileDepth bounds the nesting of mappings and lists in a workload file:
// templates may nest maxTemplateDepth levels, and the file's own structure
// (variants, operations, fields) adds a few.
const maxFileDepth = maxTemplateDepth + 20

// tooDeep returns the first node nested deeper than maxFileDepth, or nil.
// Aliases are not followed: an alias cycle is reported where it is used.
func tooDeep(n *yaml.Node, depth int) *yaml.Node {
	if depth > maxFileDepth {
		return n
	}

	for _, c := range n.Content {
		if deep := tooDeep(c, depth+1); deep != nil {
			return deep
		}
	}

	return nil
}

// syntaxError positions a YAML syntax error. When the parser names the
// construct it was reading (an unclosed "[" or quote), the error points at
// where that construct starts, which is where the fix is, and says where the
// parser gave up.
func syntaxError(file string, data []byte, err error) error {
	var le *yaml.LoadError
	if !errors.As(err, &le) {
		var les *yaml.LoadErrors
		if errors.As(err, &les) && len(les.Errors) > 0 {
			le = les.Errors[0]
		}
	}

	if le == nil {
		return &yamlpos.Error{File: file, Msg: "invalid YAML: " + firstLine(err.Error())}
	}

	e := &yamlpos.Error{File: file, Line: le.Mark.Line, Column: le.Mark.Column, Msg: "invalid YAML: " + le.Message}

	// The reader (bad encoding, control characters) gives only the byte
	// offset.
	if e.Line == 0 && le.Mark.Index >= 0 && le.Mark.Index <= len(data) {
		before := data[:le.Mark.Index]
		e.Line = 1 + bytes.Count(before, []byte("\n"))
		e.Column = 1 + len(before) - (bytes.LastIndexByte(before, '\n') + 1)
	}

	ctx := le.ContextMark
	if ctx.Line > 0 && le.ContextMsg != "" && (ctx.Line != le.Mark.Line || ctx.Column != le.Mark.Column) {
		e.Line, e.Column = ctx.Line, ctx.Column
		e.Msg = fmt.Sprintf("invalid YAML: %s %s that starts here (the parser gave up at line %d, column %d)",
			le.Message, le.ContextMsg, le.Mark.Line, le.Mark.Column)
	}

	return e
}

// firstLine keeps messages to one line.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// applyDefaults fills what the file leaves out. It runs before Validate so
// that validation sees the values the run will use.
func (s *Spec) applyDefaults() {
	if s.node("seed") == nil {
		s.Seed = DefaultSeed
	}

	r := &s.Run
	if r.Concurrency == 0 && s.node("run.concurrency") == nil {
		r.Concurrency = DefaultConcurrency
	}

	if r.Interval == 0 && s.node("run.interval") == nil {
		r.Interval = Duration(DefaultInterval)
	}

	if r.Timeout == 0 && s.node("run.timeout") == nil {
		r.Timeout = Duration(DefaultTimeout)
	}

	if r.AbortAfter == 0 && s.node("run.abort_after") == nil {
		r.AbortAfter = Duration(DefaultAbortAfter)
	}

	if r.ServerSelectionTimeout == 0 && s.node("run.server_selection_timeout") == nil {
		r.ServerSelectionTimeout = Duration(DefaultServerSelectionTimeout)
	}

	s.applyPhaseDefaults()

	// Unset rounds stay 0 unless the workload itself is a comparison: the
	// command line can still add targets, and then the comparison's
	// default applies (see Spec.TrialRounds).
	if s.Trials.Rounds == 0 && s.node("trials.rounds") == nil && (len(s.Variants) > 0 || len(s.Targets) > 1) {
		s.Trials.Rounds = DefaultRounds
	}

	for i := range s.Load {
		l := &s.Load[i]
		if l.BatchSize == 0 && s.node(yamlpos.Field(yamlpos.Index("load", i), "batch_size")) == nil {
			l.BatchSize = DefaultBatchSize
		}

		if l.Concurrency == 0 && s.node(yamlpos.Field(yamlpos.Index("load", i), "concurrency")) == nil {
			l.Concurrency = r.Concurrency
		}
	}

	for i := range s.Operations {
		o := &s.Operations[i]
		if o.Timeout == 0 && s.node(yamlpos.Field(yamlpos.Index("operations", i), "timeout")) == nil {
			o.Timeout = r.Timeout
		}
	}

	s.applyStepDefaults()
}

func (s *Spec) node(path string) *yaml.Node { return s.nodes[path] }

// WeightOf returns the operation's weight in a mix (1 when not written).
func (o *Operation) WeightOf() float64 {
	if o.Weight == nil {
		return 1
	}

	return *o.Weight
}

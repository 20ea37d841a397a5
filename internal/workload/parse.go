package workload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mongobench/mongobench/internal/inputfile"
	"github.com/mongobench/mongobench/internal/yamlpos"
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

// ReadFile reads and parses a workload file. The returned errors are
// *yamlpos.Error values naming the file; a spec is returned only when there
// are none.
func ReadFile(path string) (*Spec, []error) {
	return Read(context.Background(), path)
}

// Read is ReadFile under a context: cancelling ctx stops a read that waits,
// e.g. on a named pipe, with an error that wraps the context's cause.
func Read(ctx context.Context, path string) (*Spec, []error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, []error{fmt.Errorf("%s: %w", path, unwrapPathError(err))}
	}

	if st.IsDir() {
		return nil, []error{fmt.Errorf("%s: is a directory, not a workload file", path)}
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

	return Parse(path, data)
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}

	return err
}

// yamlLine extracts the line number from yaml.v3 syntax errors, which carry
// it only in their text ("yaml: line 3: ...").
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Parse parses and validates a workload file's content. file is used in
// messages only.
func Parse(file string, data []byte) (*Spec, []error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, []error{syntaxError(file, err)}
	}

	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, []error{&yamlpos.Error{File: file, Msg: "file is empty; a workload needs at least name, database and operations"}}
	}

	s, errs := parseRoot(file, data, doc.Content[0])
	if len(errs) > 0 {
		return nil, errs
	}

	// Variants are checked now, so that validate reports their problems.
	if _, errs := s.VariantSpecs(); len(errs) > 0 {
		return nil, errs
	}

	return s, nil
}

func syntaxError(file string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		err = errors.New(te.Errors[0])
	}

	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &yamlpos.Error{File: file, Line: line, Msg: "invalid YAML: " + m[2]}
	}

	return &yamlpos.Error{File: file, Msg: "invalid YAML: " + err.Error()}
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
}

func (s *Spec) node(path string) *yaml.Node { return s.nodes[path] }

// WeightOf returns the operation's weight in a mix (1 when not written).
func (o *Operation) WeightOf() float64 {
	if o.Weight == nil {
		return 1
	}

	return *o.Weight
}

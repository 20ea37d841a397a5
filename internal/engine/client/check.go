package client

import (
	"errors"
	"slices"
	"strings"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
	"github.com/mongobench/mongobench/internal/engine/op"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// Check returns, positioned at the field at fault, every part of spec that
// its client (run.client) cannot run: an unknown client; for an external
// stack, phases that are not closed loops (open loop, ramps, growth blocks,
// background jobs, sequences), composite operations, administration kinds
// (drop, createIndexes, runCommand), per-operation timeouts (the protocol
// has one, run.timeout) and decode modes, which are the Go engine's. Each message names the client, so that a variant's error says
// which stack refused it.
func Check(spec *workload.Spec) []error {
	c := &checker{spec: spec, client: spec.Run.Client}

	if err := CheckName(c.client); err != nil {
		c.at("run.client", "%v", err)
		return c.errs
	}

	if !External(c.client) {
		return nil
	}

	phases, paths := spec.PhaseList()
	for i, p := range phases {
		c.phase(paths[i], p)
	}

	for i := range spec.Operations {
		c.operation(yamlpos.Index("operations", i), &spec.Operations[i])
	}

	if s, _ := Lookup(c.client); s.ODM {
		c.schemas()
	}

	yamlpos.Sort(c.errs)

	return c.errs
}

// checker collects Check's positioned errors.
type checker struct {
	spec   *workload.Spec
	client string
	errs   []error
}

// at reports a problem with the field at path, or at its nearest written
// parent.
func (c *checker) at(path, format string, args ...any) {
	p := path

	n := c.spec.Node(p)
	for n == nil && p != "" {
		p = parent(p)
		n = c.spec.Node(p)
	}

	e := yamlpos.At(n, path, format, args...)
	e.File = c.spec.File()
	c.errs = append(c.errs, e)
}

// parent strips the last element of a field path.
func parent(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '.' || p[i] == '[' {
			return p[:i]
		}
	}

	return ""
}

// phase checks that a phase is a plain closed loop.
func (c *checker) phase(path string, p *workload.Phase) {
	switch {
	case !p.LoadModel().External:
		c.at(path, "client %s runs closed-loop phases only; this phase's load model is %s (use client go for it)", c.client, p.Model())
	case len(p.Sequence) > 0:
		c.at(yamlpos.Field(path, "sequence"), "client %s runs a weighted mix of single operations; sequences run with client go only", c.client)
	}

	if p.ThinkTime > 0 {
		c.at(yamlpos.Field(path, "think_time"), "client %s sends each operation when the last returned; think_time runs with client go only", c.client)
	}

	if len(p.Background) > 0 {
		c.at(yamlpos.Field(path, "background"), "client %s cannot run background jobs; they run with client go only", c.client)
	}
}

// operation checks that an operation is one call the stack can make.
func (c *checker) operation(path string, o *workload.Operation) {
	switch {
	case len(o.Steps) > 0:
		c.at(yamlpos.Field(path, "steps"), "operation %q: client %s runs single operations; composite operations run with client go only", o.Name, c.client)
	case !slices.Contains(op.ArgsKinds(), o.Op):
		c.at(yamlpos.Field(path, "op"), "operation %q: client %s has no call for kind %s (only %s); run it with client go", o.Name, c.client, o.Op, strings.Join(op.ArgsKinds(), ", "))
	default:
		s, _ := Lookup(c.client)
		for _, g := range s.Without {
			if g.Kind == o.Op {
				c.at(yamlpos.Field(path, "op"), "operation %q: client %s has no call for kind %s (%s); run it with another client", o.Name, c.client, o.Op, g.Why)
			}
		}
	}

	if c.spec.Node(yamlpos.Field(path, "timeout")) != nil {
		c.at(yamlpos.Field(path, "timeout"), "operation %q: client %s bounds every operation by run.timeout; a per-operation timeout runs with client go only", o.Name, c.client)
	}

	if o.Decode != "" {
		c.at(yamlpos.Field(path, "decode"), "operation %q: decode is how the Go engine maps documents; client %s maps them its own way, so decode must not be set", o.Name, c.client)
	}
}

// schemas checks that every collection has a schema an ODM can declare:
// one type per field.
func (c *checker) schemas() {
	for _, coll := range c.spec.Collections {
		_, err := DeriveSchema(c.spec, coll.Name, true)

		var se *SchemaError
		if errors.As(err, &se) {
			c.at(se.Path, "collection %q: %v (client %s declares a schema)", coll.Name, se.Err, c.client)
		}
	}
}

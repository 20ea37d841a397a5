package workload

import (
	"slices"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/mongobench/mongobench/internal/base/yamlpos"
)

// This file holds the rules that turn input the engine would misread, or
// fail on only after time was spent, into validation errors: values that
// must be documents, rates written as zero. Each rule is one function called
// from Validate.

// documentFields are the operation fields whose template must produce one
// document (a BSON document, not an array or a scalar). Only "document" is
// checked for being a mapping here; operationValues reports the others.
var documentFields = []string{"document", "filter", "projection", "sort", "replacement", "command"}

// maxDocumentDepth bounds the walk through ^choice and ^pool, so that an
// alias cycle cannot recurse forever.
const maxDocumentDepth = 32

// documentGenerators are the generators that may produce a document; every
// other generator produces a scalar or an array.
var documentGenerators = []string{"^choice", "^pool", "^var", "^fields", "^field"}

// documents checks that every template in a document position is a
// document: insertOne with document: [1, 2, 3] is refused here rather than
// by the server on every operation.
func (v *validator) documents() {
	for i := range v.s.Load {
		p := yamlpos.Field(yamlpos.Index("load", i), "document")
		v.document(p, v.s.Load[i].Document.Node(), 0)
	}

	for i := range v.s.Operations {
		v.operationDocuments(yamlpos.Index("operations", i), &v.s.Operations[i])
	}
}

// operationDocuments checks the document positions of one operation and of
// its steps when it is composite.
func (v *validator) operationDocuments(p string, o *Operation) {
	for _, name := range documentFields {
		n := yamlpos.Resolve(operationTemplate(o, name).Node())
		if name == "document" || (n != nil && n.Kind == yaml.MappingNode) {
			v.document(yamlpos.Field(p, name), n, 0)
		}
	}

	v.pipelineDocuments(yamlpos.Field(p, "pipeline"), o.Pipeline.Node())

	if u := yamlpos.Resolve(o.Update.Node()); u != nil && u.Kind == yaml.SequenceNode {
		v.pipelineDocuments(yamlpos.Field(p, "update"), u)
	}

	for j := range o.Steps {
		v.operationDocuments(yamlpos.Index(yamlpos.Field(p, "steps"), j), &o.Steps[j])
	}
}

// operationTemplate returns the operation's template field by its YAML name.
func operationTemplate(o *Operation, name string) *Template {
	switch name {
	case "document":
		return o.Document
	case "filter":
		return o.Filter
	case "projection":
		return o.Projection
	case "sort":
		return o.Sort
	case "replacement":
		return o.Replacement
	case "command":
		return o.Command
	}

	return nil
}

// pipelineDocuments checks that each element of a pipeline is a document.
func (v *validator) pipelineDocuments(path string, n *yaml.Node) {
	n = yamlpos.Resolve(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return // reported by operationValues
	}

	for i, st := range n.Content {
		v.document(yamlpos.Index(path, i), st, 0)
	}
}

// document reports n at path unless it can produce a document. A generator
// is accepted when it may produce one (^choice, ^pool and ^var, whose
// values are checked when they are literal); datagen checks the rest.
func (v *validator) document(path string, n *yaml.Node, depth int) {
	n = yamlpos.Resolve(n)
	if n == nil || depth > maxDocumentDepth {
		return
	}

	if n.Kind != yaml.MappingNode {
		v.errs = append(v.errs, v.atNode(n, path, "must be a document (a mapping such as {a: 1}), not %s", describe(n)))
		return
	}

	if depth == 0 {
		if deep := nestedDeeper(n, 1, maxTemplateDepth); deep != nil {
			v.errs = append(v.errs, v.atNode(deep, path, "nests documents and lists more than %d levels deep, which MongoDB refuses", maxTemplateDepth))
			return
		}
	}

	if len(n.Content) != 2 || !strings.HasPrefix(n.Content[0].Value, "^") {
		return
	}

	gen := n.Content[0].Value
	if !slices.Contains(documentGenerators, gen) {
		v.errs = append(v.errs, v.atNode(n.Content[0], path, "must be a document, but the %s generator produces a value that is not one", gen))
		return
	}

	args := yamlpos.Resolve(n.Content[1])
	if args == nil || args.Kind != yaml.MappingNode {
		return
	}

	for i := 0; i+1 < len(args.Content); i += 2 {
		k, val := args.Content[i].Value, yamlpos.Resolve(args.Content[i+1])

		switch {
		case gen == "^choice" && k == "values" && val.Kind == yaml.SequenceNode:
			for j, item := range val.Content {
				v.document(yamlpos.Index(yamlpos.Field(yamlpos.Field(path, gen), "values"), j), item, depth+1)
			}
		case gen == "^pool" && k == "of":
			v.document(yamlpos.Field(yamlpos.Field(path, gen), "of"), val, depth+1)
		}
	}
}

// atNode is an error at node n, in this file.
func (v *validator) atNode(n *yaml.Node, path, format string, args ...any) error {
	e := yamlpos.At(n, path, format, args...)
	e.File = v.s.file

	return e
}

// zeroRates refuses a rate written as zero where zero would silently mean
// something else: a phase with rate: 0/s would run closed-loop, and a
// pacing bound of 0 would be replaced by its default. Leaving the field out
// says that; writing 0 is a mistake. Ramp stages may target 0 (ramp down).
func (v *validator) zeroRates() {
	for path, n := range v.s.nodes {
		if !isRatePath(path) {
			continue
		}

		var r Rate
		if err := r.decodeNode(n, path); err == nil && r == 0 {
			msg := "must be > 0; leave rate out for a closed-loop phase (workers start the next operation when the last returns)"
			if strings.Contains(path, ".pacing.") {
				msg = "must be > 0"
			}

			v.errs = append(v.errs, v.atNode(n, path, "%s", msg))
		}
	}
}

// isRatePath reports whether path is a phase's or job's rate or a pacing
// bound, and not a ramp stage's target.
func isRatePath(path string) bool {
	if strings.Contains(path, ".stages[") {
		return false
	}

	last := path[strings.LastIndexByte(path, '.')+1:]
	if last == "rate" {
		return true
	}

	return strings.HasSuffix(parentPath(path), ".pacing") && (last == "start" || last == "min" || last == "max")
}

// nestedDeeper returns the first node below n at a depth above limit. It
// does not follow aliases, so that an alias cycle is reported as one by the
// template compiler.
func nestedDeeper(n *yaml.Node, depth, limit int) *yaml.Node {
	if n == nil || n.Kind == yaml.AliasNode {
		return nil
	}

	if depth > limit {
		return n
	}

	for _, c := range n.Content {
		if deep := nestedDeeper(c, depth+1, limit); deep != nil {
			return deep
		}
	}

	return nil
}

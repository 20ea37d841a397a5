// Package client runs a workload's operations through the client stack a
// team actually runs (the Node.js driver, Mongoose, PyMongo, MongoEngine)
// instead of mongobench's own Go driver calls, so that an ODM's cost
// (building model instances, casting, hydration) is measured where the
// application pays it.
//
// mongobench keeps generating every operation's arguments itself (the same
// seeded worker scopes, the same weighted picks) and sends them, ahead of
// time and in batches, to an adapter process written in the stack's own
// language; the adapter times each call and sends the latencies back, raw,
// and the runner records them into the same histograms as the Go engine's
// (runner/external.go). The two talk JSON Lines over the adapter's standard
// input and output: protocol.go, and docs/clients.md for the adapters'
// side.
//
// The stacks are a registry (this file, with one file per language family:
// stack_node.go, stack_python.go); their adapters' sources are embedded in
// the binary (package clients at the repository's root) and installed into
// the user's cache directory by `mongobench clients install` (install.go).
package client

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mongobench/mongobench/internal/results/result"
)

// Go is the default client: mongobench's own engine on the official Go
// driver, which needs no adapter.
const Go = "go"

// Stack is one client stack an adapter can run.
type Stack struct {
	// Name is how workloads, variants and --client name it.
	Name string

	// Family is the language family whose adapter runs it.
	Family *Family

	// ODM is true for object-document mappers, which have no idiomatic
	// call for administration kinds (drop, createIndexes, runCommand).
	ODM bool

	// Without lists the operation kinds the stack has no idiomatic call
	// for, beyond what every external stack lacks, each with the reason
	// validation gives.
	Without []KindGap

	// Describe says in a few words what the stack is, for `mongobench
	// clients`.
	Describe string

	// Library is the library (a key of the adapter's reported versions)
	// whose version names the stack in a results table's title: the ODM
	// for an ODM stack, the driver otherwise.
	Library string
}

// KindGap is an operation kind a stack cannot express, and why.
type KindGap struct {
	Kind, Why string
}

// Family is a language runtime with one adapter program serving several
// stacks: installed once, started with --stack.
type Family struct {
	// Name is the directory of its sources in the embedded tree and in
	// the cache ("node", "python").
	Name string

	// Runtime is the interpreter program looked up on PATH to tell whether
	// the family can be installed at all.
	Runtime string

	// VersionArgs make Runtime print its version.
	VersionArgs []string

	// Install are the commands that install the adapter's dependencies in
	// its directory, in order; each is a program and its arguments, the
	// program relative to the directory when it starts with "./".
	Install [][]string

	// Command returns the command line that starts the adapter of stack
	// in installed directory dir.
	Command func(dir, stack string) []string
}

// Stacks lists every external client stack, in display order. It is a
// function so that no caller can change the registry.
func Stacks() []Stack {
	return append(nodeStacks(nodeFamily()), pythonStacks(pythonFamily())...)
}

// Names lists every client name a workload may write, go first.
func Names() []string {
	names := []string{Go}
	for _, s := range Stacks() {
		names = append(names, s.Name)
	}

	return names
}

// Lookup returns the external stack called name; false for go and for
// unknown names.
func Lookup(name string) (Stack, bool) {
	for _, s := range Stacks() {
		if s.Name == name {
			return s, true
		}
	}

	return Stack{}, false
}

// Libraries lists the libraries whose version names a stack, ODMs first:
// an ODM's adapter reports the driver beneath it too, and the ODM is what
// the user chose. Each library appears once, in registry order.
func Libraries() []string {
	var odm, other []string

	for _, s := range Stacks() {
		switch {
		case slices.Contains(odm, s.Library) || slices.Contains(other, s.Library):
		case s.ODM:
			odm = append(odm, s.Library)
		default:
			other = append(other, s.Library)
		}
	}

	return append(odm, other...)
}

// TitleVersion returns the library that names a run's client stack and its
// version, from the versions its adapter reported; empty when none of them
// is known. It goes by the reported libraries, not the stack's name, so
// that a results file of a stack since renamed or removed still says what
// ran.
func TitleVersion(versions map[string]string) (library, version string) {
	for _, lib := range Libraries() {
		if v := versions[lib]; v != "" {
			return lib, v
		}
	}

	return "", ""
}

// External reports whether name is an external stack (anything but go or
// empty, which means go).
func External(name string) bool { return name != "" && name != Go }

// CheckName returns an error for a name that is no client.
func CheckName(name string) error {
	if name == "" || slices.Contains(Names(), name) {
		return nil
	}

	return fmt.Errorf("unknown client %q (known: %s)", name, strings.Join(Names(), ", "))
}

// String describes the stack for messages and headers.
func (s Stack) String() string { return fmt.Sprintf("%s (%s)", s.Name, s.Describe) }

// Through names the external client stack of a run for the table's
// title ("… through node-mongoose (mongoose 8.24.10)"); empty for the Go
// engine.
func Through(c *result.Client) string {
	if c == nil {
		return ""
	}

	out := " through " + c.Stack

	if lib, v := TitleVersion(c.Versions); v != "" {
		return out + " (" + lib + " " + v + ")"
	}

	return out
}

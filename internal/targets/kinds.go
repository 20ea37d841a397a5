package targets

import (
	"context"
	"fmt"
	"strings"

	"github.com/mongobench/mongobench/internal/spec/targetspec"
)

// Kind is one kind of target: the name workloads, --target flags and
// results files use for it, and how mongobench checks and starts it. Each
// kind lives in a file of its own (kind_*.go, with its test) and is found
// through the registry, kinds; workload validation, --target parsing,
// Launch and results checking all ask the registry, so that adding a kind
// is adding a file and one line there.
type Kind struct {
	// Name is the kind's name, e.g. "ferretdb-postgres".
	Name string

	// Description says in one sentence what serves the load.
	Description string

	// Launched is true when mongobench starts the server itself (and
	// stops it after the run), false when it uses an existing deployment.
	Launched bool

	// Default is true for the one kind a run uses when it is given neither
	// a target nor a connection string.
	Default bool

	// Existing is true for the one kind that names an existing deployment
	// by its connection string, the kind --uri means.
	Existing bool

	// setting applies one key=value setting of a --target flag other than
	// name; nil means the kind takes none.
	setting func(t *TargetSpec, key, value string) error

	// flag parses what follows "kind:" in a --target flag when the kind
	// writes it other than as comma-separated key=value settings (a
	// connection string); nil means settings, applied by setting.
	flag func(t *TargetSpec, rest string) error

	// defaults fills in what a spec of this kind parsed from a flag has
	// even without settings; nil means nothing.
	defaults func(t *TargetSpec)

	// validate checks the fields of a spec of this kind, reporting a
	// problem as a *FieldError.
	validate func(t TargetSpec) error

	// launch starts the server, filling in l's URI, Description and Notes;
	// Launch stops what it started when it fails.
	launch func(ctx context.Context, l *Launched, opts LaunchOptions) error
}

// kinds is the registry of target kinds, in the order help texts name them.
// It is a function rather than a variable so that no caller can change it.
func kinds() []Kind {
	return []Kind{embeddedKind(), embeddedMemoryKind(), ferretDBPostgresKind(), mongodKind(), uriKind()}
}

// Kinds returns every target kind, in the order help texts name them.
func Kinds() []Kind {
	return kinds()
}

// KindNames returns the names of the target kinds, in registry order.
func KindNames() []string {
	ks := kinds()
	names := make([]string, len(ks))

	for i, k := range ks {
		names[i] = k.Name
	}

	return names
}

// LookupKind returns the target kind called name.
func LookupKind(name string) (Kind, bool) {
	for _, k := range kinds() {
		if k.Name == name {
			return k, true
		}
	}

	return Kind{}, false
}

// Existing returns a target of the kind that uses the deployment at uri as
// it is (what --uri means), named name, or after its kind when name is
// empty.
func Existing(name, uri string) TargetSpec {
	kind := only(func(k Kind) bool { return k.Existing })
	if name == "" {
		name = kind
	}

	return TargetSpec{Name: name, Kind: kind, URI: uri}
}

// DefaultSpec returns the target of a run given no targets: the deployment
// at uri when one is given (see Existing), else the default kind, named
// after it.
func DefaultSpec(uri string) TargetSpec {
	if uri != "" {
		return Existing("", uri)
	}

	kind := only(func(k Kind) bool { return k.Default })

	return TargetSpec{Name: kind, Kind: kind}
}

// only returns the name of the kind that has a property the registry gives
// exactly one kind (a test checks that it does).
func only(has func(Kind) bool) string {
	for _, k := range kinds() {
		if has(k) {
			return k.Name
		}
	}

	return ""
}

// KindList names the kinds for messages: "a, b, c or d".
func KindList() string {
	names := KindNames()
	if len(names) < 2 {
		return strings.Join(names, "")
	}

	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// FieldError is a problem with one field of a target spec (see package
// targetspec).
type FieldError = targetspec.FieldError

// fieldErrorf returns a *FieldError for field.
func fieldErrorf(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// onlyFields rejects the fields of t that its kind does not take: a
// connection string (uri kinds), PostgreSQL settings (ferretdb-postgres)
// and mongod options (mongod).
func onlyFields(t TargetSpec, uri, settings, mongod bool) error {
	switch {
	case uri && strings.TrimSpace(t.URI) == "":
		return fieldErrorf("uri", "%s targets need a connection string", t.Kind)
	case !uri && t.URI != "":
		return fieldErrorf("uri", "%s targets take no connection string; only uri targets do", t.Kind)
	case !settings && len(t.Settings) > 0:
		return fieldErrorf("settings", "settings apply to ferretdb-postgres targets (PostgreSQL settings), not to %s targets", t.Kind)
	case !mongod && t.Mongod != nil:
		return fieldErrorf("mongod", "mongod options apply to mongod targets only, not to %s targets", t.Kind)
	}

	return nil
}

// errNoSettings is the setting function of kinds that take none.
func errNoSettings(t *TargetSpec, key, _ string) error {
	return fmt.Errorf("%s targets take no settings other than name, got %q", t.Kind, key)
}

// errUnknownKind is Validate's error for a kind not in the registry.
func errUnknownKind(kind string) error {
	return &FieldError{Field: "kind", Err: fmt.Errorf("unknown target kind %q (want %s)", kind, KindList())}
}

package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// ferretDBModulePath is the module of the embedded server, whose linked
// version `mongobench version` reports.
const ferretDBModulePath = "github.com/FerretDB/FerretDB"

// requiredFerretDB is the FerretDB version go.mod requires, reported when
// the binary carries no dependency list (test binaries). FerretDB's own
// version package reports "unknown" to embedders, so it cannot be asked.
// TestRequiredFerretDBMatchesGoMod keeps it in step with go.mod.
const requiredFerretDB = "v1.24.0"

func newVersionCommand(st *State) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print mongobench's version, commit, Go version and embedded FerretDB version",
		Long: `version prints mongobench's module version, the commit it was built from (with
"modified" when the working tree had uncommitted changes), the Go toolchain
and platform, and the version of the embedded FerretDB.

The commit is known only for binaries built with "go build" or "go install"
inside a git clone; "go run" and builds with -buildvcs=false do not record it,
and the line then says so.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprint(st.Stdout, currentBuild().String())
			return nil
		},
	}
}

// buildDescription is what the binary knows about how it was built.
type buildDescription struct {
	// Module is the main module's version: a tag, a pseudo-version such as
	// v0.0.0-20250304100000-0123456789ab+dirty, or "(devel)".
	Module string

	// Revision, Time and Modified come from the VCS stamp; Revision is
	// empty when the build recorded none.
	Revision string
	Time     string
	Modified bool

	// Go is the toolchain version, e.g. go1.26.0.
	Go string

	// FerretDB is the linked FerretDB module version.
	FerretDB string
}

// currentBuild reads the running binary's build information.
func currentBuild() buildDescription {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return buildDescription{Module: "(devel)", Go: runtime.Version(), FerretDB: requiredFerretDB}
	}

	return describeBuild(bi)
}

// describeBuild extracts the version facts from build information.
func describeBuild(bi *debug.BuildInfo) buildDescription {
	d := buildDescription{Module: bi.Main.Version, Go: bi.GoVersion, FerretDB: requiredFerretDB}
	if d.Module == "" {
		d.Module = "(devel)"
	}

	if d.Go == "" {
		d.Go = runtime.Version()
	}

	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			d.Revision = s.Value
		case "vcs.time":
			d.Time = s.Value
		case "vcs.modified":
			d.Modified = s.Value == "true"
		}
	}

	for _, dep := range bi.Deps {
		if dep.Path != ferretDBModulePath {
			continue
		}

		d.FerretDB = dep.Version
		if dep.Replace != nil && dep.Replace.Version != "" {
			d.FerretDB = dep.Replace.Version
		}
	}

	return d
}

// Short is the version recorded in results files: the module version when
// it is a release or pseudo-version, else "devel" with the commit's first
// 12 hex digits and "-dirty" for a modified tree.
func (d buildDescription) Short() string {
	if d.Module != "(devel)" {
		return d.Module
	}

	if len(d.Revision) < 12 {
		return "devel"
	}

	v := "devel-" + d.Revision[:12]
	if d.Modified {
		v += "-dirty"
	}

	return v
}

// String is the text of `mongobench version`, one fact per line.
func (d buildDescription) String() string {
	var b strings.Builder

	fmt.Fprintf(&b, "mongobench %s\n", d.Module)

	if d.Revision == "" {
		b.WriteString("commit:   unknown (not recorded: built with go run, outside a git clone, or with -buildvcs=false)\n")
	} else {
		state := "clean"
		if d.Modified {
			state = "uncommitted changes"
		}

		fmt.Fprintf(&b, "commit:   %s (%s", d.Revision, state)

		if d.Time != "" {
			fmt.Fprintf(&b, "; committed %s", d.Time)
		}

		b.WriteString(")\n")
	}

	fmt.Fprintf(&b, "go:       %s %s/%s\n", d.Go, runtime.GOOS, runtime.GOARCH)

	fmt.Fprintf(&b, "ferretdb: %s (embedded)\n", d.FerretDB)

	return b.String()
}

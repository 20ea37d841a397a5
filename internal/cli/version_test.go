package cli

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// buildInfoText is build information in the form `go version -m` prints,
// as a `go build` in a git clone with uncommitted changes records it.
const buildInfoText = "path\tgithub.com/mongobench/mongobench/cmd/mongobench\n" +
	"mod\tgithub.com/mongobench/mongobench\tv0.0.0-20261123133437-8c58248d478a+dirty\t\n" +
	"dep\tgithub.com/FerretDB/FerretDB\tv1.24.0\th1:abc=\n" +
	"build\t-buildmode=exe\n" +
	"build\tvcs=git\n" +
	"build\tvcs.revision=8c58248d478aa26299c6eeb92848b5d112a07a56\n" +
	"build\tvcs.time=2026-11-23T13:34:37Z\n" +
	"build\tvcs.modified=true\n"

func TestDescribeBuild(t *testing.T) {
	t.Parallel()

	bi, err := debug.ParseBuildInfo(buildInfoText)
	if err != nil {
		t.Fatal(err)
	}

	bi.GoVersion = "go1.26.0" // ParseBuildInfo skips the go line

	d := describeBuild(bi)

	for _, want := range []string{
		"mongobench v0.0.0-20261123133437-8c58248d478a+dirty\n",
		"commit:   8c58248d478aa26299c6eeb92848b5d112a07a56 (uncommitted changes; committed 2026-11-23T13:34:37Z)\n",
		"go:       go1.26.0 ",
		"ferretdb: v1.24.0 (embedded)\n",
	} {
		if !strings.Contains(d.String(), want) {
			t.Errorf("version text lacks %q:\n%s", want, d)
		}
	}

	if got := d.Short(); got != "v0.0.0-20261123133437-8c58248d478a+dirty" {
		t.Errorf("Short() = %q, want the module's pseudo-version", got)
	}
}

func TestDescribeBuildWithoutVCS(t *testing.T) {
	t.Parallel()

	// go run records no VCS stamp and "(devel)" as the module version.
	bi, err := debug.ParseBuildInfo("go\tgo1.26.0\npath\tcommand-line-arguments\nmod\tgithub.com/mongobench/mongobench\t(devel)\t\n" +
		"dep\tgithub.com/FerretDB/FerretDB\tv1.24.0\th1:abc=\n")
	if err != nil {
		t.Fatal(err)
	}

	d := describeBuild(bi)
	if !strings.Contains(d.String(), "commit:   unknown (not recorded") {
		t.Errorf("version text does not say the commit is unknown:\n%s", d)
	}

	if d.Short() != "devel" {
		t.Errorf("Short() = %q, want devel", d.Short())
	}

	// An old-style devel build with a VCS stamp: the short form carries
	// the commit and the dirty flag.
	d.Revision, d.Modified = "0123456789abcdef0123", true
	if got := d.Short(); got != "devel-0123456789ab-dirty" {
		t.Errorf("Short() = %q, want devel-0123456789ab-dirty", got)
	}
}

// TestRequiredFerretDBMatchesGoMod checks the fallback FerretDB version
// against go.mod, so that an upgrade cannot leave it behind.
func TestRequiredFerretDBMatchesGoMod(t *testing.T) {
	t.Parallel()

	data, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}

	want := "\t" + ferretDBModulePath + " " + requiredFerretDB + "\n"
	if !strings.Contains(string(data), want) {
		t.Errorf("go.mod does not require %s %s; update requiredFerretDB in version.go", ferretDBModulePath, requiredFerretDB)
	}
}

package client

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// shFamily is a family whose runtime is sh and whose install command is
// given: the installer's logic without a registry.
func shFamily(install ...string) *Family {
	return &Family{
		Name: "fam", Runtime: "sh", VersionArgs: []string{"-c", "echo sh 1"},
		Install: [][]string{append([]string{"sh", "-c"}, install...)},
		Command: func(dir, stack string) []string { return []string{"sh", filepath.Join(dir, "adapter.sh"), stack} },
	}
}

// TestInstall checks extraction (sources only, not what a checkout holds
// besides them), the install state before and after, the content-hashed
// directory, and that a failed install leaves no installed marker.
func TestInstall(t *testing.T) {
	t.Parallel()

	src := fstest.MapFS{
		"fam/adapter.sh":              {Data: []byte("echo hi\n")},
		"fam/lib/util.sh":             {Data: []byte("true\n")},
		"fam/node_modules/x/index.js": {Data: []byte("junk")},
		"fam/__pycache__/a.pyc":       {Data: []byte("junk")},
		"fam/test/adapter.test.js":    {Data: []byte("junk")},
		"other/adapter.py":            {Data: []byte("not this family")},
	}

	var out bytes.Buffer

	in := &Installer{Sources: src, Cache: t.TempDir(), Output: &out}
	ctx := context.Background()

	fail := shFamily("echo resolving; exit 3")

	st, err := in.State(ctx, fail)
	if err != nil {
		t.Fatal(err)
	}

	if st.Status() != "not installed" || st.Runtime != "sh 1" {
		t.Fatalf("before install: %+v (%s)", st, st.Status())
	}

	err = in.Install(ctx, fail)
	if err == nil || !strings.Contains(err.Error(), "installing the fam adapter: sh -c echo resolving; exit 3 failed: exit status 3") {
		t.Fatalf("failed install: %v", err)
	}

	if !strings.Contains(out.String(), "resolving") {
		t.Errorf("the install command's output was not shown:\n%s", out.String())
	}

	if st, _ := in.State(ctx, fail); st.Installed {
		t.Fatal("a failed install counts as installed")
	}

	ok := shFamily("echo done > installed.txt")
	if err := in.Install(ctx, ok); err != nil {
		t.Fatal(err)
	}

	st, err = in.State(ctx, ok)
	if err != nil || !st.Installed || st.Status() != "ready" {
		t.Fatalf("after install: %+v %v", st, err)
	}

	if filepath.Dir(st.Dir) != filepath.Join(in.Cache, "fam") || len(filepath.Base(st.Dir)) != 16 {
		t.Errorf("installed into %s, want %s/<16 hex digits>", st.Dir, filepath.Join(in.Cache, "fam"))
	}

	for _, f := range []string{"adapter.sh", "lib/util.sh", "installed.txt"} {
		if _, err := os.Stat(filepath.Join(st.Dir, f)); err != nil {
			t.Errorf("%s missing: %v", f, err)
		}
	}

	for _, f := range []string{"node_modules", "__pycache__", "test", "adapter.py"} {
		if _, err := os.Stat(filepath.Join(st.Dir, f)); err == nil {
			t.Errorf("%s was extracted", f)
		}
	}

	// Other sources install elsewhere.
	src["fam/adapter.sh"] = &fstest.MapFile{Data: []byte("echo changed\n")}

	st2, err := in.State(ctx, ok)
	if err != nil || st2.Dir == st.Dir || st2.Installed {
		t.Errorf("changed sources: %+v %v, want another directory, not installed", st2, err)
	}
}

// TestCommandNotInstalled checks the one-line error naming the install
// command, and that a missing runtime is said as such.
func TestCommandNotInstalled(t *testing.T) {
	t.Parallel()

	src := fstest.MapFS{"fam/adapter.sh": {Data: []byte("echo hi\n")}}
	in := &Installer{Sources: src, Cache: t.TempDir()}

	f := shFamily("true")
	s := Stack{Name: "fam-stack", Family: f}

	_, err := in.Command(context.Background(), s)
	if !IsNotInstalled(err) || err.Error() != "client fam-stack is not installed: run mongobench clients install fam-stack" {
		t.Errorf("got %v", err)
	}

	f.Runtime = "no-such-runtime-mongobench"

	_, err = in.Command(context.Background(), s)
	if err == nil || err.Error() != "client fam-stack needs no-such-runtime-mongobench, which is not on PATH" {
		t.Errorf("got %v", err)
	}
}

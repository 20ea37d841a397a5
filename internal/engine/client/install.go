package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// installedMarker is written into an installed directory after its install
// commands succeeded: a directory without it is an interrupted install.
const installedMarker = ".mongobench-installed"

// Installer extracts the embedded adapters' sources into the user's cache
// and installs their dependencies there, never into the system: a Node.js
// node_modules directory, a Python virtual environment. Each family's
// directory is named by the hash of its sources, so that a new mongobench
// with other adapters installs beside an older one instead of over it.
type Installer struct {
	// Sources is the tree of the adapters' sources, one directory per
	// family (package clients).
	Sources fs.FS

	// Cache is the root of installed adapters, see CacheDir.
	Cache string

	// Output receives the install commands' output.
	Output io.Writer
}

// CacheDir is where adapters are installed: $XDG_CACHE_HOME, else the
// user cache directory of the operating system, then mongobench/clients.
func CacheDir(getenv func(string) string) (string, error) {
	base := getenv("XDG_CACHE_HOME")
	if base == "" {
		var err error
		if base, err = os.UserCacheDir(); err != nil {
			return "", fmt.Errorf("finding the cache directory for client adapters: %w", err)
		}
	}

	return filepath.Join(base, "mongobench", "clients"), nil
}

// Dir is family f's installed directory for these sources.
func (in *Installer) Dir(f *Family) (string, error) {
	h, err := sourceHash(in.Sources, f.Name)
	if err != nil {
		return "", err
	}

	return filepath.Join(in.Cache, f.Name, h), nil
}

// sourceHash is the first 16 hex digits of the SHA-256 of the family's
// files, names and contents, in name order.
func sourceHash(fsys fs.FS, dir string) (string, error) {
	files, err := sourceFiles(fsys, dir)
	if err != nil {
		return "", err
	}

	h := sha256.New()

	for _, name := range files {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return "", err
		}

		fmt.Fprintf(h, "%s\x00%d\x00", name, len(data))
		h.Write(data)
	}

	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// sourceFiles lists the family's files, skipping what a developer's
// checkout may hold besides the sources.
func sourceFiles(fsys fs.FS, dir string) ([]string, error) {
	var files []string

	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}

		if d.IsDir() && p != dir && slices.Contains([]string{"node_modules", "__pycache__", "venv", "test", "tests"}, d.Name()) {
			return fs.SkipDir
		}

		if !d.IsDir() {
			files = append(files, p)
		}

		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("the %s adapter's sources are missing from this build: %w", dir, err)
	}

	slices.Sort(files)

	return files, nil
}

// State is a family's install state.
type State struct {
	// Runtime is the runtime's version ("v20.20.2", "Python 3.11.2"),
	// empty when it is not on PATH.
	Runtime string

	// Installed is true when the adapter of these sources is installed.
	Installed bool

	// Dir is the installed directory (whether or not it exists).
	Dir string
}

// Status says in a word what State means: ready, not installed, or
// runtime missing.
func (s State) Status() string {
	switch {
	case s.Runtime == "":
		return "runtime missing"
	case !s.Installed:
		return "not installed"
	}

	return "ready"
}

// State returns family f's install state.
func (in *Installer) State(ctx context.Context, f *Family) (State, error) {
	dir, err := in.Dir(f)
	if err != nil {
		return State{}, err
	}

	st := State{Dir: dir, Runtime: runtimeVersion(ctx, f)}

	if _, err := os.Stat(filepath.Join(dir, installedMarker)); err == nil {
		st.Installed = true
	}

	return st, nil
}

// runtimeVersion runs the family's runtime for its version; empty when it
// is not on PATH or does not answer.
func runtimeVersion(ctx context.Context, f *Family) string {
	prog, err := exec.LookPath(f.Runtime)
	if err != nil {
		return ""
	}

	out, err := exec.CommandContext(ctx, prog, f.VersionArgs...).CombinedOutput() //nolint:gosec // a registered runtime
	if err != nil {
		return ""
	}

	return strings.TrimSpace(string(out))
}

// Install extracts family f's sources and runs its install commands, with
// their output shown, unless it is installed already. A failure leaves no
// marker, so the next install starts over.
func (in *Installer) Install(ctx context.Context, f *Family) error {
	st, err := in.State(ctx, f)
	if err != nil {
		return err
	}

	if st.Runtime == "" {
		return fmt.Errorf("installing the %s adapter: %s is not on PATH", f.Name, f.Runtime)
	}

	if st.Installed {
		fmt.Fprintf(in.Output, "%s adapter: already installed in %s\n", f.Name, st.Dir)
		return nil
	}

	if err := os.RemoveAll(st.Dir); err != nil {
		return fmt.Errorf("installing the %s adapter: clearing %s: %w", f.Name, st.Dir, err)
	}

	if err := in.extract(f.Name, st.Dir); err != nil {
		return fmt.Errorf("installing the %s adapter: %w", f.Name, err)
	}

	fmt.Fprintf(in.Output, "%s adapter: installing into %s\n", f.Name, st.Dir)

	for _, args := range f.Install {
		prog := args[0]
		if strings.HasPrefix(prog, "./") {
			prog = filepath.Join(st.Dir, prog)
		}

		fmt.Fprintf(in.Output, "$ %s\n", strings.Join(args, " "))

		cmd := exec.CommandContext(ctx, prog, args[1:]...) //nolint:gosec // the family's own install commands
		cmd.Dir = st.Dir
		cmd.Stdout, cmd.Stderr = in.Output, in.Output

		if err := cmd.Run(); err != nil {
			return fmt.Errorf("installing the %s adapter: %s failed: %w (its output is above)", f.Name, strings.Join(args, " "), err)
		}
	}

	return os.WriteFile(filepath.Join(st.Dir, installedMarker), []byte("ok\n"), 0o600)
}

// extract copies the family's sources into dir.
func (in *Installer) extract(family, dir string) error {
	files, err := sourceFiles(in.Sources, family)
	if err != nil {
		return err
	}

	for _, name := range files {
		data, err := fs.ReadFile(in.Sources, name)
		if err != nil {
			return err
		}

		rel := strings.TrimPrefix(name, family+"/")
		dst := filepath.Join(dir, filepath.FromSlash(rel))

		if err := os.MkdirAll(filepath.Dir(dst), 0o750); err != nil {
			return err
		}

		if err := os.WriteFile(dst, data, 0o600); err != nil {
			return err
		}
	}

	return nil
}

// Command returns the command line that starts stack's adapter, or an
// error saying how to install it: a one-line message naming `mongobench
// clients install STACK`.
func (in *Installer) Command(ctx context.Context, s Stack) ([]string, error) {
	st, err := in.State(ctx, s.Family)
	if err != nil {
		return nil, err
	}

	if st.Runtime == "" {
		return nil, fmt.Errorf("client %s needs %s, which is not on PATH", s.Name, s.Family.Runtime)
	}

	if !st.Installed {
		return nil, &NotInstalledError{Stack: s.Name}
	}

	return s.Family.Command(st.Dir, s.Name), nil
}

// NotInstalledError is a stack whose adapter is not installed.
type NotInstalledError struct{ Stack string }

func (e *NotInstalledError) Error() string {
	return fmt.Sprintf("client %s is not installed: run mongobench clients install %s", e.Stack, e.Stack)
}

// IsNotInstalled reports whether err says a stack is not installed.
func IsNotInstalled(err error) bool {
	var ni *NotInstalledError
	return errors.As(err, &ni)
}

// FamiliesOf returns the families of the named stacks (all when none is
// named), once each, or an error for a name that is no external stack.
func FamiliesOf(names []string) ([]*Family, error) {
	var out []*Family

	seen := map[string]bool{}

	add := func(f *Family) {
		if !seen[f.Name] {
			seen[f.Name] = true
			out = append(out, f)
		}
	}

	if len(names) == 0 {
		for _, s := range Stacks() {
			add(s.Family)
		}

		return out, nil
	}

	for _, n := range names {
		s, ok := Lookup(n)
		if !ok {
			var ext []string
			for _, s := range Stacks() {
				ext = append(ext, s.Name)
			}

			return nil, fmt.Errorf("unknown client stack %q (installable: %s)", n, strings.Join(ext, ", "))
		}

		add(s.Family)
	}

	return out, nil
}

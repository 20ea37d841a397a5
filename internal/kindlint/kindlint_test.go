package kindlint_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mongobench/mongobench/internal/engine/client"
	"github.com/mongobench/mongobench/internal/spec/opkind"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/targets"
)

// family is one registry of kinds: its names, as the registry lists them,
// and the files that make up the registry (path.Match patterns relative to
// the repository's root), the only ones allowed to spell the names.
type family struct {
	name     string
	names    []string
	registry []string
}

// families are the registries this test guards.
func families() []family {
	return []family{
		{"target kind", targets.KindNames(), []string{"internal/targets/kinds.go", "internal/targets/kind_*.go"}},
		{"operation kind", opkind.Names(), []string{"internal/spec/opkind/opkind.go", "internal/engine/op/kind_*.go"}},
		{"load model", workload.LoadModelNames(), []string{"internal/spec/workload/loadmodel.go"}},
		{"client stack", client.Names(), []string{"internal/engine/client/stack.go", "internal/engine/client/stack_*.go"}},
	}
}

// exception is a string literal outside the registries that spells a kind
// name but means something else (a YAML field, a flag, a MongoDB command,
// a program), or a known use in a package another change owns. Path is a
// file, or a directory ending in "/".
type exception struct {
	path, literal, why string
}

// exceptions are the allowed spellings, each with its reason. Each must
// still match a literal, so that the list shrinks as code moves.
func exceptions() []exception {
	const (
		flag    = "the --uri flag's name, not the target kind"
		field   = "a workload file's field name, not the kind of the same name"
		command = "a MongoDB command name sent on the wire, not the operation kind"
		unit    = "a chart axis unit (operations per second), not the load model"
	)

	return []exception{
		{"internal/cli/calibrate.go", "uri", flag},
		{"internal/cli/capacity.go", "uri", flag},
		{"internal/cli/kube.go", "uri", flag},
		{"internal/cli/output.go", "uri", flag},
		{"internal/cli/run.go", "uri", flag},
		{"internal/lab/plan/targets.go", "uri", "the uri field of a workload's target, in a field path"},
		{"internal/lab/kube/defaults.go", "uri", "the default key of the connection string in a Kubernetes Secret"},
		{"internal/spec/workload/targets.go", "mongod", field + " (targets[i].mongod.binary)"},
		{"internal/spec/workload/phase.go", "rate", field},
		{"internal/spec/workload/phase.go", "blocks", field},
		{"internal/spec/workload/strict.go", "rate", field},
		{"internal/targets/mongod.go", "mongod", "the mongod program's name, looked up on PATH and shown in descriptions"},
		{"internal/targets/ownership.go", "drop", "an ownership check's action (may this database be dropped), not the operation kind"},
		{"internal/engine/op/explain.go", "find", command},
		{"internal/targets/wiretest/", "find", command + " (a test server of the protocol)"},
		{"internal/targets/wiretest/", "aggregate", command + " (a test server of the protocol)"},
		{"internal/targets/wiretest/", "drop", command + " (a test server of the protocol)"},
		{"internal/targets/wiretest/", "createIndexes", command + " (a test server of the protocol)"},
		{"internal/report/", "rate", unit},
		{"internal/spec/capture/", "find", command + " read from a server's log"},
		{"internal/spec/capture/", "aggregate", command + " read from a server's log"},
		{"internal/spec/capture/", "createIndexes", command + " read from a server's log"},
		{"internal/spec/capture/workload.go", "rate", field},
	}
}

// hit is a string literal that spells a kind name.
type hit struct {
	file    string // slash-separated, relative to the scanned root
	line    int
	literal string
}

// scan returns every string literal of the non-test Go files under root
// that equals one of names. Import paths and struct tags are not looked
// at; testdata, hidden and node_modules directories are skipped.
func scan(root string, names []string) ([]hit, error) {
	var hits []hit

	fset := token.NewFileSet()

	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}

		if d.IsDir() {
			if p != root && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}

			return nil
		}

		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}

		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}

		f, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}

		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}

		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ImportSpec:
				return false
			case *ast.Field:
				// Visit the field's type, not its tag (names hold no literals).
				return inspectType(n.Type, func(lit *ast.BasicLit) { hits = appendHit(hits, fset, rel, lit, names) })
			case *ast.BasicLit:
				hits = appendHit(hits, fset, rel, n, names)
			}

			return true
		})

		return nil
	})

	return hits, err
}

// inspectType visits the literals of a field's type (array lengths and
// the like) and stops the walk from reaching the field's tag.
func inspectType(t ast.Expr, visit func(*ast.BasicLit)) bool {
	if t != nil {
		ast.Inspect(t, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok {
				visit(lit)
			}

			return true
		})
	}

	return false
}

// appendHit adds lit to hits when it is a string equal to one of names.
func appendHit(hits []hit, fset *token.FileSet, file string, lit *ast.BasicLit, names []string) []hit {
	if lit.Kind != token.STRING {
		return hits
	}

	v, err := strconv.Unquote(lit.Value)
	if err != nil || !slices.Contains(names, v) {
		return hits
	}

	return append(hits, hit{file: filepath.ToSlash(file), line: fset.Position(lit.Pos()).Line, literal: v})
}

// matches reports whether file is one of patterns (path.Match patterns or
// directories ending in "/").
func matches(file string, patterns ...string) bool {
	for _, p := range patterns {
		if strings.HasSuffix(p, "/") && strings.HasPrefix(file, p) {
			return true
		}

		if ok, _ := path.Match(p, file); ok {
			return true
		}
	}

	return false
}

// TestKindsOnlyInRegistries fails when a registered kind name is written
// as a string literal outside its registry, so that every other place asks
// the registry (a kind's properties, or its name constant), and adding a
// kind is its registry file and its test.
func TestKindsOnlyInRegistries(t *testing.T) {
	t.Parallel()

	root := filepath.Join("..", "..")
	exc := exceptions()
	used := make([]bool, len(exc))

	for _, fam := range families() {
		if len(fam.names) == 0 {
			t.Fatalf("%s registry lists no names", fam.name)
		}

		hits, err := scan(root, fam.names)
		if err != nil {
			t.Fatal(err)
		}

		inRegistry := 0

		for _, h := range hits {
			if matches(h.file, fam.registry...) {
				inRegistry++
				continue
			}

			allowed := false

			for i, e := range exc {
				if e.literal == h.literal && matches(h.file, e.path) {
					used[i], allowed = true, true
				}
			}

			if !allowed {
				t.Errorf("%s:%d: %s %q written as a literal outside its registry (%s): ask the registry, or use its constant",
					h.file, h.line, fam.name, h.literal, strings.Join(fam.registry, ", "))
			}
		}

		if inRegistry < len(fam.names) {
			t.Errorf("%s: only %d of %d names found in the registry files %v; is the list of registry files stale?",
				fam.name, inRegistry, len(fam.names), fam.registry)
		}
	}

	for i, e := range exc {
		if e.why == "" {
			t.Errorf("exception %s %q gives no reason", e.path, e.literal)
		}

		if !used[i] {
			t.Errorf("exception %s %q matches no literal any more; remove it", e.path, e.literal)
		}
	}
}

// TestScanFindsLiterals checks the scanner itself on a small tree: a kind
// name in code is found with its line, one in a struct tag, an import path,
// a test file or testdata is not, and neither is a longer string holding
// the name.
func TestScanFindsLiterals(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()

		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}

		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	write("a/a.go", "package a\n\nimport _ \"x/widget\"\n\ntype T struct {\n\tW string `yaml:\"widget\"`\n}\n\nvar n = \"widget\"\n\nvar m = `widget`\n\nvar s = \"widget pieces\"\n")
	write("a/a_test.go", "package a\n\nvar t = \"widget\"\n")
	write("a/testdata/b.go", "package b\n\nvar t = \"widget\"\n")

	hits, err := scan(dir, []string{"widget", "x/widget"})
	if err != nil {
		t.Fatal(err)
	}

	got := fmt.Sprint(hits)
	want := fmt.Sprint([]hit{{"a/a.go", 9, "widget"}, {"a/a.go", 11, "widget"}})

	if got != want {
		t.Errorf("hits %s, want %s", got, want)
	}
}

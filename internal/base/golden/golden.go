// Package golden compares what a test produced with an expected file in
// testdata, for tests only. Rewriting an expected file is an explicit step
// that never passes: with -update, Check writes the file and fails the test,
// saying which file was rewritten, so that a run with -update can never be
// mistaken for a passing one and the change is reviewed in git diff before
// the tests are run again without it.
package golden

import (
	"bytes"
	"flag"
	"os"
	"strconv"
	"strings"
	"testing"
)

// update is the -update flag of every test binary that imports this
// package. A flag is the test tool's own way to take an argument
// (go test ./pkg -run Golden -args -update); nothing else sets it.
var update = flag.Bool("update", false, "rewrite the golden files in testdata, then fail so that the diff is reviewed")

// Check compares got with the contents of the file at path. With -update it
// writes got to path instead and fails the test.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()

	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil { //nolint:gosec // testdata is meant to be readable
			t.Fatal(err)
		}

		t.Errorf("golden file %s rewritten; review git diff, then run the tests again without -update", path)

		return
	}

	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (create it with: go test -run %s -args -update)", err, t.Name())
	}

	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (if the change is intended: go test -run %s -args -update, then review git diff):\n%s",
			path, t.Name(), FirstDiff(string(want), string(got)))
	}
}

// FirstDiff shows the first line where want and got differ.
func FirstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(wl), len(gl)) {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}

		if i < len(gl) {
			g = gl[i]
		}

		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + clip(w) + "\n  got:  " + clip(g)
		}
	}

	return "(no line differs)"
}

// clip shortens a long line for a message.
func clip(s string) string {
	const n = 200
	if len(s) <= n {
		return s
	}

	return s[:n] + "…"
}

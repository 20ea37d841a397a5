package yamlpos

import "testing"

// TestErrorIsOneLine: a message built from input (a YAML tag can carry a
// percent-encoded newline) is printed on one line, its control characters
// escaped, so that "file:line: message" stays one line a user and an
// editor can read.
func TestErrorIsOneLine(t *testing.T) {
	e := &Error{File: "w.yaml", Line: 3, Column: 5, Path: "a\tb", Msg: "must be a mapping, not !0\n x\r"}

	const want = `w.yaml:3:5: a\tb: must be a mapping, not !0\n x\r`
	if got := e.Error(); got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}

	plain := &Error{File: "w.yaml", Line: 1, Path: "name", Msg: "must be a string, not the string \"é\""}
	if got, want := plain.Error(), `w.yaml:1: name: must be a string, not the string "é"`; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}

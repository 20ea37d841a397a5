package blocked

import (
	"os"
	"testing"
	"time"
)

// readAll blocks reading r; a named function, so that its frame can be
// looked for.
func readAll(r *os.File, done chan<- struct{}) {
	buf := make([]byte, 1)
	_, _ = r.Read(buf)
	close(done)
}

// TestInFindsAReaderOfAPipe: a goroutine reading a silent pipe is found
// blocked in its function; after the writer closes it is not.
func TestInFindsAReaderOfAPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	if Now(make([]byte, 1024), "blocked.readAll") {
		t.Fatal("found a blocked readAll before any was started")
	}

	done := make(chan struct{})
	go readAll(r, done)

	In(t, "blocked.readAll", 10*time.Second)

	w.Close()
	<-done

	if Now(make([]byte, 1024), "blocked.readAll") {
		t.Fatal("readAll is still reported blocked after it returned")
	}
}

// Package blocked lets a test wait until a goroutine is blocked in a given
// function (reading a pipe, waiting in a select), for tests only.
//
// A test that sends a signal or cancels a context "while the command is
// blocked reading its input" must know that the command got there; a sleep
// only makes it likely, and on a busy machine not even that. The goroutine
// dump says it exactly: a goroutine blocked in a read of a pipe shows the
// read's function in its stack and a waiting state ("IO wait", "select",
// "chan receive", "syscall") in its header.
package blocked

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// waiting are the goroutine states of one that waits for something outside
// it: the poller (a pipe, a socket), a select, a channel or a system call.
var waiting = []string{"[IO wait", "[select", "[chan receive", "[syscall", "[sync.Cond.Wait", "[semacquire"}

// In returns once some goroutine is waiting (see waiting) with fn in its
// stack, fn being a qualified function name such as
// "inputfile.ReadLimit"; it fails the test if none is within limit. It
// polls the goroutine dump: the condition is the goroutine's state, not
// the passing of time.
func In(tb testing.TB, fn string, limit time.Duration) {
	tb.Helper()

	deadline := time.NewTimer(limit)
	defer deadline.Stop()

	poll := time.NewTicker(time.Millisecond)
	defer poll.Stop()

	buf := make([]byte, 1<<20)

	for !Now(buf, fn) {
		select {
		case <-poll.C:
		case <-deadline.C:
			tb.Fatalf("no goroutine was blocked in %s within %s", fn, limit)
		}
	}
}

// Now reports whether some goroutine is waiting with fn in its stack; buf
// is scratch space for the dump, grown when too small.
func Now(buf []byte, fn string) bool {
	n := runtime.Stack(buf, true)
	for n == len(buf) {
		buf = make([]byte, 2*len(buf))
		n = runtime.Stack(buf, true)
	}

	for _, g := range strings.Split(string(buf[:n]), "\n\n") {
		header, stack, _ := strings.Cut(g, "\n")
		if !strings.Contains(stack, fn+"(") {
			continue
		}

		for _, w := range waiting {
			if strings.Contains(header, w) {
				return true
			}
		}
	}

	return false
}

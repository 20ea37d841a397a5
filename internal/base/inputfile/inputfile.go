// Package inputfile reads the files people hand to mongobench (workloads,
// results) whole, with a size limit and under a context. A wrong path then
// fails fast instead of eating memory or hanging: a device such as
// /dev/zero is refused once it passes the limit, and a named pipe that no
// one writes to is abandoned as soon as the context is cancelled (Ctrl-C).
package inputfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mongobench/mongobench/internal/base/units"
)

// DefaultLimit is the largest input file Read accepts: far above any
// workload or results file mongobench writes, far below what would strain
// memory.
const DefaultLimit = 64 << 20

// chunk is how much one read asks for, so that the context is checked
// often on files whose reads never block (devices).
const chunk = 256 << 10

// ErrTooLarge is what a TooLargeError matches with errors.Is.
var ErrTooLarge = errors.New("input file too large")

// TooLargeError says that a file is larger than the limit.
type TooLargeError struct {
	// Path is the file as given.
	Path string

	// Size is the file's size when known (regular files); otherwise the
	// number of bytes read before giving up, which passed Limit.
	Size int64

	// Known is true when Size is the file's real size.
	Known bool

	// Limit is the limit in bytes.
	Limit int64
}

// Error is one line naming the file and its size.
func (e *TooLargeError) Error() string {
	if e.Known {
		return fmt.Sprintf("%s: %s, larger than the %s limit for input files; is it the right file?",
			e.Path, units.Bytes(e.Size), units.Bytes(e.Limit))
	}

	return fmt.Sprintf("%s: more than %s (the limit for input files) and still growing; is it the right file?",
		e.Path, units.Bytes(e.Limit))
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// Read is ReadLimit with DefaultLimit.
func Read(ctx context.Context, path string) ([]byte, error) {
	return ReadLimit(ctx, path, DefaultLimit)
}

// ReadLimit returns the content of the file at path, refusing one larger
// than limit bytes with a *TooLargeError (before reading, when the file is
// a regular one). When ctx is cancelled it stops within a read, even one
// blocked on a named pipe, and returns an error that wraps the context's
// cause and names the file. Other errors are those of package os.
func ReadLimit(ctx context.Context, path string, limit int64) ([]byte, error) {
	if ctx.Err() != nil {
		return nil, stopped(ctx, path)
	}

	f, err := open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()

	info, err := f.Stat()
	if err != nil {
		return nil, err
	}

	if info.Mode().IsRegular() && info.Size() > limit {
		return nil, &TooLargeError{Path: path, Size: info.Size(), Known: true, Limit: limit}
	}

	// Pipes and terminals are read through Go's poller, so a deadline
	// wakes a blocked read; regular files and devices never block for
	// long, and the loop checks the context between reads.
	release := context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Now()) })
	defer release()

	var buf bytes.Buffer

	if info.Mode().IsRegular() {
		buf.Grow(int(info.Size()) + 1)
	}

	p := make([]byte, chunk)

	for {
		if ctx.Err() != nil {
			return nil, stopped(ctx, path)
		}

		n, err := f.Read(p)
		buf.Write(p[:n])

		if int64(buf.Len()) > limit {
			return nil, &TooLargeError{Path: path, Size: int64(buf.Len()), Limit: limit}
		}

		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			return buf.Bytes(), nil
		case ctx.Err() != nil:
			return nil, stopped(ctx, path)
		default:
			return nil, err
		}
	}
}

// open opens path for reading. Opening a named pipe blocks until a writer
// comes, in the kernel, where nothing can interrupt it; so the open runs on
// a goroutine of its own, and a cancelled ctx abandons it. That goroutine
// ends, closing the file, once the open returns.
func open(ctx context.Context, path string) (*os.File, error) {
	type opened struct {
		f   *os.File
		err error
	}

	ch := make(chan opened, 1)

	go func() {
		f, err := os.Open(path)
		ch <- opened{f, err}
	}()

	select {
	case o := <-ch:
		return o.f, o.err
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.f != nil {
				_ = o.f.Close()
			}
		}()

		return nil, stopped(ctx, path)
	}
}

// stopped is the error of a read cut short by ctx.
func stopped(ctx context.Context, path string) error {
	return fmt.Errorf("%s: reading stopped: %w", path, context.Cause(ctx))
}

// NotFileError says that a path names a named pipe, a device or a socket
// where a file was expected.
type NotFileError struct {
	// Path is the file as given.
	Path string

	// What says what it is: "a named pipe", "a device", "a socket".
	What string
}

// Error is one line naming the file and what it is.
func (e *NotFileError) Error() string {
	return fmt.Sprintf("%s: is %s, not a file; give the path of a file", e.Path, e.What)
}

// CheckFile refuses, at once, a path that names a named pipe, a device or a
// socket: reading one would wait for a writer that may never come, or read
// forever. A pipe reached through a descriptor of the process (/dev/stdin,
// /dev/fd/N, /proc/self/fd/N: the shell's <(command) and here-documents) is
// accepted, since its writer already exists; Read still stops on a cancelled
// context if it blocks. Errors of os.Stat are returned as they are.
func CheckFile(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}

	mode := info.Mode()

	var what string

	switch {
	case mode&os.ModeNamedPipe != 0:
		if isDescriptor(path) {
			return nil
		}

		what = "a named pipe"
	case mode&os.ModeDevice != 0:
		what = "a device"
	case mode&os.ModeSocket != 0:
		what = "a socket"
	default:
		return nil
	}

	return &NotFileError{Path: path, What: what}
}

// isDescriptor reports whether path names an open descriptor of the process
// rather than a file system entry.
func isDescriptor(path string) bool {
	clean := filepath.Clean(path)

	return clean == "/dev/stdin" || strings.HasPrefix(clean, "/dev/fd/") || strings.HasPrefix(clean, "/proc/self/fd/")
}

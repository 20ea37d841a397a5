package inputfile_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/base/blocked"
	"github.com/mongobench/mongobench/internal/base/inputfile"
)

// bound is how long a read that must stop may take at most on a loaded
// machine; a hang takes forever.
const bound = 5 * time.Second

func TestReadRegularFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.yaml")
	if err := os.WriteFile(path, []byte("name: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	data, err := inputfile.Read(context.Background(), path)
	if err != nil || string(data) != "name: x\n" {
		t.Fatalf("Read = %q, %v", data, err)
	}
}

func TestReadMissingFileKeepsOSError(t *testing.T) {
	_, err := inputfile.Read(context.Background(), filepath.Join(t.TempDir(), "none.yaml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want one matching os.ErrNotExist", err)
	}
}

// TestReadRefusesLargeRegularFile uses a sparse file: its size is known
// before anything is read, and the message gives it.
func TestReadRefusesLargeRegularFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dump.json")

	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}

	if err := f.Truncate(inputfile.DefaultLimit + 1<<20); err != nil {
		t.Fatal(err)
	}

	f.Close()

	_, err = inputfile.Read(context.Background(), path)

	var tl *inputfile.TooLargeError
	if !errors.As(err, &tl) || !tl.Known || !errors.Is(err, inputfile.ErrTooLarge) {
		t.Fatalf("err = %v, want a *TooLargeError with the known size", err)
	}

	want := path + ": 65 MiB, larger than the 64 MiB limit for input files; is it the right file?"
	if err.Error() != want {
		t.Errorf("message\n%s\nwant\n%s", err, want)
	}
}

func TestReadLimitAcceptsExactLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.yaml")
	if err := os.WriteFile(path, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}

	if _, err := inputfile.ReadLimit(context.Background(), path, 5); err != nil {
		t.Errorf("a file of exactly the limit: %v", err)
	}

	if _, err := inputfile.ReadLimit(context.Background(), path, 4); !errors.Is(err, inputfile.ErrTooLarge) {
		t.Errorf("a file one byte over the limit: %v", err)
	}
}

// TestReadRefusesEndlessDevice reads /dev/zero, whose size is 0 and whose
// content never ends: the limit stops it.
func TestReadRefusesEndlessDevice(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero on this system")
	}

	errc := make(chan error, 1)

	go func() {
		_, err := inputfile.ReadLimit(context.Background(), "/dev/zero", 1<<20)
		errc <- err
	}()

	select {
	case err := <-errc:
		var tl *inputfile.TooLargeError
		if !errors.As(err, &tl) || tl.Known {
			t.Fatalf("err = %v, want a *TooLargeError without a known size", err)
		}

		if !strings.HasPrefix(err.Error(), "/dev/zero: more than 1 MiB") {
			t.Errorf("message %q does not name the file and the limit", err)
		}
	case <-time.After(bound):
		t.Fatalf("reading /dev/zero did not stop within %s", bound)
	}
}

// fifo makes a named pipe that nobody writes to yet. At cleanup it opens
// the pipe for writing and closes it, which ends an open still blocked on
// it.
func fifo(t *testing.T) string {
	t.Helper()

	path := filepath.Join(t.TempDir(), "pipe.yaml")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}

	t.Cleanup(func() {
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})

	return path
}

// TestReadFIFOStopsOnCancel cancels a read blocked in opening a named pipe
// with no writer, and one blocked reading a pipe whose writer is silent.
func TestReadFIFOStopsOnCancel(t *testing.T) {
	for _, withWriter := range []bool{false, true} {
		name := "blocked in open"
		if withWriter {
			name = "blocked in read"
		}

		t.Run(name, func(t *testing.T) {
			path := fifo(t)
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)

			go func() {
				_, err := inputfile.Read(ctx, path)
				errc <- err
			}()

			if withWriter {
				// Opening the write end blocks until the reader opened
				// the pipe; the writer then stays silent.
				w, err := os.OpenFile(path, os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
			}

			// The read cannot finish without the cancel, whatever
			// point it has reached; waiting until it is blocked makes
			// the cancel cut a blocked open or read, as named.
			blocked.In(t, "inputfile.ReadLimit", bound)
			cancel()

			select {
			case err := <-errc:
				if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), path) {
					t.Errorf("err = %v, want context.Canceled naming the file", err)
				}
			case <-time.After(bound):
				t.Fatalf("the read did not stop within %s of the cancel", bound)
			}
		})
	}
}

func TestReadFIFOWithWriter(t *testing.T) {
	path := fifo(t)

	go func() {
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}

		_, _ = w.WriteString("name: piped\n")
		w.Close()
	}()

	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()

	data, err := inputfile.Read(ctx, path)
	if err != nil || string(data) != "name: piped\n" {
		t.Fatalf("Read = %q, %v", data, err)
	}
}

// TestCheckFile refuses a named pipe and a device at once, names what they
// are, and accepts a regular file and a pipe reached through a descriptor
// path (the shell's <(command)).
func TestCheckFile(t *testing.T) {
	regular := filepath.Join(t.TempDir(), "w.yaml")
	if err := os.WriteFile(regular, []byte("name: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	if err := inputfile.CheckFile(regular); err != nil {
		t.Errorf("regular file refused: %v", err)
	}

	p := fifo(t)

	var nf *inputfile.NotFileError
	if err := inputfile.CheckFile(p); !errors.As(err, &nf) || nf.What != "a named pipe" || err.Error() != p+": is a named pipe, not a file; give the path of a file" {
		t.Errorf("named pipe: got %v", err)
	}

	if _, err := os.Stat("/dev/null"); err == nil {
		if err := inputfile.CheckFile("/dev/null"); !errors.As(err, &nf) || nf.What != "a device" {
			t.Errorf("/dev/null: got %v", err)
		}
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}

	defer r.Close()
	defer w.Close()

	fd := fmt.Sprintf("/proc/self/fd/%d", r.Fd())
	if _, err := os.Stat(fd); err != nil {
		t.Skipf("no /proc/self/fd here: %v", err)
	}

	if err := inputfile.CheckFile(fd); err != nil {
		t.Errorf("pipe through %s refused: %v", fd, err)
	}
}

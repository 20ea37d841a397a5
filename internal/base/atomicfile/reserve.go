package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// lockSuffix ends the name of a reservation's lock file, ".BASE.lock" next
// to the file reserved.
const lockSuffix = ".lock"

// lockPath is the lock file that reserves path.
func lockPath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+lockSuffix)
}

// BusyError says that another writer holds the reservation of a path.
type BusyError struct {
	// Path is the path as given.
	Path string

	// PID is the holder's process ID, 0 when unknown.
	PID int
}

// Error is one line naming the path and, where known, the other writer.
func (e *BusyError) Error() string {
	who := "another mongobench"
	if e.PID > 0 {
		who += " (PID " + strconv.Itoa(e.PID) + ")"
	}

	return fmt.Sprintf("%s is being written by %s; give another file name, or wait for it to end", e.Path, who)
}

// Reservation keeps other writers off a path (see Reserve) until Release.
type Reservation struct {
	f    *os.File
	lock string
}

// Release gives the path up, removing the lock file. It may be called more
// than once.
func (r *Reservation) Release() {
	if r == nil || r.f == nil {
		return
	}

	// Removed while still held: a writer that opened the file meanwhile
	// finds, once it holds it, that the path names another file, and
	// starts over (see Reserve).
	_ = os.Remove(r.lock)
	_ = r.f.Close()
	r.f = nil
}

// readPID returns the PID a lock file records, 0 when none.
func readPID(f *os.File) int {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)

	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(string(buf[:n]), "pid ")))
	if err != nil {
		return 0
	}

	return pid
}

//go:build !unix

package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Reserve makes this process the only writer of path until Release, with a
// lock file created exclusively next to it. Without flock a lock file left
// by a killed holder cannot be told from a live one: it is refused, and the
// error names the file to remove.
func Reserve(path string) (*Reservation, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}

	lock := lockPath(path)

	f, err := os.OpenFile(lock, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, &BusyError{Path: path}
	}

	if err != nil {
		return nil, err
	}

	_, _ = fmt.Fprintf(f, "pid %d\n", os.Getpid())

	return &Reservation{f: f, lock: lock}, nil
}

// removeStaleLock cannot tell a stale lock file here.
func removeStaleLock(string) bool { return false }

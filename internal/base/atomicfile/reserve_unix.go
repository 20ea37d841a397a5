//go:build unix

package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Reserve makes this process the only writer of path until Release: a
// second Reserve of the same path, by this process or another, fails with
// a *BusyError until then. It is an exclusive lock (flock) on a lock file
// next to path, so the system releases it when the holder dies however it
// dies, and a lock file left behind by a killed holder is taken over
// rather than refused. Missing directories are created. Reserving does not
// create path itself.
func Reserve(path string) (*Reservation, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}

	lock := lockPath(path)

	// Rarely more than one pass: only when a holder removes the lock
	// file between our open and our lock (Release).
	for range 16 {
		f, err := os.OpenFile(lock, os.O_RDWR|os.O_CREATE, 0o644) //nolint:gosec // the lock file holds a PID
		if err != nil {
			return nil, err
		}

		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil { //nolint:gosec // a descriptor fits an int
			pid := readPID(f)
			_ = f.Close()

			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, &BusyError{Path: path, PID: pid}
			}

			return nil, fmt.Errorf("locking %s: %w", lock, err)
		}

		if !stillNamed(f, lock) {
			_ = f.Close()
			continue
		}

		_ = f.Truncate(0)
		_, _ = fmt.Fprintf(f, "pid %d\n", os.Getpid())

		return &Reservation{f: f, lock: lock}, nil
	}

	return nil, &BusyError{Path: path}
}

// stillNamed reports whether the open file f is the one path names.
func stillNamed(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}

	b, err := os.Stat(path)

	return err == nil && os.SameFile(a, b)
}

// removeStaleLock removes a lock file no one holds (its holder was killed
// before Release) and reports whether it did.
func removeStaleLock(path string) bool {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()

	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil { //nolint:gosec // a descriptor fits an int
		return false
	}

	if !stillNamed(f, path) {
		return false
	}

	return os.Remove(path) == nil
}

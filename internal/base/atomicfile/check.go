package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// NotRegularError says that a path mongobench was asked to write to exists
// and is not a regular file. Writing there would replace a device, a named
// pipe or a directory with a regular file (the rename of an atomic write
// does), or silently write through a symbolic link to wherever it points.
type NotRegularError struct {
	// Path is the path as given.
	Path string

	// What is what it is instead: "a symbolic link", "a directory", "a
	// device", "a named pipe", "a socket" or "not a regular file".
	What string

	// Target is a symbolic link's target, as the link says it.
	Target string
}

// Error is one line naming the path, what it is and what to do.
func (e *NotRegularError) Error() string {
	switch e.What {
	case "a symbolic link":
		return fmt.Sprintf("%s is a symbolic link (to %s): mongobench does not write through links; give the file it points to", e.Path, e.Target)
	case "a directory":
		return fmt.Sprintf("%s is a directory; give a file name", e.Path)
	default:
		return fmt.Sprintf("%s is %s, not a regular file; give a file name (- for standard output)", e.Path, e.What)
	}
}

// Check returns a *NotRegularError when path exists and is not a regular
// file (a symbolic link counts as not regular, whatever it points to), nil
// when it is a regular file or does not exist, and the error of Lstat
// otherwise.
func Check(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}

	if err != nil {
		return err
	}

	m := fi.Mode()

	switch {
	case m.IsRegular():
		return nil
	case m&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return &NotRegularError{Path: path, What: "a symbolic link", Target: target}
	case m.IsDir():
		return &NotRegularError{Path: path, What: "a directory"}
	case m&fs.ModeDevice != 0:
		return &NotRegularError{Path: path, What: "a device"}
	case m&fs.ModeNamedPipe != 0:
		return &NotRegularError{Path: path, What: "a named pipe"}
	case m&fs.ModeSocket != 0:
		return &NotRegularError{Path: path, What: "a socket"}
	default:
		return &NotRegularError{Path: path, What: "not a regular file"}
	}
}

// SameFile reports whether a and b name the same existing file, after
// symbolic links are followed: an output that is also an input would
// destroy the input it is made from. A path that does not exist is the
// same as nothing.
func SameFile(a, b string) bool {
	ia, err := os.Stat(a)
	if err != nil {
		return false
	}

	ib, err := os.Stat(b)
	if err != nil {
		return false
	}

	return os.SameFile(ia, ib)
}

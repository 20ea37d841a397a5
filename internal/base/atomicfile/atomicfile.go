// Package atomicfile writes files so that a reader sees either the old
// content or the complete new one, never half a file: results files,
// reports, CSV and Markdown exports all go through it.
//
// It also holds the rest of mongobench's output discipline, so that every
// command treats the files it writes alike: Check refuses paths that are
// not (or not yet) regular files, Reserve keeps a second writer off a path
// for as long as the first one works on it, and Sweep removes the
// temporary files of writes that a killed process left behind.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write creates path's directory if needed, calls write with a temporary
// file in that directory, syncs it, and renames it over path. On any error
// the temporary file is removed and an existing file at path is untouched.
func Write(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}

	// The temporary name carries this process's identity, so that Sweep
	// can tell the leftover of a killed writer from a write under way.
	f, err := os.CreateTemp(dir, tempPrefix(filepath.Base(path))+"*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}

	tmp := f.Name()

	defer func() {
		if err != nil {
			_ = f.Close() // may already be closed; the first error matters
			_ = os.Remove(tmp)
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()

	if err := write(f); err != nil {
		return err
	}

	if err := f.Chmod(0o644); err != nil {
		return err
	}

	if err := f.Sync(); err != nil {
		return err
	}

	if err := f.Close(); err != nil {
		return err
	}

	// Rename would replace a device, a named pipe or a link with a
	// regular file: the last line of defence behind the callers' Check.
	if err := Check(path); err != nil {
		return err
	}

	if err := os.Rename(tmp, path); err != nil {
		return err
	}

	syncDir(dir)

	return nil
}

// WriteBytes writes data to path atomically.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// syncDir makes a completed rename durable by syncing the directory. It is
// best effort: the new file is already in place, and some platforms cannot
// sync directories at all.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}

	_ = d.Sync()
	_ = d.Close()
}

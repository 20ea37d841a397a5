package result

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// File is one results file read by ReadAll.
type File struct {
	// Path is the file read.
	Path string
	// Arg is the path given to ReadAll that named it: Path itself, or
	// the directory it was found in.
	Arg string
	// Result is what the file holds.
	Result *Result
}

// ReadOptions say what a command accepts. The zero value reads results
// files only, with inconsistencies as warnings.
type ReadOptions struct {
	// Dirs lets a path name a directory, whose results files (*.json)
	// are read in name order; a directory without any is an error.
	Dirs bool
	// AllowEmpty reads a file that holds no measurements (see
	// CheckContents), for commands that do not show them: merge tells a
	// shard that measured nothing by its own rules.
	AllowEmpty bool
	// Recursive, with Dirs, also reads the results files of a directory's
	// subdirectories, but for hidden ones and a comparison's NAME.trials
	// directories (its matrix file holds those trials already): history
	// takes a tree of nightly results. A directory without any results
	// file is then an error wrapping ErrNoResultsFiles.
	Recursive bool
	// Strict makes an inconsistent file (see Check) an error rather than
	// a warning, for commands that write new results from what they read
	// (merge).
	Strict bool
	// Read reads one file; nil means Read. A command that also accepts
	// other forms of a result (merge takes run logs) passes its own.
	Read func(ctx context.Context, path string) (*Result, error)
}

// Files is what ReadAll read.
type Files struct {
	// Files are the files read, in the order named.
	Files []File
	// Errors are the files that could not be read or hold nothing to
	// show, one error per file, each naming it.
	Errors []error
	// Warnings are one-line remarks about files that were read: an
	// inconsistent file (Check's first problem), a run that did not
	// complete.
	Warnings []string
	// Total is the number of files tried, read or not.
	Total int
}

// Err summarises Errors for a command that refuses to go on with any:
// nil when every file was read.
func (f *Files) Err() error {
	if len(f.Errors) == 0 {
		return nil
	}

	return fmt.Errorf("%d of %d results files could not be read", len(f.Errors), f.Total)
}

// Results returns the results read, in order.
func (f *Files) Results() []*Result {
	out := make([]*Result, len(f.Files))
	for i, file := range f.Files {
		out[i] = file.Result
	}

	return out
}

// Paths returns the files read, in order.
func (f *Files) Paths() []string {
	out := make([]string, len(f.Files))
	for i, file := range f.Files {
		out[i] = file.Path
	}

	return out
}

// ReadAll reads the results files paths name, the one reader of results
// files for every command, so that all of them accept the same files and
// say the same about them. It reads on after a file that cannot be read,
// so that one run shows every broken file: those go to Errors, each
// naming its file. A file that parses but holds nothing to show (see
// CheckContents) is an error too, unless opts.AllowEmpty. A file that is read is checked (see
// Check) and a problem reported as a warning, or with opts.Strict as an
// error; a run that did not complete is a warning.
//
// The error returned is ctx's when ctx is cancelled during the reading,
// naming the file being read; the Files read so far are returned with it.
func ReadAll(ctx context.Context, paths []string, opts ReadOptions) (*Files, error) {
	read := opts.Read
	if read == nil {
		read = Read
	}

	out := &Files{}

	for _, arg := range paths {
		files, err := expand(arg, opts.Dirs, opts.Recursive)
		if err != nil {
			out.Total++
			out.Errors = append(out.Errors, named(arg, arg, err))

			continue
		}

		for _, path := range files {
			out.Total++

			res, err := read(ctx, path)
			if ctx.Err() != nil {
				return out, fmt.Errorf("interrupted while reading %s: %w", path, context.Cause(ctx))
			}

			if err == nil && !opts.AllowEmpty {
				if cerr := res.CheckContents(); cerr != nil {
					err = fmt.Errorf("results file %s: %w", path, cerr)
				}
			}

			if err == nil && opts.Strict {
				if errs := res.Check(); len(errs) > 0 {
					err = fmt.Errorf("inconsistent results file: %w", errs[0])
				}
			}

			if err != nil {
				out.Errors = append(out.Errors, named(path, arg, err))
				continue
			}

			out.Warnings = append(out.Warnings, warnings(path, res, !opts.Strict)...)
			out.Files = append(out.Files, File{Path: path, Arg: arg, Result: res})
		}
	}

	return out, nil
}

// ErrNoResultsFiles is wrapped by the error about a directory that holds
// no results file.
var ErrNoResultsFiles = errors.New("holds no results file (*.json)")

// expand lists the files arg names: itself, or with dirs a directory's
// results files in name order (with recursive, its subdirectories' too).
func expand(arg string, dirs, recursive bool) ([]string, error) {
	if !dirs {
		return []string{arg}, nil
	}

	fi, err := os.Stat(arg)
	if err != nil || !fi.IsDir() {
		return []string{arg}, nil //nolint:nilerr // reading the file says what is wrong with it
	}

	var matches []string

	if recursive {
		matches, err = walk(arg)
	} else {
		matches, err = filepath.Glob(filepath.Join(arg, "*.json"))
	}

	if err != nil {
		return nil, err
	}

	if len(matches) == 0 {
		return nil, fmt.Errorf("directory %s %w", arg, ErrNoResultsFiles)
	}

	slices.Sort(matches)

	return matches, nil
}

// walk lists the *.json files under dir, but for those in hidden
// directories and in a comparison's NAME.trials directories.
func walk(dir string) ([]string, error) {
	var out []string

	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}

		if d.IsDir() {
			if path != dir && (strings.HasPrefix(d.Name(), ".") || strings.HasSuffix(d.Name(), ".trials")) {
				return filepath.SkipDir
			}

			return nil
		}

		if strings.HasSuffix(d.Name(), ".json") {
			out = append(out, path)
		}

		return nil
	})

	return out, err
}

// named returns err as a *FileError about path, found through the
// argument arg.
func named(path, arg string, err error) error {
	return &FileError{Path: path, Arg: arg, Err: err}
}

// FileError is the error about one file that ReadAll could not read (or a
// path that named no results file at all): Path is the file, Arg the path
// given to ReadAll that named it, so that a caller can tell a file named
// on its own from one found in a directory.
type FileError struct {
	Path string
	Arg  string
	Err  error
}

// Error names the file, unless Err does already (Read names the file in
// most of its errors, not when it cannot be opened).
func (e *FileError) Error() string {
	if strings.Contains(e.Err.Error(), e.Path) {
		return e.Err.Error()
	}

	return e.Path + ": " + e.Err.Error()
}

// Unwrap returns the error about the file, for errors.Is and errors.As.
func (e *FileError) Unwrap() error { return e.Err }

// warnings are the remarks about a file that was read: check says whether
// inconsistencies are among them (Strict made them errors).
func warnings(path string, res *Result, check bool) []string {
	var out []string

	if check {
		if errs := res.Check(); len(errs) > 0 {
			out = append(out, fmt.Sprintf("%s is inconsistent (%d problems), read anyway; first: %v", path, len(errs), errs[0]))
		}
	}

	if res.Status != StatusCompleted {
		out = append(out, fmt.Sprintf("%s is from a run that was %s", path, res.Status))
	}

	if res.Matrix != nil {
		for i, tr := range res.Matrix.Trials {
			if tr.Result != nil && tr.Result.Status != StatusCompleted {
				out = append(out, fmt.Sprintf("%s: matrix trial %d (%s · %s · round %d) is from a run that was %s",
					path, i, tr.Target, tr.Variant, tr.Round, tr.Result.Status))
			}
		}
	}

	return out
}

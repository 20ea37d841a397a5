package history

import (
	"context"

	"github.com/mongobench/mongobench/internal/results/result"
)

// Source is where a history's runs come from: results files on disk, or a
// store shared by a team (package internal/lab/historystore). Every source
// reads with result.ReadAll, the one reader of results files, so a run is
// accepted or refused by the same rules wherever it is kept, and the
// results file stays the unit that is exchanged.
type Source interface {
	// Results returns what was read. A result that could not be read is
	// in the Errors, each a *result.FileError; the error returned is for
	// a source that cannot be read at all, or an interruption.
	Results(ctx context.Context) (*result.Files, error)
}

// Files is the source of results files: each of Paths a file, or a
// directory whose *.json files are read, subdirectories included but for
// hidden ones and a comparison's NAME.trials directories. Files that hold
// no measurements are read too, so that Load can say why they are left
// out.
type Files struct {
	Paths []string
	// Read reads one file; nil means result.Read. An importer passes a
	// reader that also keeps the bytes it read.
	Read func(ctx context.Context, path string) (*result.Result, error)
}

// Results reads the files.
func (f Files) Results(ctx context.Context) (*result.Files, error) {
	return result.ReadAll(ctx, f.Paths, result.ReadOptions{Dirs: true, Recursive: true, AllowEmpty: true, Read: f.Read})
}

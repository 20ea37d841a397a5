package cli

import (
	"context"
	"fmt"

	"github.com/mongobench/mongobench/internal/report"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/targets"
)

// readResultsFiles reads results files for a command with result.ReadAll,
// the one reader every command uses, and prints what it says: each file
// that could not be read, then the warnings about those that were. The
// command decides whether to go on without the unreadable ones (see
// Files.Err). The error is an interruption, with nothing usable read.
func readResultsFiles(ctx context.Context, st *State, paths []string, opts result.ReadOptions) (*result.Files, error) {
	files, err := result.ReadAll(ctx, paths, opts)
	if err != nil {
		return nil, failed("%v", err)
	}

	printUnread(st, files.Errors)
	printWarnings(st, files.Warnings)

	return files, nil
}

// printUnread prints the files that could not be read, one line each.
func printUnread(st *State, errs []error) {
	for _, err := range errs {
		fmt.Fprintln(st.Stderr, err)
	}
}

// printWarnings prints warnings, one line each.
func printWarnings(st *State, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintln(st.Stderr, "Warning: "+w)
	}
}

// reportOptions are the report's options for results read from sources:
// the page describes each target kind from the launcher's registry, which
// the report itself does not know.
func reportOptions(st *State, sources []string) report.Options {
	return report.Options{Sources: sources, Generated: st.Now(), DescribeTargetKind: describeTargetKind}
}

// describeTargetKind says what serves the load for a registered target
// kind, "" for a kind this mongobench does not know.
func describeTargetKind(kind string) string {
	if k, ok := targets.LookupKind(kind); ok {
		return k.Description
	}

	return ""
}

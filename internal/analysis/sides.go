package analysis

import (
	"context"
	"fmt"
	"strings"

	"github.com/mongobench/mongobench/internal/results/result"
)

// Sides assembles the sides of a comparison of results files (`compare
// A B …`): each argument is one side — a results file, a directory of them
// or a comma-separated list (repeated runs, one sample each) — except a
// comparison's results file, whose cells are sides of their own. The
// command reads each argument's files (result.ReadAll) and adds them here;
// the rules of what can be compared live here, not in the command.
type Sides struct {
	// Files are the sides so far, A first (the baseline).
	Files []*File
	// Refused are the files read that cannot be a side or a run of one,
	// each error naming its file.
	Refused []error
	// Warnings are one-line remarks: a file that looks inconsistent or
	// did not complete, a run of another workload than its side's first
	// run, a side of another workload than the baseline.
	Warnings []string
	// Unread are the files that could not be read, each error naming its
	// file; Tried counts every file tried, read or not.
	Unread []error
	Tried  int
}

// ReadSides reads the sides of `compare ARG...`: each argument's files
// (result.ReadAll; a directory is listed, a comma-separated list is
// repeated runs) become one side. The error is a failure to read at all
// (an interrupt, a directory that cannot be listed); files that cannot be
// read or compared are in Unread and Refused, for Complete to judge.
func ReadSides(ctx context.Context, args []string) (*Sides, error) {
	s := &Sides{}

	for _, arg := range args {
		read, err := result.ReadAll(ctx, SidePaths(arg), result.ReadOptions{Dirs: true})
		if err != nil {
			return nil, err
		}

		s.Tried += read.Total
		s.Unread = append(s.Unread, read.Errors...)
		s.Warnings = append(s.Warnings, read.Warnings...)
		s.Add(arg, read.Files)
	}

	return s, nil
}

// Complete refuses a comparison in which some file could not be read or
// cannot be a side: a comparison of what remains would silently drop a
// run the user asked for.
func (s *Sides) Complete() error {
	if bad := len(s.Unread) + len(s.Refused); bad > 0 {
		return fmt.Errorf("%d of %d results files could not be read; nothing compared", bad, s.Tried)
	}

	return nil
}

// SidePaths lists the paths of one side argument: the files of a
// comma-separated list, else the argument itself (a file, or a directory
// that result.ReadAll lists).
func SidePaths(arg string) []string {
	if !strings.Contains(arg, ",") {
		return []string{arg}
	}

	var out []string

	for p := range strings.SplitSeq(arg, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}

	return out
}

// Add adds the side named arg from the files read for it.
func (s *Sides) Add(arg string, read []result.File) {
	var side *File

	for _, rf := range read {
		path, res := rf.Path, rf.Result

		if res.Kind() == result.KindMatrix {
			if len(read) > 1 {
				s.refuse(path, fmt.Errorf("a comparison's results file is a side of its own (its cells); it cannot be one run of %s", arg))
				continue
			}

			cells, err := MatrixCells(path, res, func(i int) string { return Label(len(s.Files) + i) })
			if err != nil {
				s.refuse(path, err)
				continue
			}

			s.Files = append(s.Files, cells...)

			continue
		}

		main := res.MainPhase()
		if main == nil || len(main.Intervals) == 0 {
			name := ""
			if main != nil {
				name = main.Name
			}

			s.refuse(path, fmt.Errorf("results file %s: main phase %q has no intervals", path, name))

			continue
		}

		if side == nil {
			side = &File{Label: Label(len(s.Files)), Path: arg, Res: res, Phase: main}
			s.Files = append(s.Files, side)
		} else if name, first := res.Workload.Name, side.Res.Workload.Name; name != first {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s ran workload %q, the other runs of %s %q", path, name, arg, first))
		}

		side.Runs = append(side.Runs, main)
	}
}

// refuse records a file that cannot be compared, its error naming it.
func (s *Sides) refuse(path string, err error) {
	if !strings.Contains(err.Error(), path) {
		err = fmt.Errorf("%s: %w", path, err)
	}

	s.Refused = append(s.Refused, err)
}

// Check warns about sides of another workload than the baseline, and
// refuses sides that share no operation with it: every row would read "no
// data", and a comparison that compared nothing must not pass.
func (s *Sides) Check() error {
	if len(s.Files) == 0 {
		return nil
	}

	base := s.Files[0]

	for _, f := range s.Files[1:] {
		if name, first := f.Res.Workload.Name, base.Res.Workload.Name; name != first {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s (%s) ran workload %q, the baseline %q", f.Label, f.Path, name, first))
		}
	}

	names := func(f *File) map[string]bool {
		out := map[string]bool{}

		for _, p := range f.RunPhases() {
			for _, o := range p.Operations {
				out[o.Name] = true
			}
		}

		return out
	}

	baseOps := names(base)

	for _, f := range s.Files[1:] {
		common := false
		for n := range names(f) {
			common = common || baseOps[n]
		}

		if !common {
			return fmt.Errorf("%s (workload %q) has no operation in common with the baseline %s (workload %q): nothing to compare",
				f.Path, f.Res.Workload.Name, base.Path, base.Res.Workload.Name)
		}
	}

	return nil
}

package cli

import (
	"fmt"

	"github.com/mongobench/mongobench/internal/base/atomicfile"
	"github.com/mongobench/mongobench/internal/report"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// writeRunMarkdown writes a single run's comparison blocks as Markdown to
// path (--markdown; nothing when path is empty), atomically.
func writeRunMarkdown(st *State, path string, spec *workload.Spec, res *result.Result) error {
	if path == "" {
		return nil
	}

	md := "# " + spec.Name + "\n" + report.BlocksMarkdown(res)
	if err := atomicfile.WriteBytes(path, []byte(md)); err != nil {
		return failed("writing %s: %v", path, err)
	}

	fmt.Fprintf(st.Stderr, "Markdown written to %s\n", path)

	return nil
}

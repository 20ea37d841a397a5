package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mongobench/mongobench/internal/results/result"
)

// clientView is the section of a run measured through an external client
// stack (see docs/clients.md): the stack, its versions, and the top frames
// of its adapter's CPU profile when one was taken.
type clientView struct {
	// ID is the section's element id.
	ID string

	Stack    string
	Versions string
	Starved  string

	// Prefix is the profile files' path prefix; empty without profile.
	Prefix string

	// Tables are the profile's top frames by self and by cumulative time.
	Tables []frameTable
}

// frameTable is one table of top frames.
type frameTable struct {
	By   string
	Rows []frameRow
}

// frameRow is one function of the profile.
type frameRow struct {
	Function, Where, Self, Total, Calls string
}

// clientFrames is how many frames each table shows.
const clientFrames = 12

// newClientView builds the section, nil for the Go engine.
func newClientView(id string, c *result.Client) *clientView {
	if c == nil {
		return nil
	}

	v := &clientView{ID: id, Stack: c.Stack, Versions: versionText(c.Versions), Starved: fmt.Sprint(c.Starved)}

	if p := c.Profile; p != nil {
		v.Prefix = p.Prefix
		if len(p.Frames) > 0 {
			v.Tables = []frameTable{
				{By: "self", Rows: topFrames(p.Frames, func(f result.ProfileFrame) float64 { return f.SelfMS })},
				{By: "cumulative", Rows: topFrames(p.Frames, func(f result.ProfileFrame) float64 { return f.TotalMS })},
			}
		}
	}

	return v
}

// versionText lists versions as "name version", sorted by name.
func versionText(vs map[string]string) string {
	parts := make([]string, 0, len(vs))
	for _, k := range slices.Sorted(maps.Keys(vs)) {
		parts = append(parts, k+" "+vs[k])
	}

	return strings.Join(parts, ", ")
}

// topFrames returns the frames with the largest by, largest first.
func topFrames(frames []result.ProfileFrame, by func(result.ProfileFrame) float64) []frameRow {
	sorted := slices.Clone(frames)
	slices.SortStableFunc(sorted, func(a, b result.ProfileFrame) int { return cmp.Compare(by(b), by(a)) })

	rows := make([]frameRow, 0, min(len(sorted), clientFrames))

	for _, f := range sorted[:min(len(sorted), clientFrames)] {
		where := f.File
		if f.Line > 0 {
			where = fmt.Sprintf("%s:%d", f.File, f.Line)
		}

		rows = append(rows, frameRow{
			Function: cmp.Or(f.Function, "(anonymous)"), Where: where,
			Self: fmt.Sprintf("%.1f ms", f.SelfMS), Total: fmt.Sprintf("%.1f ms", f.TotalMS), Calls: optCount(f.Calls),
		})
	}

	return rows
}

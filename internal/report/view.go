package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mongobench/mongobench/internal/base/units"
	"github.com/mongobench/mongobench/internal/spec/workload"

	"github.com/mongobench/mongobench/internal/results/result"
)

// This file turns results into what the page template shows: every figure
// is formatted here, so the template only lays them out.

// runView is one results file's section.
type runView struct {
	// ID prefixes the ids of the section's elements.
	ID string

	// Label names the run (its file, or workload and start time).
	Label string

	Workload    string
	Description string
	Started     string

	// Status is the run's status and StatusClass its colour (ok, warn,
	// bad).
	Status       string
	StatusClass  string
	StatusReason string

	Meta  []field
	Notes []string

	// WorkloadFile, WorkloadSource and WorkloadSpec are the workload as
	// written and as parsed (indented JSON).
	WorkloadFile   string
	WorkloadSource string
	WorkloadSpec   string

	// FindingGroups are the run's findings, each in exactly one group:
	// the page lists the groups only, so that no finding is said twice.
	FindingGroups []findingGroupView

	// Blocks are the run's comparison blocks (a single run's; a matrix's
	// are in its matrix section).
	Blocks  []blockView
	Explain []explainView

	// Verification is the run's write verification (see
	// result.Verification).
	Verification []verificationRow

	// Durability is the run's durability phase (see result.Durability).
	Durability []durabilityRow

	Loads    []loadRow
	Excluded []string

	// Capacity is the capacity section of a `mongobench capacity`
	// result (capacity_html.go), empty otherwise.
	Capacity capacitySection
	Phases   []*phaseView

	Server *serverView
	Errors []errorRow

	// Client is the external client stack that ran the phases (nil: the
	// Go engine), see report_client.go.
	Client *clientView

	// Nav links to the section's parts.
	Nav []navLink

	// Overview is the run's line in the table comparing several runs.
	Overview overviewRow
}

// field is a labelled value.
type field struct {
	Label string
	Value string
	// Mono shows the value in a fixed-width font.
	Mono bool
	// Class is an extra CSS class for the value.
	Class string
}

type navLink struct {
	Href  string
	Label string
	Class string
}

type explainView struct {
	Operation      string
	Collection     string
	Format         string
	Stages         string
	Index          string
	CollectionScan bool
	KeysExamined   string
	DocsExamined   string
	DocsReturned   string
	ExecutionMS    string
	Pushdown       string
	Warnings       []string
	Error          string
	Command        string
	Raw            string
}

// loadRow summarises a loading phase.
type loadRow struct {
	Phase    string
	Docs     string
	Batches  string
	Duration string
	DocsRate string
	P50      string
	P99      string
	Max      string
	Errors   []string
	Bad      bool
}

type serverView struct {
	Sources    []sourceBadge
	Notes      []string
	Meta       []field
	PhaseSpans []string
	Charts     []*chart
	Top        []topRow
}

type sourceBadge struct {
	Name string
	OK   bool
}

type topRow struct {
	Namespace string
	Read      string
	Write     string
	Total     string
	Share     string
}

type errorRow struct {
	Phase     string
	Operation string
	Kind      string
	Count     string
	Share     string
}

type overviewRow struct {
	Server   string
	Rate     string
	WorstP99 string
	Errors   string
	Failed   bool
}

// newRunView builds the section of results file n (counted from 1).
func newRunView(n int, label string, r *result.Result, describe func(string) string) *runView {
	v := &runView{
		ID:           fmt.Sprintf("r%d", n),
		Label:        label,
		Workload:     r.Workload.Name,
		Started:      formatTime(r.StartedAt),
		Status:       r.Status,
		StatusReason: r.StatusReason,
		Notes:        r.Target.Notes,
		WorkloadFile: r.Workload.File,
	}

	switch r.Status {
	case result.StatusCompleted:
		v.StatusClass = "ok"
	case result.StatusInterrupted, result.StatusIncomplete:
		v.StatusClass = "warn"
	default:
		v.StatusClass = "bad"
	}

	if v.Status == "" {
		v.Status = "unknown"
	}

	v.Meta = runMeta(r, describe)
	v.WorkloadSource = r.Workload.Source
	v.Description, v.WorkloadSpec = specText(r.Workload.Spec)

	v.FindingGroups = newFindingGroupViews(r)
	v.Capacity = capacityHTML(v.ID, r.Capacity)
	if r.Matrix == nil {
		v.Blocks = newBlockViews(r)
	}
	v.Verification = newVerificationRows(r.Verifications())
	v.Durability = newDurabilityRows(r)

	for i := range r.Explain {
		v.Explain = append(v.Explain, newExplainView(&r.Explain[i]))
	}

	cols := colors{}
	// Colours follow the main phase's operations, then any others.
	if m := r.MainPhase(); m != nil {
		for _, o := range m.Operations {
			cols.of(o.Name)
		}
	}

	for i := range r.Phases {
		p := &r.Phases[i]

		switch {
		case p.Excluded:
			v.Excluded = append(v.Excluded, fmt.Sprintf("%s (%s, %s, measure: false): not measured, left out of this report.",
				p.Name, modelName(p.Model), formatSeconds(p.DurationS)))
		case p.IsLoad():
			v.Loads = append(v.Loads, newLoadRows(p)...)
		default:
			v.Phases = append(v.Phases, newPhaseView(fmt.Sprintf("%s-p%d", v.ID, i+1), p, cols))
		}
	}

	if r.Server != nil {
		v.Server = newServerView(v.ID, r.Server)
	}

	v.Client = newClientView(v.ID+"-client", r.Client)

	v.Errors = errorRows(r)
	v.Overview = overview(r)
	v.Nav = runNav(v)

	return v
}

func modelName(m string) string {
	if m == "" {
		return workload.ModelClosed
	}

	return m
}

func runMeta(r *result.Result, describe func(kind string) string) []field {
	t := r.Target

	meta := []field{
		{Label: "Workload", Value: r.Workload.Name},
	}

	if r.Workload.File != "" {
		meta = append(meta, field{Label: "Workload file", Value: r.Workload.File, Mono: true})
	}

	meta = append(meta,
		field{Label: "Server", Value: t.ServerVersion},
	)

	if t.Backend != "" {
		meta = append(meta, field{Label: "Backend", Value: t.Backend})
	}

	where := t.Kind
	if t.URI != "" {
		where += " " + t.URI
	}

	meta = append(meta, field{Label: "Target", Value: where, Mono: true})

	if c := r.Client; c != nil {
		meta = append(meta, field{Label: "Client", Value: c.Stack})
	}

	// The registry of target kinds, which the caller holds, says what
	// served the load.
	if describe != nil && t.Kind != "" {
		if d := describe(t.Kind); d != "" {
			meta = append(meta, field{Label: "Target kind", Value: d})
		}
	}

	meta = append(meta,
		field{Label: "Started", Value: formatTime(r.StartedAt)},
		field{Label: "Duration", Value: formatSeconds(r.DurationS) + " (set-up included)"},
		field{Label: "Concurrency", Value: fmt.Sprint(r.Concurrency)},
		field{Label: "Seed", Value: fmt.Sprint(r.Seed), Mono: true},
		field{Label: "mongobench", Value: r.MongobenchVersion, Mono: true},
	)

	return meta
}

// specText returns the workload's description and its parsed form as
// indented JSON, keys in the order stored. The spec is whatever the writer
// stored: a generic JSON value when read from a file, the workload itself
// in-process.
func specText(spec any) (description, text string) {
	if spec == nil {
		return "", ""
	}

	// Not HTML-escaped here: the template escapes the text.
	var raw bytes.Buffer

	enc := json.NewEncoder(&raw)
	enc.SetEscapeHTML(false)

	if err := enc.Encode(spec); err != nil {
		return "", ""
	}

	data := bytes.TrimSpace(raw.Bytes())
	if string(data) == "null" {
		return "", ""
	}

	var head struct {
		Description string `json:"description"`
	}

	if err := json.Unmarshal(data, &head); err == nil {
		description = head.Description
	}

	var pretty bytes.Buffer
	if err := json.Indent(&pretty, data, "", "  "); err != nil {
		return description, ""
	}

	return description, pretty.String()
}

func newExplainView(e *result.Explain) explainView {
	ev := explainView{
		Operation:      e.Operation,
		Collection:     e.Collection,
		Format:         e.Format,
		Stages:         strings.Join(e.Stages, " → "),
		Index:          e.Index,
		CollectionScan: e.CollectionScan,
		KeysExamined:   optCount(e.KeysExamined),
		DocsExamined:   optCount(e.DocsExamined),
		DocsReturned:   optCount(e.DocsReturned),
		Warnings:       e.Warnings,
		Error:          e.Error,
		Command:        e.Command,
		Raw:            e.Raw,
	}

	ev.ExecutionMS = "–"
	if e.ExecutionMS >= 0 {
		ev.ExecutionMS = fmt.Sprintf("%.2f ms", e.ExecutionMS)
	}

	if len(e.Pushdown) > 0 {
		keys := make([]string, 0, len(e.Pushdown))
		for k := range e.Pushdown {
			keys = append(keys, k)
		}

		sort.Strings(keys)

		parts := make([]string, len(keys))
		for i, k := range keys {
			mark := "no"
			if e.Pushdown[k] {
				mark = "yes"
			}

			parts[i] = k + ": " + mark
		}

		ev.Pushdown = strings.Join(parts, ", ")
	}

	return ev
}

// optCount formats a count where -1 means unknown.
func optCount(n int64) string {
	if n < 0 {
		return "–"
	}

	return groupDigits(n)
}

func newLoadRows(p *result.Phase) []loadRow {
	var rows []loadRow

	for _, o := range p.Operations {
		rate := "–"
		if p.DurationS > 0 {
			rate = formatRate(float64(o.Docs) / p.DurationS)
		}

		errs := errorTotal(o.Errors)
		rows = append(rows, loadRow{
			Phase:    p.Name,
			Docs:     groupDigits(o.Docs),
			Batches:  groupDigits(o.Count),
			Duration: formatSeconds(p.DurationS),
			DocsRate: rate,
			P50:      latencyCell(o.Count, o.LatencyUS.P50),
			P99:      latencyCell(o.Count, o.LatencyUS.P99),
			Max:      latencyCell(o.Count, o.LatencyUS.Max),
			Errors:   errorsList(o.Errors),
			Bad:      errs > 0,
		})
	}

	return rows
}

// errorRows lists every failed operation by phase, operation and kind.
func errorRows(r *result.Result) []errorRow {
	var rows []errorRow

	for _, p := range r.Phases {
		if p.Excluded {
			continue
		}

		for _, o := range p.Operations {
			attempts := o.Count + errorTotal(o.Errors)
			for _, k := range errorKinds(o.Errors) {
				rows = append(rows, errorRow{
					Phase:     p.Name,
					Operation: o.Name,
					Kind:      k,
					Count:     groupDigits(o.Errors[k]),
					Share:     fmt.Sprintf("%.2f%%", 100*float64(o.Errors[k])/float64(attempts)),
				})
			}
		}
	}

	return rows
}

// overview summarises a run's main phase for the table of several runs.
func overview(r *result.Result) overviewRow {
	row := overviewRow{Server: r.Target.ServerVersion, Rate: "–", WorstP99: "–", Errors: "0"}

	m := r.MainPhase()
	if m == nil {
		return row
	}

	var rate, worst float64

	var errs, count int64

	for _, o := range m.Operations {
		rate += o.OpsPerSec
		count += o.Count
		errs += errorTotal(o.Errors)

		if o.Count > 0 {
			worst = max(worst, o.LatencyUS.P99)
		}
	}

	row.Rate = formatRate(rate)
	if count > 0 {
		row.WorstP99 = units.Micros(worst)
	}

	row.Errors = groupDigits(errs)
	row.Failed = errs > 0

	return row
}

func runNav(v *runView) []navLink {
	links := []navLink{{Href: "#" + v.ID + "-meta", Label: "Run"}}

	if len(v.Blocks) > 0 {
		links = append(links, navLink{Href: "#" + v.ID + "-comparison", Label: "Comparison"})
	}

	if len(v.FindingGroups) > 0 {
		links = append(links, navLink{Href: "#" + v.ID + "-findings", Label: "Findings"})
	}

	if len(v.Explain) > 0 {
		links = append(links, navLink{Href: "#" + v.ID + "-explain", Label: "Query plans"})
	}

	if len(v.Loads) > 0 {
		links = append(links, navLink{Href: "#" + v.ID + "-load", Label: "Load"})
	}

	for _, p := range v.Phases {
		links = append(links, navLink{Href: "#" + p.ID, Label: "Phase " + p.Name})
	}

	if v.Client != nil {
		links = append(links, navLink{Href: "#" + v.ID + "-client", Label: "Client"})
	}

	if v.Server != nil {
		links = append(links, navLink{Href: "#" + v.ID + "-server", Label: "Server"})
	}

	if len(v.Errors) > 0 {
		links = append(links, navLink{Href: "#" + v.ID + "-errors", Label: "Errors", Class: "bad"})
	}

	return links
}

// defaultLabel names a run without a file name: its workload and start.
func defaultLabel(r *result.Result) string {
	name := r.Workload.Name
	if name == "" {
		name = "run"
	}

	if r.StartedAt.IsZero() {
		return name
	}

	return name + " " + r.StartedAt.UTC().Format("2006-01-02 15:04:05Z")
}

// sourceLabel names a run after its file.
func sourceLabel(path string) string {
	return filepath.ToSlash(path)
}

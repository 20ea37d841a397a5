package history

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/mongobench/mongobench/internal/analysis"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/spec/workload"
	"github.com/mongobench/mongobench/internal/stats/threshold"
	vd "github.com/mongobench/mongobench/internal/stats/verdict"
)

// DefaultMetrics are the metrics every series is tracked in.
var DefaultMetrics = []threshold.Metric{
	{Kind: threshold.Throughput},
	{Kind: threshold.Mean},
	{Kind: threshold.Percentile, Percent: 50},
	{Kind: threshold.Percentile, Percent: 90},
	{Kind: threshold.Percentile, Percent: 95},
	{Kind: threshold.Percentile, Percent: 99},
	{Kind: threshold.Percentile, Percent: 99.9},
	{Kind: threshold.ErrorRate},
}

// Run is one results file in a series.
type Run struct {
	File      string    `json:"file"`
	Label     string    `json:"label,omitempty"`
	Commit    string    `json:"commit,omitempty"`
	StartedAt time.Time `json:"started_at"`
	// SLO are a capacity search's objectives, as written.
	SLO []string `json:"slo,omitempty"`

	res *result.Result
}

// Name is how a run is shown: its file, with its label and commit when
// the run has them.
func (r Run) Name() string {
	var extra []string

	if r.Label != "" {
		extra = append(extra, r.Label)
	}

	if r.Commit != "" {
		extra = append(extra, "commit "+shortCommit(r.Commit))
	}

	if len(extra) == 0 {
		return r.File
	}

	return r.File + " (" + strings.Join(extra, ", ") + ")"
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}

	return c
}

// Skipped is a results file left out of every series, and why.
type Skipped struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
}

// Load reads src's results and keeps the runs that can be part of a
// series. Results that cannot be (matrix files, runs that did not
// complete) are skipped with a reason, and so is a file that could not be
// read when it was found in a directory (or a store); a file named on its
// own that cannot be read is an error: the user asked for it.
func Load(ctx context.Context, src Source) ([]Run, []Skipped, error) {
	files, err := src.Results(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("history: %w", err)
	}

	var (
		runs    []Run
		skipped []Skipped
	)

	for _, e := range files.Errors {
		var fe *result.FileError

		switch {
		case errors.Is(e, result.ErrNoResultsFiles):
			// An empty directory is an empty history.
		case errors.As(e, &fe) && fe.Path != fe.Arg:
			skipped = append(skipped, Skipped{File: fe.Path, Reason: e.Error()})
		default:
			return nil, nil, fmt.Errorf("history: %w", e)
		}
	}

	for _, f := range files.Files {
		if why := Unfit(f.Result); why != "" {
			skipped = append(skipped, Skipped{File: f.Path, Reason: why})
			continue
		}

		run := Run{File: f.Path, Label: f.Result.Label, Commit: f.Result.Commit, StartedAt: f.Result.StartedAt, res: f.Result}
		if c := f.Result.Capacity; c != nil {
			run.SLO = c.SLO
		}

		runs = append(runs, run)
	}

	return runs, skipped, nil
}

// Unfit says why res cannot be part of a series, "" when it can.
func Unfit(res *result.Result) string {
	switch {
	case res.Kind() == result.KindMatrix:
		return "a matrix file: its trials are not one run"
	case res.Status != result.StatusCompleted:
		return "the run did not complete (" + res.Status + ")"
	case res.MainPhase() == nil:
		return "no measured phase"
	}

	return ""
}

// Key is what makes runs comparable: the same workload with the same
// parameters, on the same kind of target, through the same client stack.
// Server and client versions are not part of it: a new version is a change
// the history should show, not a new series.
type Key struct {
	Workload string `json:"workload"`
	// Spec is a digest of the fully parsed workload (every parameter,
	// --set values and defaults included) and the run's concurrency.
	Spec    string `json:"spec"`
	Target  string `json:"target"`
	Backend string `json:"backend,omitempty"`
	Client  string `json:"client"`
	// Kind is KindCapacity for the results of capacity searches, whose
	// series track the maximum sustainable rate (and whose Spec digest
	// includes the objectives: a capacity under another SLO is another
	// quantity); empty for runs.
	Kind string `json:"kind,omitempty"`
}

// KindCapacity is the Kind of a series of capacity searches.
const KindCapacity = "capacity"

// String is the key for people: "ycsb-c · uri · go engine · spec 1a2b3c4d".
func (k Key) String() string {
	target := k.Target
	if k.Backend != "" {
		target += " (" + k.Backend + ")"
	}

	out := k.Workload + " · " + target + " · " + k.Client + " · spec " + k.Spec
	if k.Kind != "" {
		out += " · " + k.Kind
	}

	return out
}

func keyOf(res *result.Result) Key {
	// The spec as read is generic JSON: marshalling it again sorts the
	// keys, so equal specs give equal digests.
	kind := ""

	var slo []string
	if res.Capacity != nil {
		kind, slo = KindCapacity, res.Capacity.SLO
	}

	spec, err := json.Marshal(struct {
		Spec        any      `json:"spec"`
		Concurrency int      `json:"concurrency"`
		SLO         []string `json:"slo,omitempty"`
	}{res.Workload.Spec, res.Concurrency, slo})
	if err != nil {
		spec = []byte(err.Error())
	}

	sum := sha256.Sum256(spec)

	client := "go engine"
	if res.Client != nil {
		client = res.Client.Stack
	}

	return Key{
		Workload: res.Workload.Name,
		Spec:     hex.EncodeToString(sum[:4]),
		Target:   res.Target.Kind,
		Backend:  res.Target.Backend,
		Client:   client,
		Kind:     kind,
	}
}

// Series is the runs of one key in the order they started, and what was
// found in them.
type Series struct {
	Key  Key   `json:"key"`
	Runs []Run `json:"runs"`
	// Metrics are one per operation and metric, operations in the order
	// they first appear.
	Metrics []Metric `json:"metrics"`
}

// Metric is one operation's metric over a series' runs.
type Metric struct {
	Operation string `json:"operation"`
	Metric    string `json:"metric"`
	// Values are one per run of the series, NaN (null in JSON) where the
	// run has no value: no such operation, or no success to take a
	// latency from.
	Values []Value `json:"values"`
	// Noise is each run's own dispersion of the metric: the median
	// absolute deviation of its per-interval values over their median
	// (0.05: intervals typically 5% off the run's median), null with
	// fewer than 3 intervals.
	Noise []Value `json:"noise"`
	// Low and High are each run's 95% confidence interval of the value,
	// where the results file holds one: the capacity's (MaxRate), null
	// for a run without a value. Absent for the other metrics.
	Low          []Value       `json:"low,omitempty"`
	High         []Value       `json:"high,omitempty"`
	ChangePoints []ChangePoint `json:"-"`
	Changes      []Change      `json:"change_points"`

	m threshold.Metric
	// capacity marks the maximum sustainable rate, which is not one of
	// an operation's metrics.
	capacity bool
}

// MaxRate is the name of a capacity series' metric: the maximum
// sustainable rate in operations per second, on all operations together.
// A drop is a regression, as for throughput.
const MaxRate = "max_rate"

// Threshold is the metric's kind, for formatting its values and knowing
// which way is worse: the maximum sustainable rate is a throughput.
func (mt Metric) Threshold() threshold.Metric {
	if mt.Metric == MaxRate {
		return threshold.Metric{Kind: threshold.Throughput}
	}

	m, _ := threshold.ParseMetric(mt.Metric)

	return m
}

// Value is a float that is null in JSON when NaN.
type Value float64

// MarshalJSON writes NaN as null.
func (v Value) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(v)) {
		return []byte("null"), nil
	}

	return json.Marshal(float64(v))
}

// Change is a change point as reported: where it starts, the levels on
// either side and their ratio.
type Change struct {
	// Run is the index in the series' runs of the first run at the new
	// level; File and Label name it.
	Run   int    `json:"run"`
	File  string `json:"file"`
	Label string `json:"label,omitempty"`
	// Before and After are the medians of the segments either side (from
	// the previous change point, up to the next).
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	// Ratio is After/Before as estimated from the two segments' runs (the
	// unpaired estimate of package verdict), and RatioLo and RatioHi its
	// confidence interval at 1−Alpha.
	Ratio   float64 `json:"ratio"`
	RatioLo float64 `json:"ratio_lo"`
	RatioHi float64 `json:"ratio_hi"`
	// P is the permutation test's p-value.
	P float64 `json:"p"`
	// Worse says the metric got worse: higher latency or error rate, lower
	// throughput.
	Worse bool `json:"worse"`
}

// Build groups runs into series and finds each metric's change points.
// extra metrics are tracked besides DefaultMetrics (a --fail-on-regression
// metric that is not one of them).
func Build(runs []Run, extra []threshold.Metric, opts Options) []Series {
	byKey := map[Key]*Series{}

	var order []Key

	for _, r := range runs {
		k := keyOf(r.res)
		if byKey[k] == nil {
			byKey[k] = &Series{Key: k}
			order = append(order, k)
		}

		byKey[k].Runs = append(byKey[k].Runs, r)
	}

	ms := slices.Clone(DefaultMetrics)

	for _, m := range extra {
		if !slices.Contains(ms, m) {
			ms = append(ms, m)
		}
	}

	out := make([]Series, 0, len(order))

	for _, k := range order {
		s := byKey[k]
		slices.SortStableFunc(s.Runs, func(a, b Run) int {
			return cmp.Or(a.StartedAt.Compare(b.StartedAt), strings.Compare(a.File, b.File))
		})

		if k.Kind == KindCapacity {
			s.Metrics = []Metric{capacityMetric(s.Runs, opts)}
		} else {
			s.Metrics = metricsOf(s.Runs, ms, opts)
		}
		out = append(out, *s)
	}

	slices.SortStableFunc(out, func(a, b Series) int { return strings.Compare(a.Key.String(), b.Key.String()) })

	return out
}

// metricsOf computes the values and change points of every operation and
// metric of runs.
func metricsOf(runs []Run, ms []threshold.Metric, opts Options) []Metric {
	var ops []string

	for _, r := range runs {
		for _, o := range r.res.MainPhase().Operations {
			if !slices.Contains(ops, o.Name) {
				ops = append(ops, o.Name)
			}
		}
	}

	var out []Metric

	for _, op := range ops {
		for _, m := range ms {
			vals := make([]Value, len(runs))
			noise := make([]Value, len(runs))

			for i, r := range runs {
				vals[i] = Value(valueOf(r.res.MainPhase(), op, m))
				noise[i] = Value(noiseOf(r.res.MainPhase(), op, m))
			}

			mt := Metric{Operation: op, Metric: m.String(), Values: vals, Noise: noise, m: m}
			mt.detect(runs, opts)
			out = append(out, mt)
		}
	}

	return out
}

// capacityMetric is a capacity series' one metric: each search's maximum
// sustainable rate with its interval. A search whose rate is not a
// measurement of the server has no value (NaN): one that confirmed no
// rate, and one the client limited, whose rate is a lower bound that a
// change detector would read as a drop. The phases of a capacity result
// are its confirmation run's, at a rate that differs from search to
// search, so its operations' latencies are not tracked.
func capacityMetric(runs []Run, opts Options) Metric {
	mt := Metric{
		Operation: workload.AllOperations, Metric: MaxRate,
		Values: make([]Value, len(runs)), Noise: make([]Value, len(runs)),
		Low: make([]Value, len(runs)), High: make([]Value, len(runs)),
		m: threshold.Metric{Kind: threshold.Throughput}, capacity: true,
	}

	for i, r := range runs {
		mt.Values[i], mt.Noise[i], mt.Low[i], mt.High[i] = Value(math.NaN()), Value(math.NaN()), Value(math.NaN()), Value(math.NaN())

		c := r.res.Capacity
		if c == nil || !c.Confirmed || c.ClientLimited || !(c.MaxRate > 0) {
			continue
		}

		mt.Values[i] = Value(c.MaxRate)

		if c.MaxRateCI[1] > 0 {
			mt.Low[i], mt.High[i] = Value(c.MaxRateCI[0]), Value(c.MaxRateCI[1])
		}
	}

	mt.detect(runs, opts)

	return mt
}

// valueOf is metric m of operation op over phase p, NaN when it has none.
// Latencies come from the phase's merged histogram (its stored summary for
// the usual percentiles, which Check verifies against it).
func valueOf(p *result.Phase, op string, m threshold.Metric) float64 {
	i := slices.IndexFunc(p.Operations, func(o result.Operation) bool { return o.Name == op })
	if i < 0 {
		return math.NaN()
	}

	return opValue(p.Operations[i], p.DurationS, m)
}

// noiseOf is the run's own dispersion of metric m of operation op: the
// median absolute deviation of the phase's per-interval values relative to
// their median, NaN with fewer than 3 intervals that have a value. It says
// how much the metric moves within one run, beside the spread between
// runs that the detector judges by.
func noiseOf(p *result.Phase, op string, m threshold.Metric) float64 {
	var vals []float64

	for _, iv := range p.Intervals {
		i := slices.IndexFunc(iv.Operations, func(o result.Operation) bool { return o.Name == op })
		if i < 0 {
			continue
		}

		if v := opValue(iv.Operations[i], iv.End.Sub(iv.Start).Seconds(), m); !math.IsNaN(v) {
			vals = append(vals, v)
		}
	}

	med := vd.Median(vals)
	if len(vals) < 3 || med == 0 {
		return math.NaN()
	}

	dev := make([]float64, len(vals))
	for i, v := range vals {
		dev[i] = math.Abs(v - med)
	}

	return vd.Median(dev) / math.Abs(med)
}

// opValue is metric m of one operation's measurements over seconds
// (analysis.MetricValue), NaN where there is none: also a throughput
// without a duration, which the operation's own ops/s would hide.
func opValue(o result.Operation, seconds float64, m threshold.Metric) float64 {
	if m.Kind == threshold.Throughput && seconds <= 0 {
		return math.NaN()
	}

	v, ok := analysis.MetricValue(o, seconds, m)
	if !ok {
		return math.NaN()
	}

	return v
}

// detect finds the change points of the metric's values, leaving out runs
// without a value, and describes each.
func (mt *Metric) detect(runs []Run, opts Options) {
	var (
		xs  []float64
		idx []int // run index of each of xs
	)

	for i, v := range mt.Values {
		if !math.IsNaN(float64(v)) {
			xs = append(xs, float64(v))
			idx = append(idx, i)
		}
	}

	mt.ChangePoints = Detect(xs, opts)

	for c, cp := range mt.ChangePoints {
		lo, hi := 0, len(xs)
		if c > 0 {
			lo = mt.ChangePoints[c-1].Index
		}

		if c+1 < len(mt.ChangePoints) {
			hi = mt.ChangePoints[c+1].Index
		}

		before, after := xs[lo:cp.Index], xs[cp.Index:hi]

		var samples []vd.Sample
		for _, v := range before {
			samples = append(samples, vd.Sample{Variant: "before", Value: v})
		}

		for _, v := range after {
			samples = append(samples, vd.Sample{Variant: "after", Value: v})
		}

		// LowerIsBetter makes Ratio after/before whatever the metric;
		// Worse says which way is bad.
		ratio, rlo, rhi := math.NaN(), math.NaN(), math.NaN()

		if vs := vd.CompareTo(samples, "before", vd.LowerIsBetter, vd.Options{Alpha: opts.norm().Alpha, Design: vd.Unpaired, Unit: "run"}); len(vs) == 2 {
			ratio, rlo, rhi = vs[1].Ratio, vs[1].RatioLo, vs[1].RatioHi
		}

		b, a := vd.Median(before), vd.Median(after)
		run := runs[idx[cp.Index]]

		mt.Changes = append(mt.Changes, Change{
			Run: idx[cp.Index], File: run.File, Label: run.Label,
			Before: b, After: a, Ratio: ratio, RatioLo: rlo, RatioHi: rhi, P: cp.P,
			Worse: (a > b) == mt.m.HigherIsWorse(),
		})
	}
}

// Regression is a change for the worse that the newest runs start.
type Regression struct {
	Series Key
	Metric Metric
	Change Change
}

// ErrNoSuchMetric is returned by Regressions when no series has the
// selected operation.
var ErrNoSuchMetric = errors.New("no series has the selected operation")

// Gate is a --fail-on-regression selector: a change of an operation's
// metric (threshold.Change), or, with Capacity, of a capacity series'
// maximum sustainable rate ("max_rate -10%").
type Gate struct {
	threshold.Change
	Capacity bool
}

// ParseGate reads a --fail-on-regression expression: the grammar of
// compare's --fail-if, or "max_rate -N%" (a drop of the capacity).
func ParseGate(s string) (Gate, error) {
	t := strings.TrimSpace(s)

	if rest, ok := strings.CutPrefix(t, MaxRate); ok && strings.TrimSpace(rest) != "" && strings.ContainsAny(strings.TrimSpace(rest)[:1], "+-") {
		c, err := threshold.ParseChange("throughput" + rest)
		if err != nil {
			return Gate{}, err
		}

		return Gate{Change: c, Capacity: true}, nil
	}

	c, err := threshold.ParseChange(t)
	if err != nil {
		return Gate{}, fmt.Errorf("%w, or max_rate -N%% for a capacity series", err)
	}

	return Gate{Change: c}, nil
}

// Regressions are the series whose selected metric's last change point is
// for the worse by more than the selector's percentage, and starts within
// the newest recent runs: a change that has held longer than that is the
// series' established level, reported but no longer failing.
func Regressions(series []Series, sel Gate, recent int) ([]Regression, error) {
	var (
		out   []Regression
		found bool
	)

	for _, s := range series {
		for _, mt := range s.Metrics {
			if mt.capacity != sel.Capacity || mt.m != sel.Metric || (sel.Operation != "" && mt.Operation != sel.Operation) {
				continue
			}

			found = true

			if len(mt.Changes) == 0 {
				continue
			}

			c := mt.Changes[len(mt.Changes)-1]
			if c.Run < len(s.Runs)-recent {
				continue
			}

			limit := sel.Percent / 100
			if (sel.Up && c.After > c.Before && c.Ratio > 1+limit) || (!sel.Up && c.After < c.Before && c.Ratio < 1-limit) {
				out = append(out, Regression{Series: s.Key, Metric: mt, Change: c})
			}
		}
	}

	if !found && sel.Operation != "" {
		return nil, fmt.Errorf("%w %q", ErrNoSuchMetric, sel.Operation)
	}

	return out, nil
}

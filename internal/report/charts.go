package report

import "math"

// chart is one chart: the page's script draws it with uPlot from this data,
// which the page carries as JSON. The fields without a JSON name are for the
// template (the chart's heading and caption).
type chart struct {
	// ID is the id of the element the chart is drawn into.
	ID string `json:"id"`

	// Kind is "" for lines over X, "bars" for a bar chart of Bars (with
	// confidence whiskers and verdicts), "spectrum" for a percentile
	// spectrum (X in nines: log10(1/(1−q))).
	Kind string `json:"kind,omitempty"`

	// Bars are a bar chart's bars, in order.
	Bars []bar `json:"bars,omitempty"`

	// YLog draws the left axis logarithmic from the start.
	YLog bool `json:"y_log,omitempty"`

	// SpanGaps joins a line across missing values (for overlays of runs
	// whose intervals end at different times).
	SpanGaps bool `json:"span_gaps,omitempty"`

	// Title and Note are the chart's heading and caption.
	Title string `json:"-"`
	Note  string `json:"-"`

	// XLabel and XUnit describe the x axis; XUnit is "s" (seconds) or
	// "count". XName is the x value's short name in the legend.
	XLabel string `json:"x_label"`
	XName  string `json:"x_name"`
	XUnit  string `json:"x_unit"`

	// YLabel and YUnit describe the left axis and Y2Label and Y2Unit the
	// right one, used by series with Axis 2. Units are "us" (latency in
	// microseconds), "rate" (per second), "count", "bytes" and
	// "bytes_rate".
	YLabel  string `json:"y_label"`
	YUnit   string `json:"y_unit"`
	Y2Label string `json:"y2_label,omitempty"`
	Y2Unit  string `json:"y2_unit,omitempty"`

	// Sync links the cursors of charts with the same key (and x axis).
	Sync string `json:"sync,omitempty"`

	// LogToggle offers a logarithmic left axis.
	LogToggle bool `json:"log_toggle,omitempty"`

	// Points draws a marker at every point (for charts with few).
	Points bool `json:"points,omitempty"`

	// X are the x values, ascending; every series has one value for each.
	X []float64 `json:"x"`

	Series []series `json:"series"`
}

// series is one line of a chart.
type series struct {
	Label string `json:"label"`
	Color string `json:"color"`

	// Dash is "", "dash" or "dot".
	Dash string `json:"dash,omitempty"`

	// Axis is 2 for the right axis, else the left one.
	Axis int `json:"axis,omitempty"`

	// Width is the line width in CSS pixels; 0 means the default.
	Width float64 `json:"width,omitempty"`

	// Values has one entry per x; nil is a gap.
	Values []*float64 `json:"values"`
}

// num returns a chart value, nil (a gap) for values JSON cannot hold.
func num(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}

	return &v
}

// hasValue reports whether any value of s is set.
func (s *series) hasValue() bool {
	for _, v := range s.Values {
		if v != nil {
			return true
		}
	}

	return false
}

// palette holds the operation colours, chosen to be told apart on white.
var palette = []string{
	"#2563eb", "#ea580c", "#16a34a", "#dc2626", "#9333ea",
	"#0891b2", "#ca8a04", "#db2777", "#4b5563", "#65a30d",
}

// Colours of lines that are not operations.
const (
	colorTotal  = "#111827"
	colorTarget = "#6b7280"
	colorHigh   = "#dc2626"
	colorLow    = "#16a34a"
)

// colors assigns each operation name of a run a stable colour, in the order
// names are first seen.
type colors map[string]string

func (c colors) of(name string) string {
	if col, ok := c[name]; ok {
		return col
	}

	col := palette[len(c)%len(palette)]
	c[name] = col

	return col
}

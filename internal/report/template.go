package report

import "html/template"

// tableArgs is what the latency-table template needs: the phase (for its
// optional columns) and the rows.
type tableArgs struct {
	Phase *phaseView
	Rows  []opRow
}

// pageTmpl is the page. html/template escapes every value for its context;
// the chart data, a Go value in a JSON script element, is marshalled to
// JSON with "<", ">" and "&" escaped, so no result can end the element.
var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"tableArgs": func(p *phaseView, rows []opRow) tableArgs { return tableArgs{Phase: p, Rows: rows} },
}).Parse(pageTemplate))

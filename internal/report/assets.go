package report

import (
	_ "embed" // the chart library and the page's own script and style
	"html/template"
	"strings"
)

// uplotVersion is the version of the vendored uPlot (see assets/README.md).
const uplotVersion = "1.6.32"

var (
	//go:embed assets/uPlot.iife.min.js
	uplotJS string

	//go:embed assets/uPlot.min.css
	uplotCSS string

	//go:embed assets/LICENSE
	uplotLicense string

	//go:embed page/page.js
	pageJS string

	//go:embed page/page.css
	pageCSS string

	//go:embed page/page.html.tmpl
	pageTemplate string
)

// libraryJS returns uPlot's script for inlining: its banner comment, the
// only web address in it, is replaced by one naming the library and its
// licence, and the licence text follows, as the MIT licence asks.
func libraryJS() template.JS {
	js := uplotJS
	if strings.HasPrefix(js, "/*!") {
		if end := strings.Index(js, "*/"); end >= 0 {
			js = js[end+2:]
		}
	}

	lic := strings.ReplaceAll(strings.TrimSpace(uplotLicense), "*/", "* /")

	return template.JS("/*! uPlot v" + uplotVersion + " by Leon Sorokin, MIT licence (below) */" + js +
		"\n/*\nuPlot licence:\n\n" + lic + "\n*/\n")
}

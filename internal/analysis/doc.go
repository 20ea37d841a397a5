// Package analysis turns measured results into answers: the verdicts of a
// matrix (variants and targets compared round by round), the findings of a
// run, the comparison of results files with their --fail-if gates, and the
// table models that every output renders.
//
// It exists so that the questions a benchmark asks are answered in one
// place, apart from how the numbers are measured (package bench) and how
// they are shown (package cli for the terminal and Markdown, package report
// for HTML). Data flows one way: a workload file becomes a plan, package
// bench runs it and assembles a result.Result, this package analyses the
// result, and cli prints what it computed. It reads results only; it never
// talks to a server.
package analysis

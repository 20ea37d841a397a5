// Package bench runs a benchmark plan: the variants of a workload on its
// targets, in interleaved rounds, each trial on a database it claims and
// resets, and assembles what was measured into a results file's model.
//
// It exists so that running a benchmark is one engine with one path to
// every target (embedded, launched or given by URI), apart from the
// command line that asks for it. Data flows one way: package workload reads
// and validates a file, package plan turns it and the command line's
// settings into a Plan, Run executes the plan through package runner and
// returns the measured result.Result (a run's log records the threshold
// outcomes; findings, verdicts and the exit status are package finish's,
// which cli calls as finish and merge do), and package cli writes and
// prints it. bench never writes to the
// terminal itself: it reports progress to a runner.Observer and its
// messages (what it waits for, warnings, what a target is) to Messages, and
// lets its caller register cleanups for a forced exit.
package bench

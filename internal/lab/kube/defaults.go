package kube

import (
	"regexp"
	"strings"
	"time"
)

// The defaults of the options a user may leave out, so that the command
// line's flags and the manifests agree on them.
const (
	// DefaultImage is the mongobench container image.
	DefaultImage = "mongobench:latest"

	// DefaultURIKey is the Secret's key holding the connection string.
	DefaultURIKey = "uri"

	// DefaultResultsSize is the size of the results claim mongobench makes.
	DefaultResultsSize = "1Gi"

	// DefaultMergeTimeout bounds the merge's wait for the shards' files:
	// a day, longer than any sensible run.
	DefaultMergeTimeout = 24 * time.Hour
)

// runIDLayout names a run's directory by its start, UTC, to the second:
// sortable, and unlike an earlier run's.
const runIDLayout = "20060102-150405"

// SetDefaults fills the options derived when left empty: Name from the
// workload's name (see ObjectName), URISecret as NAME-uri, RunID from now.
func (o *Options) SetDefaults(workload string, now time.Time) {
	if o.Name == "" {
		o.Name = ObjectName(workload)
	}

	if o.URISecret == "" {
		o.URISecret = o.Name + "-uri"
	}

	if o.RunID == "" {
		o.RunID = now.UTC().Format(runIDLayout)
	}
}

// nameRe matches what a Kubernetes name may not hold.
var nameRe = regexp.MustCompile(`[^a-z0-9]+`)

// ObjectName turns a workload name into a name Kubernetes accepts (at most
// MaxNameLen characters), or "mongobench" when nothing of it is left.
func ObjectName(workload string) string {
	s := strings.Trim(nameRe.ReplaceAllString(strings.ToLower(workload), "-"), "-")
	if len(s) > MaxNameLen {
		s = strings.TrimRight(s[:MaxNameLen], "-")
	}

	if s == "" {
		return "mongobench"
	}

	return s
}

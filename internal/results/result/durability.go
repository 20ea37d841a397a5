package result

import "fmt"

// Durability is what one durability phase found: writers inserted
// documents with unique _ids, each acknowledged one was recorded, the server
// was killed under load and restarted on the same data, and the
// acknowledged documents were looked for (Jepsen's acknowledged-writes
// check). Lost > 0 means the server acknowledged writes it did not keep.
type Durability struct {
	// Target and Variant name what was crashed: the target's name and the
	// variant whose write concern was used (empty without variants).
	Target  string `json:"target"`
	Variant string `json:"variant,omitempty"`

	// Kind is the target's kind; Server describes the crashed server and
	// its durability settings.
	Kind   string `json:"kind"`
	Server string `json:"server,omitempty"`

	// WriteConcern is the writes' write concern, e.g. "w:1,j:true" or
	// "default".
	WriteConcern string `json:"write_concern"`

	// Crash says what was killed, e.g. "SIGKILL of PostgreSQL: the
	// postmaster and all its children, stopped first, then killed at
	// once".
	Crash string `json:"crash,omitempty"`

	// Acknowledged is the documents the server acknowledged before the
	// crash; Lost those of them missing after the restart.
	Acknowledged int64 `json:"acknowledged"`
	Lost         int64 `json:"lost"`

	// Unacknowledged is the documents sent whose insert had no answer
	// (in flight when the server died); UnacknowledgedPresent those of
	// them found after the restart. Either outcome is allowed for them.
	Unacknowledged        int64 `json:"unacknowledged"`
	UnacknowledgedPresent int64 `json:"unacknowledged_present"`

	// Present is every document found after the restart.
	Present int64 `json:"present"`

	// LoadS is how long the writes ran before the crash, RestartS how
	// long the restart took until the server answered (crash recovery
	// included), in seconds.
	LoadS    float64 `json:"load_s"`
	RestartS float64 `json:"restart_s"`

	// Error is set when the check could not be completed; the counts are
	// then not an answer.
	Error string `json:"error,omitempty"`
}

// Answer is the check's one-line answer, e.g. "37 of 12,000 acknowledged
// documents lost after SIGKILL of ...".
func (d *Durability) Answer() string {
	if d.Error != "" {
		return "not checked: " + d.Error
	}

	return fmt.Sprintf("%s of %s acknowledged documents lost after a crash", groupThousands(d.Lost), groupThousands(d.Acknowledged))
}

// groupThousands writes n with commas between groups of three digits.
func groupThousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + groupThousands(-n)
	}

	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}

	return s
}

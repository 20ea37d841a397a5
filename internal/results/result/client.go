package result

// Client describes the client stack that ran a trial's measured phases
// when it is not mongobench's own Go engine (see docs/clients.md): what
// it was, exactly, so that two results files say which versions they
// compare.
type Client struct {
	// Stack is the stack's name, as run.client and --client write it.
	Stack string `json:"stack"`

	// Versions are the runtime's and libraries' versions the adapter
	// reported (node, mongodb, mongoose; python, pymongo, mongoengine).
	Versions map[string]string `json:"versions"`

	// Starved counts the times an adapter's worker found its queue of
	// pre-generated operations empty and waited (not timed). Non-zero
	// means mongobench's generation could not keep up: the stack was
	// offered less load than its workers could take.
	Starved int64 `json:"starved"`

	// Profile is the adapter's CPU profile summary (--client-profile).
	Profile *ClientProfile `json:"profile,omitempty"`
}

// ClientProfile is the summary of an adapter's CPU profile: its top
// frames by self and cumulative time, as the adapter wrote them to
// PREFIX.top.json next to the full profile.
type ClientProfile struct {
	// Prefix is the profile files' path prefix.
	Prefix string `json:"prefix"`

	// Frames are the top frames, as the adapter ordered them.
	Frames []ProfileFrame `json:"frames"`
}

// ProfileFrame is one function of a profile.
type ProfileFrame struct {
	Function string  `json:"function"`
	File     string  `json:"file"`
	Line     int     `json:"line"`
	SelfMS   float64 `json:"self_ms"`
	TotalMS  float64 `json:"total_ms"`
	Calls    int64   `json:"calls"`
}

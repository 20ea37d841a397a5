package runner

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"

	"github.com/mongobench/mongobench/internal/engine/errkind"
)

// A phase stops early, as aborted, in two cases that both mean that going on
// would measure nothing:
//
//   - unreachable: operations fail with network errors and nothing has
//     succeeded for the unreachable bound (the client's server selection
//     timeout). A killed server makes every new operation wait that long in
//     server selection and then fail, so the phase ends within about that
//     bound of the server's death, not at its planned end.
//   - silent: nothing has succeeded for abort_after, whatever the errors
//     (a server that answers every operation with an error, or never
//     answers).

// noteNetworkError remembers when the first network error since the last
// success happened, and aborts at once if the server has been silent for the
// unreachable bound. It runs only for failed operations.
func (pr *phaseRun) noteNetworkError(err error, at time.Time) {
	for {
		old := pr.netErrAt.Load()
		if old > pr.lastSuccess.Load() || pr.netErrAt.CompareAndSwap(old, at.UnixNano()) {
			break
		}
	}

	pr.netErr.CompareAndSwap(nil, &err)
	pr.checkAbort(at)
}

// checkAbort aborts the phase if the server is unreachable or silent as of
// now. Cancelling twice is harmless: the first cause wins.
func (pr *phaseRun) checkAbort(now time.Time) {
	last := time.Unix(0, pr.lastSuccess.Load())
	silent := now.Sub(last)

	if pr.unreachable > 0 && silent >= pr.unreachable && pr.netErrAt.Load() > last.UnixNano() {
		cause := "network error"
		if p := pr.netErr.Load(); p != nil {
			cause = networkCause(*p)
		}

		pr.cancel(&abortError{reason: fmt.Sprintf(
			"the server is unreachable: no operation succeeded since %s (%s, the server selection timeout) and operations fail with network errors (%s)",
			pr.offset(last), pr.unreachable.Round(100*time.Millisecond), cause)})

		return
	}

	if pr.abortAfter > 0 && silent > pr.abortAfter {
		reason := fmt.Sprintf("no operation succeeded for %s, since %s", silent.Truncate(time.Second), pr.offset(last))
		if err := pr.firstError(); err != nil {
			reason += fmt.Sprintf(" (first error: %s)", errkind.Of(err))
		}

		pr.cancel(&abortError{reason: reason})
	}
}

// offset says when t happened as a position in the phase: "00:04.2" counts
// from the end of warm-up, as the progress output does.
func (pr *phaseRun) offset(t time.Time) string {
	if t.Before(pr.measureFrom) {
		return fmt.Sprintf("%.1fs into warm-up", t.Sub(pr.measureFrom.Add(-pr.phase.Warmup)).Seconds())
	}

	return clock(t.Sub(pr.measureFrom))
}

// clock formats an offset as mm:ss.s.
func clock(d time.Duration) string {
	d = d.Round(100 * time.Millisecond)
	m := d / time.Minute
	s := float64(d-m*time.Minute) / float64(time.Second)

	return fmt.Sprintf("%02d:%04.1f", m, s)
}

// maxCause caps the length of a cause quoted in a reason.
const maxCause = 200

// networkCause says in a few words why the server could not be talked to:
// the socket error if there is one, the last error the driver saw for the
// server when selection failed, or the message without the driver's
// multi-line topology description. Driver network messages hold addresses,
// never credentials.
func networkCause(err error) string {
	var (
		opErr *net.OpError
		sse   topology.ServerSelectionError
	)

	msg := err.Error()

	switch {
	case errors.As(err, &opErr):
		msg = opErr.Error()
	case errors.As(err, &sse):
		msg = "no server could be selected"

		for _, s := range sse.Desc.Servers {
			if s.LastError != nil {
				msg += ": " + networkCause(s.LastError)
				break
			}
		}
	}

	msg = strings.Join(strings.Fields(msg), " ")
	if r := []rune(msg); len(r) > maxCause {
		msg = string(r[:maxCause-1]) + "…"
	}

	return msg
}

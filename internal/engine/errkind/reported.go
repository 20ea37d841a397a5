package errkind

import (
	"context"
	"slices"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Reported is a failure as a client stack other than the Go driver
// reports it (see docs/clients.md): its server error code when it has one,
// its error labels, whether the stack saw a network failure or a timeout,
// and its message.
type Reported struct {
	Code             *int
	Labels           []string
	Network, Timeout bool
	Message          string
}

// Err returns the failure in the Go driver's shapes that Of reads, so that
// another stack's failures are counted under the same kinds as the Go
// engine's: a timeout wraps context.DeadlineExceeded (timeout), a network
// failure carries the NetworkError label (network), a server error its
// code (duplicate_key for 11000, else server_<code>: the stacks send no
// code name), anything else is other.
func (r Reported) Err() error {
	ce := mongo.CommandError{Message: r.Message, Labels: slices.Clone(r.Labels)}

	if r.Code != nil {
		ce.Code = int32(*r.Code) //nolint:gosec // server error codes are small
	}

	if r.Network && !slices.Contains(ce.Labels, "NetworkError") {
		ce.Labels = append(ce.Labels, "NetworkError")
	}

	if r.Timeout {
		ce.Wrapped = context.DeadlineExceeded
	}

	return ce
}

// Package errkind maps errors returned by the official MongoDB Go driver to
// short, stable strings. Results files count failed operations per kind, so
// the kinds must not depend on message wording, connection ids or anything
// else that changes from run to run.
package errkind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strings"
	"syscall"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"
)

// The kinds Of returns besides the server_<code>_<CodeName> family. They are
// part of the results file format: renaming one breaks comparisons with older
// files.
const (
	// Timeout is an operation that ran out of time: a context deadline, a
	// socket timeout, a connection pool wait that timed out, or a server
	// MaxTimeMSExpired error.
	Timeout = "timeout"
	// Canceled is an operation whose context was canceled, which mongobench
	// does only when it stops a run; such operations are not failures.
	Canceled = "canceled"
	// Network is a failure to reach or talk to the server: connection
	// errors, network-labelled driver errors and server selection failures.
	Network = "network"
	// DuplicateKey is a write rejected because of a unique index.
	DuplicateKey = "duplicate_key"
	// WriteConcern is a write that was applied but whose write concern could
	// not be satisfied.
	WriteConcern = "write_concern"
	// Decode is a reply that could not be decoded into the Go value asked for.
	Decode = "decode"
	// NoDocuments is a single-document read (FindOne and similar) that
	// matched nothing, reported by the driver as mongo.ErrNoDocuments.
	NoDocuments = "no_documents"
	// Other is any error that fits none of the other kinds.
	Other = "other"
)

// ServerPrefix starts the kind of every server error that has a code but no
// more specific kind, as in "server_59_CommandNotFound".
const ServerPrefix = "server_"

// Of returns the kind of err, or "" when err is nil.
//
// The checks run in a fixed order, the first match wins: canceled, network
// (server selection errors go here even when they wrap a deadline, because
// the server was never reached), timeout, network, duplicate_key,
// write_concern, decode, no_documents, server_<code>_<CodeName>, other.
func Of(err error) string {
	switch {
	case err == nil:
		return ""
	case IsCanceled(err):
		return Canceled
	case isServerSelection(err):
		return Network
	case mongo.IsTimeout(err):
		return Timeout
	case isNetwork(err):
		return Network
	case isDuplicateKey(err):
		return DuplicateKey
	case hasWriteConcernError(err):
		return WriteConcern
	case isDecode(err):
		return Decode
	case errors.Is(err, mongo.ErrNoDocuments):
		return NoDocuments
	}
	if kind, ok := serverKind(err); ok {
		return kind
	}
	return Other
}

// IsCanceled reports whether err comes from a canceled context. The run
// engine uses it to drop operations that a stop cut short instead of
// counting them as failures.
func IsCanceled(err error) bool {
	return errors.Is(err, context.Canceled)
}

// isServerSelection reports whether the driver could not select a server.
// The driver returns topology.ServerSelectionError unwrapped (package mongo
// only converts errors from package driver), so errors.As finds it.
func isServerSelection(err error) bool {
	var sse topology.ServerSelectionError
	return errors.As(err, &sse)
}

// isNetwork reports whether err is a transport-level failure, whether the
// driver labelled it or it surfaced as a plain connection or socket error.
func isNetwork(err error) bool {
	if mongo.IsNetworkError(err) {
		return true
	}
	var ce topology.ConnectionError
	if errors.As(err, &ce) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	for _, target := range [...]error{io.ErrUnexpectedEOF, syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.ECONNABORTED, syscall.EPIPE} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// isDuplicateKey reports whether err is a duplicate key error. It extends
// mongo.IsDuplicateKeyError to mongo.ClientBulkWriteException, which does not
// implement mongo.ServerError and so escapes that check.
func isDuplicateKey(err error) bool {
	if mongo.IsDuplicateKeyError(err) {
		return true
	}
	var cbwe mongo.ClientBulkWriteException
	if !errors.As(err, &cbwe) {
		return false
	}
	for _, code := range cbwe.ErrorCodes() {
		switch code {
		case 11000, 11001, 12582:
			return true
		}
	}
	return false
}

// hasWriteConcernError reports whether err carries a write concern error in
// any of the driver's write exception types.
func hasWriteConcernError(err error) bool {
	var we mongo.WriteException
	if errors.As(err, &we) && we.WriteConcernError != nil {
		return true
	}
	var bwe mongo.BulkWriteException
	if errors.As(err, &bwe) && bwe.WriteConcernError != nil {
		return true
	}
	var cbwe mongo.ClientBulkWriteException
	return errors.As(err, &cbwe) && len(cbwe.WriteConcernErrors) > 0
}

// isDecode reports whether err comes from turning BSON into a Go value.
func isDecode(err error) bool {
	var de *bson.DecodeError
	if errors.As(err, &de) {
		return true
	}
	var vde bson.ValueDecoderError
	if errors.As(err, &vde) {
		return true
	}
	return errors.Is(err, bson.ErrDecodeToNil)
}

// serverKind returns "server_<code>_<CodeName>" (or "server_<code>" when the
// server sent no code name) for the first server error with a non-zero code
// found in err.
func serverKind(err error) (string, bool) {
	var ce mongo.CommandError
	if errors.As(err, &ce) && ce.Code != 0 {
		return serverKindString(int(ce.Code), ce.Name), true
	}
	var we mongo.WriteException
	if errors.As(err, &we) {
		for _, e := range we.WriteErrors {
			if e.Code != 0 {
				return serverKindString(e.Code, codeName(e.Raw)), true
			}
		}
	}
	var bwe mongo.BulkWriteException
	if errors.As(err, &bwe) {
		for _, e := range bwe.WriteErrors {
			if e.Code != 0 {
				return serverKindString(e.Code, codeName(e.Raw)), true
			}
		}
	}
	var cbwe mongo.ClientBulkWriteException
	if errors.As(err, &cbwe) {
		if e := cbwe.WriteError; e != nil && e.Code != 0 {
			return serverKindString(e.Code, codeName(e.Raw)), true
		}
		// Map iteration order is random; use the lowest index so the kind
		// is the same on every run.
		for _, i := range slices.Sorted(maps.Keys(cbwe.WriteErrors)) {
			if e := cbwe.WriteErrors[i]; e.Code != 0 {
				return serverKindString(e.Code, codeName(e.Raw)), true
			}
		}
	}
	var se mongo.ServerError
	if errors.As(err, &se) {
		for _, code := range se.ErrorCodes() {
			if code != 0 {
				return serverKindString(code, ""), true
			}
		}
	}
	return "", false
}

// codeName returns the codeName field of a raw server error document, or ""
// if it has none or the document is unreadable.
func codeName(raw bson.Raw) string {
	if len(raw) == 0 {
		return ""
	}
	v, err := raw.LookupErr("codeName")
	if err != nil {
		return ""
	}
	s, _ := v.StringValueOK()
	return s
}

// serverKindString formats a server error kind. The code name is kept as the
// server sent it, except that characters other than ASCII letters, digits
// and '_' become '_' so the kind stays a plain identifier.
func serverKindString(code int, name string) string {
	if name == "" {
		return fmt.Sprintf("%s%d", ServerPrefix, code)
	}
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			return r
		}
		return '_'
	}, name)
	return fmt.Sprintf("%s%d_%s", ServerPrefix, code, clean)
}

package targets

import (
	"fmt"
	"slices"
)

// What only tests ask of an Embedded server or of the kinds' registries:
// production code reads these through Description and Annotate, or does not
// need them at all.

// Dir returns the temporary data directory holding the SQLite files (empty of
// data in memory mode and with PostgreSQL) and the owner mark that lets a
// later run remove it if this process is killed. Close removes it.
func (e *Embedded) Dir() string {
	return e.dir
}

// PostgreSQL reports whether the server keeps its data in PostgreSQL
// rather than SQLite.
func (e *Embedded) PostgreSQL() bool {
	return e.postgreSQL != ""
}

// Memory reports whether the server keeps its data in SQLite in-memory
// databases rather than files.
func (e *Embedded) Memory() bool {
	return e.memory
}

// FerretDBVersion returns the version of the linked FerretDB module, such as
// "v1.24.0", or "" if the binary carries no build information. The embedded
// server itself answers "unknown" in buildInfo's ferretdbVersion, so this is
// the reliable source for reports.
func (e *Embedded) FerretDBVersion() string {
	return e.version
}

// Done returns a channel that is closed once the server has fully stopped,
// for callers that used RemoveDir and still want to wait a little.
func (e *Embedded) Done() <-chan struct{} {
	return e.done
}

// PostgreSQLSettings returns the PostgreSQL parameters a ferretdb-postgres
// target may set, sorted.
func PostgreSQLSettings() []string {
	return slices.Sorted(slices.Values(postgreSQLSettings))
}

// NewOwnerKey makes a key from secret, which must be 32 bytes; the tests
// use fixed keys, a run loads one from a file (LoadOwnerKey).
func NewOwnerKey(secret []byte) (*OwnerKey, error) {
	if len(secret) != ownerKeySize {
		return nil, fmt.Errorf("owner key: %d bytes, want %d", len(secret), ownerKeySize)
	}

	return &OwnerKey{secret: append([]byte(nil), secret...)}, nil
}

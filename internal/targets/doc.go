// Package target knows where mongobench's load goes: it starts an embedded
// FerretDB server for self-contained runs, connects to any MongoDB-compatible
// server with short, password-free errors, describes what the server is so
// that results are never mistaken for another product's, and guards databases
// so that mongobench only ever drops or cleans databases it created itself.
//
// The package does no printing; everything it wants to tell a user is
// returned as values (errors, descriptions, notes) for the caller to render.
package targets

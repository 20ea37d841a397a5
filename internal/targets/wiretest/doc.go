// Package wiretest is a minimal MongoDB wire-protocol server whose reply
// latency is programmable. It serves two purposes: a fixture for the load
// engine's scheduler tests, which need a server that stalls on command to
// show coordinated omission, and a "null server" against which the
// harness's own overhead can be calibrated.
//
// It is not a database. It stores nothing and answers the commands that
// drivers and mongobench send (hello, ping, insert, update, delete, find,
// aggregate, count, buildInfo, index and collection management, ...) with
// plausible canned replies; anything else gets MongoDB's CommandNotFound
// error. It speaks OP_MSG, and OP_QUERY for the legacy handshake that the
// Go driver opens every connection with, replying with OP_REPLY there. It
// advertises no compression, so OP_COMPRESSED never arrives.
//
// A malformed message closes the connection that sent it, never the server.
package wiretest

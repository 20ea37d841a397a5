//go:build linux

package pglaunch

// Tests (pglaunch_test among them) read where a server listens and keeps
// its files; production code connects through URL.

// Port returns the TCP port the server listens on, on 127.0.0.1.
func (s *Server) Port() int {
	return s.port
}

// Dir returns the temporary directory holding the data directory, the
// server's log and its Unix socket. Stop removes it.
func (s *Server) Dir() string {
	return s.dir
}

// Package freeport finds TCP ports for the servers mongobench launches
// (PostgreSQL, mongod) on the loopback interface.
package freeport

import (
	"fmt"
	"net"
)

// Loopback returns a TCP port of 127.0.0.1 that was free a moment ago.
// Another process may take it before the caller binds it, so launchers
// detect a failed start and retry.
func Loopback() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}

	port := l.Addr().(*net.TCPAddr).Port

	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}

	return port, nil
}

package freeport

import (
	"net"
	"strconv"
	"testing"
)

func TestLoopback(t *testing.T) {
	t.Parallel()

	port, err := Loopback()
	if err != nil {
		t.Fatal(err)
	}

	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("port %d is not usable: %v", port, err)
	}

	_ = l.Close()
}

package testutil

import (
	"net"
	"testing"
)

// FreeAddr returns a loopback address (host:port) that nothing listens on
// as it returns: a port for a server the test starts, or one where a
// connection is refused.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

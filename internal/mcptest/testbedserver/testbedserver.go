// Package testbedserver serves the built-in testbed to tests over
// Streamable HTTP. It stands apart from testutil, which the testbed's own
// tests import.
package testbedserver

import (
	"net/http/httptest"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// HTTP serves a testbed profile on a loopback port until the test ends; its
// endpoint is the server's URL plus testbed.PathMCP.
func HTTP(t testing.TB, o testbed.Options) *httptest.Server {
	t.Helper()
	h, err := testbed.NewHandler(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

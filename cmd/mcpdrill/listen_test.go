package main

import (
	"strings"
	"testing"
)

// TestListenStaysLocal: the commands that listen refuse an address beyond
// loopback unless told --allow-remote, before listening on anything.
func TestListenStaysLocal(t *testing.T) {
	for _, args := range [][]string{
		{"wrap", "--listen", "0.0.0.0:0", "--upstream", "http://127.0.0.1:1/mcp"},
		{"wrap", "--listen", "[::]:0", "--upstream", "http://127.0.0.1:1/mcp"},
		{"wrap", "--listen", "192.0.2.1:0", "--upstream", "http://127.0.0.1:1/mcp"},
		{"testbed", "--http", "0.0.0.0:0"},
		{"testbed", "--http", ":0"},
	} {
		code, _, errOut := runCLI(t, args...)
		if code != exitUsage || !strings.Contains(errOut, "not loopback") || !strings.Contains(errOut, "--allow-remote") {
			t.Errorf("%q: exit %d, stderr %q; want a usage error naming --allow-remote", args, code, errOut)
		}
	}
}

package proxy

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/sdkserver"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

// TestSDKServerThroughProxy: a server built on the official Go SDK (a peer
// mcpdrill did not write) gives the same session through the proxy as
// directly, over HTTP (SSE and JSON replies) and stdio.
func TestSDKServerThroughProxy(t *testing.T) {
	for name, opts := range map[string]sdkserver.Options{"sse": {}, "json": {JSONResponse: true}} {
		t.Run("http/"+name, func(t *testing.T) {
			up := httptest.NewServer(sdkserver.Handler(opts))
			defer up.Close()
			px := startHTTPProxy(t, up.URL, Config{Plan: plan(t, "rules:\n  - fault: drop\n    method: nope\n")})
			direct, proxied := mcpSession(t, up.URL), mcpSession(t, px.URL)
			if direct != proxied {
				t.Fatalf("differs:\n%s\n---\n%s", direct, proxied)
			}
		})
	}
	t.Run("stdio", func(t *testing.T) {
		argv, _ := self("sdk")
		direct := clientSession(t, argv, []string{roleEnv + "=sdk"})
		proxied := clientSession(t, argv, []string{roleEnv + "=proxy", "MCPDRILL_CHILD_ROLE=sdk"})
		if direct != proxied {
			t.Fatalf("differs:\n%s\n---\n%s", direct, proxied)
		}
	})
}

// TestNPMEverythingThroughProxy runs the pinned npm server-everything
// (testdata/npm, located by internal/mcptest/testutil) directly and through the
// proxy; it skips where the npm servers are not installed, and fails in CI.
func TestNPMEverythingThroughProxy(t *testing.T) {
	cmd := strings.Join(testutil.NPMServer(t, "MCPDRILL_NPM_EVERYTHING"), " ")
	argv, _ := self("proxy")
	direct := clientSession(t, strings.Fields(cmd), nil)
	proxied := clientSession(t, argv, []string{roleEnv + "=proxy", "MCPDRILL_CHILD_CMD=" + cmd})
	if direct != proxied {
		t.Fatalf("differs:\n%s\n---\n%s", direct, proxied)
	}
}

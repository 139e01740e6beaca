package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

// These tests talk to servers built with the official Go SDK (v1.8.0), a peer
// this package did not write.

func sdkHTTP(t *testing.T, stateless bool) string {
	t.Helper()
	s := newSDKServer()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{Stateless: stateless})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func checkEcho(t *testing.T, c *Client) {
	t.Helper()
	l, err := c.ListTools(context.Background())
	if err != nil || len(l.Tools) != 1 || l.Tools[0].Name != "echo" || len(l.Tools[0].InputSchema) == 0 || len(l.Tools[0].OutputSchema) == 0 {
		t.Fatalf("list = %+v, %v", l, err)
	}
	msg, err := c.Call(context.Background(), "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hé"}})
	if err != nil || msg.Error != nil {
		t.Fatalf("call = %+v, %v", msg, err)
	}
	var r struct {
		StructuredContent struct{ Echo string } `json:"structuredContent"`
	}
	if json.Unmarshal(msg.Result, &r); r.StructuredContent.Echo != "hé" {
		t.Fatalf("result = %s", msg.Result)
	}
	msg, err = c.Call(context.Background(), "tools/call", map[string]any{"name": "missing", "arguments": map[string]any{}})
	if err != nil || msg.Error == nil || msg.Error.Code != -32602 {
		t.Fatalf("unknown tool = %+v, %v", msg, err)
	}
}

func TestSDKHTTPModern(t *testing.T) {
	c := connect(t, Config{URL: sdkHTTP(t, true)})
	defer c.Close()
	s := c.Session()
	if s.Era != EraModern || s.Revision != Rev20260728 || s.Server.Name != "sdk-fixture" || s.Instructions != "sdk" {
		t.Fatalf("session = %+v", s)
	}
	for _, d := range s.Detection {
		if strings.Contains(d, "initialize") {
			t.Fatalf("modern detection used initialize: %q", s.Detection)
		}
	}
	checkEcho(t, c)
	l, _ := c.ListTools(context.Background())
	if !l.HasTTL || !l.HasCacheScope {
		t.Fatalf("modern tools/list without caching hints: %+v", l)
	}
}

func TestSDKHTTPForcedLegacy(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		c := connect(t, Config{URL: sdkHTTP(t, stateless), Protocol: Rev20250618})
		s := c.Session()
		if s.Era != EraLegacy || s.Revision != Rev20250618 || s.Server.Name != "sdk-fixture" || s.SessionID == stateless {
			t.Fatalf("stateless=%v session = %+v", stateless, s)
		}
		checkEcho(t, c)
		c.Close()
	}
}

func TestSDKHTTPStatefulAuto(t *testing.T) {
	// A stateful SDK handler answers discover with legacy versions only.
	c := connect(t, Config{URL: sdkHTTP(t, false)})
	defer c.Close()
	s := c.Session()
	if s.Era != EraLegacy || s.Revision != Rev20251125 || !s.SessionID {
		t.Fatalf("session = %+v", s)
	}
	checkEcho(t, c)
}

func sdkStdioCfg(t *testing.T) Config {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Config{Command: []string{exe, "-test.run=^$"}, Env: []string{"MCPDRILL_FAKE=sdk", "GORACE=atexit_sleep_ms=0"}, RequestTimeout: testutil.Hang, DiscoverTimeout: testutil.Hang}
}

func TestSDKStdioModern(t *testing.T) {
	c := connect(t, sdkStdioCfg(t))
	defer c.Close()
	s := c.Session()
	if s.Era != EraModern || s.Revision != Rev20260728 || s.Server.Name != "sdk-fixture" || s.Detection[0] != "server/discover answered (2026-07-28)" {
		t.Fatalf("session = %+v", s)
	}
	checkEcho(t, c)
}

func TestSDKStdioForcedLegacy(t *testing.T) {
	cfg := sdkStdioCfg(t)
	cfg.Protocol = Rev20250618
	c := connect(t, cfg)
	defer c.Close()
	s := c.Session()
	if s.Era != EraLegacy || s.Revision != Rev20250618 || s.Server.Name != "sdk-fixture" {
		t.Fatalf("session = %+v", s)
	}
	checkEcho(t, c)
	if code, exited := c.ExitStatus(); exited {
		t.Fatalf("server exited early (%d): %q", code, c.StderrTail())
	}
}

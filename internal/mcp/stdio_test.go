package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

func connectFake(t *testing.T, mode string, mod func(*Config)) *Client {
	t.Helper()
	cfg := fakeCfg(t, mode)
	if mod != nil {
		mod(&cfg)
	}
	c := connect(t, cfg)
	t.Cleanup(func() { c.Close() })
	return c
}

// connect connects with cfg or fails the test; the caller closes the client
// (before the server it talks to, where a defer closes that).
func connect(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := Connect(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	return c
}

func hasObs(c *Client, kind string) (Observation, bool) {
	for _, o := range c.Observations() {
		if o.Kind == kind {
			return o, true
		}
	}
	return Observation{}, false
}

func TestStdioEraDetection(t *testing.T) {
	tests := []struct {
		mode, rev    string
		era          Era
		server       string
		detectSubstr string
	}{
		{"legacy", Rev20251125, EraLegacy, "fake-legacy", "no reply in"},
		{"legacy-32601", Rev20251125, EraLegacy, "fake-legacy-32601", "error -32601; initialize"},
		{"legacy-late", Rev20251125, EraLegacy, "fake-legacy-late", "no reply in"},
		{"modern", Rev20260728, EraModern, "fake-modern", "server/discover answered (2026-07-28)"},
		{"slow-modern", Rev20260728, EraModern, "fake-modern", "server/discover answered late"},
		// The discover answer comes after the probe's timeout but before
		// initialize's reply: it is used, whatever the machine's load made
		// of the timeout.
		{"discover-late", Rev20260728, EraModern, "fake-dual", "server/discover answered late, before initialize's reply"},
		{"modern-drop", Rev20260728, EraModern, "fake-modern", "initialize refused; server supports 2026-07-28; server/discover again"},
		{"refuse-legacy", Rev20250618, EraLegacy, "fake-refuse-legacy", "falling back to initialize with 2025-06-18"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			c := connectFake(t, tt.mode, nil)
			s := c.Session()
			if s.Revision != tt.rev || s.Era != tt.era || s.Transport != TransportStdio || s.Server.Name != tt.server {
				t.Fatalf("session = %+v", s)
			}
			if !strings.Contains(strings.Join(s.Detection, " | "), tt.detectSubstr) {
				t.Fatalf("detection %q lacks %q", s.Detection, tt.detectSubstr)
			}
			// the session works after detection
			l, err := c.ListTools(context.Background())
			if err != nil || len(l.Tools) != 1 {
				t.Fatalf("ListTools = %+v, %v", l, err)
			}
			if tt.mode == "legacy-late" {
				// the stray discover reply arrives after initialize: noted, harmless
				if _, ok := hasObs(c, "late-response"); !ok {
					t.Fatalf("late discover reply not observed: %+v", c.Observations())
				}
			}
		})
	}
}

func TestStdioModernMetaAndCapabilities(t *testing.T) {
	c := connectFake(t, "modern", nil)
	s := c.Session()
	if s.Instructions != "be nice" || len(s.Discover) == 0 || len(s.SupportedVersions) != 2 || !strings.Contains(string(s.Capabilities), "tools") {
		t.Fatalf("session = %+v", s)
	}
	msg, err := c.Call(context.Background(), "tools/call", map[string]any{"name": "x", "_meta": map[string]any{"progressToken": 7, MetaProtocolVersion: Rev20260728}})
	if err != nil || msg.Error != nil {
		t.Fatalf("call: %v %+v", err, msg)
	}
	var r struct {
		EchoMeta map[string]any `json:"echoMeta"`
	}
	_ = json.Unmarshal(msg.Result, &r)
	if r.EchoMeta["progressToken"] != float64(7) || r.EchoMeta[MetaProtocolVersion] != Rev20260728 || r.EchoMeta[MetaClientInfo] == nil {
		t.Fatalf("meta not merged: %v", r.EchoMeta)
	}
	l, err := c.ListTools(context.Background())
	if err != nil || !l.HasTTL || !l.HasCacheScope || *l.TTLMs != 500 || l.CacheScope != "private" {
		t.Fatalf("list = %+v %v", l, err)
	}
	if ResultType(msg) != "complete" {
		t.Fatal("missing resultType must read as complete")
	}
}

func TestStdioUnsupportedRetry(t *testing.T) {
	old := Revisions
	Revisions = append(append([]string(nil), old...), "2027-01-01")
	defer func() { Revisions = old }()
	c := connectFake(t, "refuse-future", nil)
	s := c.Session()
	if s.Revision != "2027-01-01" || s.Era != EraModern {
		t.Fatalf("session = %+v", s)
	}
	if !strings.Contains(strings.Join(s.Detection, "|"), "retrying with 2027-01-01") {
		t.Fatalf("detection = %q", s.Detection)
	}
}

func TestStdioRefused(t *testing.T) {
	_, err := Connect(context.Background(), fakeCfg(t, "refuse-all"))
	if !errors.Is(err, ErrProtocolRefused) {
		t.Fatalf("err = %v", err)
	}
	// forced legacy revision the server will not echo
	cfg := fakeCfg(t, "legacy")
	cfg.Protocol = Rev20260728 // forced modern against a legacy server: discover unanswered
	// The wait is expected to run out (the legacy fake says nothing until
	// asked to initialize): a forced probe waits the request timeout or
	// the start-up allowance, both short here.
	cfg.RequestTimeout, cfg.StartupTimeout = 300*time.Millisecond, 300*time.Millisecond
	c := connect(t, cfg)
	if s := c.Session(); s.Era != EraModern || !strings.Contains(strings.Join(s.Detection, "|"), "continuing as forced") {
		t.Fatalf("session = %+v", s)
	}
	c.Close()
	cfg = fakeCfg(t, "legacy")
	cfg.Protocol = "1999-01-01"
	if _, err := Connect(context.Background(), cfg); !errors.Is(err, ErrProtocolRefused) {
		t.Fatalf("unknown forced revision: %v", err)
	}
}

func TestStdioForcedLegacy(t *testing.T) {
	c := connectFake(t, "legacy", func(c *Config) { c.Protocol = Rev20250326 })
	s := c.Session()
	if s.Revision != Rev20250326 || s.Era != EraLegacy || s.Detection[0] != "protocol forced to 2025-03-26; initialize" {
		t.Fatalf("session = %+v", s)
	}
}

func TestStdioPagination(t *testing.T) {
	tests := []struct {
		mode                  string
		pages                 int
		capped, loop, ttl, cs bool
	}{
		{"paged", 3, false, false, true, false},
		{"loop", 3, false, true, false, false},
		{"endless", 4, true, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			c := connectFake(t, tt.mode, func(c *Config) { c.MaxListPages = 4 })
			l, err := c.ListTools(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if l.Pages != tt.pages || l.Capped != tt.capped || l.CursorLoop != tt.loop || l.HasTTL != tt.ttl || l.HasCacheScope != tt.cs || len(l.Raw) != tt.pages || len(l.Tools) != tt.pages {
				t.Fatalf("list = %+v", l)
			}
			if tt.mode == "paged" && (l.Tools[2].Name != "t2" || l.Tools[0].Title != "T" || string(l.Tools[0].Annotations) != `{"readOnlyHint":true}` || l.Complete() != true) {
				t.Fatalf("tools = %+v", l.Tools)
			}
		})
	}
}

func TestStdioNoise(t *testing.T) {
	c := connectFake(t, "noise", nil)
	if _, err := c.ListTools(context.Background()); err != nil {
		t.Fatal(err)
	}
	o, ok := hasObs(c, "stdout-noise")
	if !ok || o.Count != 2 || !strings.Contains(o.Detail, "starting server") {
		t.Fatalf("noise observation = %+v (all %+v)", o, c.Observations())
	}
}

// TestStdioOversizeRequest: a request of the server's too large to read
// fails nothing, though its id is that of the client's pending request:
// it answers nothing. The reply that follows is the request's.
func TestStdioOversizeRequest(t *testing.T) {
	c := connectFake(t, "oversize-ask", func(c *Config) { c.MaxFrame = 4096 })
	if tools, err := c.ListTools(context.Background()); err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools/list: %v %v", tools, err)
	}
	if _, ok := hasObs(c, "oversize-frame"); !ok {
		t.Fatal("no oversize observation")
	}
}

func TestStdioOversize(t *testing.T) {
	for _, mode := range []string{"oversize", "oversize-tail"} {
		t.Run(mode, func(t *testing.T) {
			// The dropped reply fails its request at once: had the client
			// waited instead, the request timeout would have ended it.
			c := connectFake(t, mode, func(c *Config) { c.MaxFrame = 4096 })
			_, err := c.ListTools(context.Background())
			if !errors.Is(err, ErrFrameTooLarge) || errors.Is(err, ErrTimeout) {
				t.Fatalf("err = %v", err)
			}
			if _, ok := hasObs(c, "oversize-frame"); !ok {
				t.Fatal("no oversize observation")
			}
			// the session survives
			if msg, err := c.Call(context.Background(), "ping", nil); err != nil || msg.Error != nil {
				t.Fatalf("ping after oversize: %v", err)
			}
			if c.pending() != 0 {
				t.Fatalf("pending = %d", c.pending())
			}
		})
	}
}

// shortenRequests sets c's request timeout once its handshake is done, so
// that only the waits a test expects to run out are short: the handshake's
// answers are waited for as long as fakeCfg says.
func shortenRequests(c *Client, d time.Duration) { c.cfg.RequestTimeout = d }

// setCloseGrace sets how long Close waits for a server to exit after
// closing its stdin (eof) and after SIGTERM (term), for one test. A grace
// the server is expected to exit within is testutil.Hang; one it is expected to
// outlast is short.
func setCloseGrace(t *testing.T, eof, term time.Duration) {
	oldEOF, oldTerm := closeGrace, termGrace
	closeGrace, termGrace = eof, term
	t.Cleanup(func() { closeGrace, termGrace = oldEOF, oldTerm })
}

func TestStdioTimeoutCancels(t *testing.T) {
	c := connectFake(t, "hang", nil)
	shortenRequests(c, 300*time.Millisecond)
	_, err := c.Call(context.Background(), "tools/call", map[string]any{"name": "slow"})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
	if c.pending() != 0 {
		t.Fatalf("pending map leaked: %d", c.pending())
	}
	// ctx cancellation is reported as such, not as a timeout
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, err := c.Call(ctx, "tools/call", map[string]any{"name": "slow"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel err = %v", err)
	}
	endServer(t, c)
	if tail := strings.Join(c.StderrTail(), "\n"); !strings.Contains(tail, `"requestId":3`) || !strings.Contains(tail, `"reason":"timeout"`) {
		t.Fatalf("stderr = %q", c.StderrTail())
	}
}

// await waits for ch to close; only a hang reaches its bound (testutil.Hang).
func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(testutil.Hang):
		t.Fatalf("%s: not within %v", what, testutil.Hang)
	}
}

// endServer closes the stdio server's stdin and waits for the end of its
// stderr: a server that leaves at stdin EOF has then read every frame sent
// before, and StderrTail holds all it wrote.
func endServer(t *testing.T, c *Client) {
	t.Helper()
	c.stdio.stdin.Close()
	await(t, c.stdio.stderrDone, "the end of the server's stderr")
}

func TestStdioSilent(t *testing.T) {
	cfg := fakeCfg(t, "silent")
	cfg.RequestTimeout, cfg.StartupTimeout = 300*time.Millisecond, 300*time.Millisecond
	_, err := Connect(context.Background(), cfg)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
}

func TestStdioCrash(t *testing.T) {
	c := connectFake(t, "crash", nil)
	_, err := c.Call(context.Background(), "tools/call", map[string]any{"name": "boom"})
	if !errors.Is(err, ErrServerExited) {
		t.Fatalf("err = %v", err)
	}
	await(t, c.stdio.waitDone, "the server's exit")
	if code, _ := c.ExitStatus(); code != 3 {
		t.Fatalf("exit code = %d", code)
	}
	if _, err := c.Call(context.Background(), "ping", nil); !errors.Is(err, ErrServerExited) {
		t.Fatalf("after crash: %v", err)
	}
	if _, ok := hasObs(c, "stdout-noise"); !ok {
		t.Fatal("the half line should be noted as noise")
	}
}

func TestStdioServerRequests(t *testing.T) {
	c := connectFake(t, "ping", nil)
	l, err := c.ListTools(context.Background())
	if err != nil || len(l.Tools) != 1 || l.Tools[0].Name != "pinged" {
		t.Fatalf("list = %+v, %v", l, err)
	}
	// The roots reply went before the ping's, which the list waited for.
	endServer(t, c)
	if !strings.Contains(strings.Join(c.StderrTail(), "\n"), `roots answered {"roots":[]}`) {
		t.Fatalf("stderr = %q", c.StderrTail())
	}
	var reqs []string
	for _, o := range c.Observations() {
		if o.Kind == "server-request" {
			reqs = append(reqs, o.Detail)
		}
	}
	if strings.Join(reqs, ",") != `"ping","roots/list","sampling/createMessage"` {
		t.Fatalf("server requests = %v", reqs)
	}
}

func TestStdioCloseEscalation(t *testing.T) {
	setCloseGrace(t, 200*time.Millisecond, 200*time.Millisecond) // stubborn outlasts both
	c := connectFake(t, "stubborn", nil)
	c.Close() // returns once the server is gone: the notes below say how
	code, exited := c.ExitStatus()
	if !exited || code != -1 {
		t.Fatalf("exit = %d %v", code, exited)
	}
	var notes []string
	for _, o := range c.Observations() {
		if o.Kind == "shutdown" {
			notes = append(notes, o.Detail)
		}
	}
	if len(notes) != 2 {
		t.Fatalf("shutdown notes = %v", notes)
	}
	if sd, ok := c.Shutdown(); !ok || sd.How != ShutdownKilled || sd.Elapsed < closeGrace+termGrace {
		t.Fatalf("shutdown = %+v %v", sd, ok)
	}
	if _, err := c.Call(context.Background(), "ping", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
}

func TestStdioCloseGraceful(t *testing.T) {
	setCloseGrace(t, testutil.Hang, testutil.Hang)
	c := connectFake(t, "legacy", nil)
	c.Close()
	if o, ok := hasObs(c, "shutdown"); ok {
		t.Fatalf("graceful close escalated: %+v", o)
	}
	if code, exited := c.ExitStatus(); !exited || code != 0 {
		t.Fatalf("exit = %d %v", code, exited)
	}
	if sd, ok := c.Shutdown(); !ok || sd.How != ShutdownStdinClosed {
		t.Fatalf("shutdown = %+v %v", sd, ok)
	}
}

// How a server ends when its session closes, one way per row.
func TestStdioShutdownRecorded(t *testing.T) {
	tests := []struct {
		mode, how string
		eof, term time.Duration // short where the server outlasts it
		before    func(t *testing.T, c *Client)
	}{
		{"legacy", ShutdownStdinClosed, testutil.Hang, testutil.Hang, nil},
		{"linger", ShutdownTerminated, 200 * time.Millisecond, testutil.Hang, nil},
		{"stubborn", ShutdownKilled, 200 * time.Millisecond, 200 * time.Millisecond, nil},
		{"crash", ShutdownExitedBefore, testutil.Hang, testutil.Hang, func(t *testing.T, c *Client) {
			_, _ = c.Call(context.Background(), "tools/call", map[string]any{"name": "boom"})
			await(t, c.stdio.waitDone, "the server's exit")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			setCloseGrace(t, tc.eof, tc.term)
			c := connectFake(t, tc.mode, nil)
			if _, ok := c.Shutdown(); ok {
				t.Fatal("a shutdown reported before Close")
			}
			if tc.before != nil {
				tc.before(t, c)
			}
			c.Close()
			sd, ok := c.Shutdown()
			if !ok || sd.How != tc.how {
				t.Fatalf("shutdown = %+v %v, want %s", sd, ok, tc.how)
			}
		})
	}
}

// A server that fails the handshake says how it ended and what it wrote.
func TestStdioStartError(t *testing.T) {
	tests := []struct {
		mode     string
		cause    error
		exited   bool
		code     int
		signal   string
		lastLine string
	}{
		{"exit-start", ErrServerExited, true, 1, "", "missing API_KEY"},
		{"kill-start", ErrServerExited, true, -1, "SIGKILL", "about to die"},
		{"silent", ErrTimeout, false, 0, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			cfg := fakeCfg(t, tc.mode)
			if tc.cause == ErrTimeout {
				cfg.RequestTimeout, cfg.StartupTimeout = 300*time.Millisecond, 300*time.Millisecond
			}
			_, err := Connect(context.Background(), cfg)
			var se *StartError
			if !errors.As(err, &se) || !errors.Is(err, tc.cause) {
				t.Fatalf("err = %v, want a StartError wrapping %v", err, tc.cause)
			}
			if se.Exited != tc.exited || (tc.exited && (se.ExitCode != tc.code || se.Signal != tc.signal)) {
				t.Fatalf("start error %+v", se)
			}
			last := ""
			if len(se.Stderr) > 0 {
				last = se.Stderr[len(se.Stderr)-1]
			}
			if last != tc.lastLine {
				t.Fatalf("stderr %q, want it to end with %q", se.Stderr, tc.lastLine)
			}
			if strings.Contains(err.Error(), "API_KEY") {
				t.Fatalf("the error carries the server's stderr: %v", err)
			}
		})
	}
}

func TestStdioSendRaw(t *testing.T) {
	c := connectFake(t, "legacy", nil)
	msg, err := c.SendRaw(context.Background(), []byte(`{"jsonrpc":"2.0","id":"x",`))
	if err != nil || msg.Error == nil || msg.Error.Code != -32700 {
		t.Fatalf("malformed probe: %+v %v", msg, err)
	}
	msg, err = c.SendRaw(context.Background(), []byte(`{"jsonrpc":"2.0","id":"p1","method":"nope"}`))
	if err != nil || msg.Error == nil || msg.Error.Code != -32601 || string(msg.ID) != `"p1"` {
		t.Fatalf("unknown method probe: %+v %v", msg, err)
	}
	if c.pending() != 0 {
		t.Fatalf("pending = %d", c.pending())
	}
}

func TestStdioUnreachable(t *testing.T) {
	_, err := Connect(context.Background(), Config{Command: []string{"/nonexistent/mcp-server", "--token=secret"}})
	if !errors.Is(err, ErrUnreachable) || strings.Contains(err.Error(), "secret") {
		t.Fatalf("err = %v", err)
	}
}

func TestStdioFloodBounded(t *testing.T) {
	c := connectFake(t, "flood", nil)
	l, err := c.ListTools(context.Background())
	if err != nil || len(l.Tools) != 1 {
		t.Fatalf("list = %+v %v", l, err)
	}
	obs := c.Observations()
	if len(obs) > 3*(maxObsPerKind+1) {
		t.Fatalf("%d observations kept", len(obs))
	}
	total := 0
	for _, o := range obs {
		if o.Kind == "notification" {
			total += o.Count
		}
	}
	if n, _ := hasObs(c, "stdout-noise"); total != 20000 || n.Count != 20000 {
		t.Fatalf("notifications %d, noise %+v", total, n)
	}
}

func TestStdioConcurrentCalls(t *testing.T) {
	c := connectFake(t, "legacy", nil)
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		go func() {
			msg, err := c.Call(context.Background(), "tools/call", map[string]any{"name": "n"})
			if err == nil && msg.Error != nil {
				err = msg.Error
			}
			errs <- err
		}()
	}
	for i := 0; i < 20; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if c.pending() != 0 {
		t.Fatalf("pending = %d", c.pending())
	}
}

func TestStdioWriteBlocked(t *testing.T) {
	setCloseGrace(t, 100*time.Millisecond, testutil.Hang) // the server never reads: it outlasts the first grace
	// The server never reads: the write of the request blocks, and the
	// request ends at its timeout all the same.
	// It never speaks either: its start-up allowance is the request's
	// timeout, or the forced probe would wait the default minute for it.
	c := connectFake(t, "deaf", func(c *Config) {
		c.Protocol, c.RequestTimeout, c.StartupTimeout = Rev20260728, 300*time.Millisecond, 300*time.Millisecond
	})
	// The write blocks on a server that never reads; the request timeout
	// ends the call (a hang would end the test binary instead: no
	// wall-clock bound is asserted, the machine may be busy).
	_, err := c.Call(context.Background(), "tools/call", map[string]any{"name": strings.Repeat("x", 1<<20)})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
	if c.pending() != 0 {
		t.Fatalf("pending = %d", c.pending())
	}
	if _, ok := hasObs(c, "stdin-blocked"); !ok {
		t.Fatal("blocked stdin not observed")
	}
	c.Close()
}

func TestStderrLoopKeepsLineStarts(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	x, y := strings.Repeat("x", 3000), strings.Repeat("y", maxStderrLine+1)
	go func() {
		defer w.Close()
		io.WriteString(w, "a\r\n"+x+"\n"+y+"\n\nlast")
	}()
	s := &stdioConn{errR: r, obs: newObserver(), ring: make([]string, 8), stderrDone: make(chan struct{})}
	s.stderrLoop()
	got := s.stderrTail()
	want := []string{"a", x[:maxStderrLine], y[:maxStderrLine], "", "last"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("stderr lines = %q, want %q", got, want)
	}
}

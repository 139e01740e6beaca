package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/faults"
	"github.com/mcpdrill/mcpdrill/guard"
	"github.com/mcpdrill/mcpdrill/guard/intercept"
	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testbedserver"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// guardPeer is a client of a guarded proxy, over stdio or HTTP.
type guardPeer interface {
	// rpc sends one request and returns the reply frame.
	rpc(t *testing.T, method string, params any) *jsonrpc.Message
}

// listNames lists the tools through the peer; it also returns the result.
func listNames(t *testing.T, p guardPeer) ([]string, map[string]json.RawMessage) {
	t.Helper()
	m := p.rpc(t, "tools/list", nil)
	if m.Error != nil {
		t.Fatalf("tools/list error: %v", m.Error)
	}
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil {
		t.Fatalf("tools/list result %s: %v", m.Result, err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names, res.Meta
}

func callEcho(t *testing.T, p guardPeer) *jsonrpc.Message {
	t.Helper()
	return p.rpc(t, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}})
}

var driftingNames = []string{"echo", "export_csv", "get_user", "search", "weather"}

// ---- stdio peer: raw JSON lines over the proxy's pipes ----

type stdioPeer struct {
	w      io.WriteCloser
	mu     sync.Mutex
	seq    int
	waits  map[string]chan *jsonrpc.Message
	notes  []string
	leaked []string // frames carrying a guard id that reached the client
	done   chan struct{}
}

func newStdioPeer(t *testing.T, g Interceptor, env ...string) *stdioPeer {
	t.Helper()
	argv, cenv := self("testbed", append([]string{"MCPDRILL_PROFILE=drifting"}, env...)...)
	inR, inW := io.Pipe()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		_, err := RunStdio(context.Background(), StdioOptions{
			Config:  Config{Guard: g},
			Command: argv, Env: cenv, Stdin: inR, Stdout: outW, Stderr: testStderr(),
			Grace: 2 * time.Second,
		})
		if err != nil {
			t.Error(err)
		}
		outW.Close()
	}()
	p := &stdioPeer{w: inW, waits: map[string]chan *jsonrpc.Message{}, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		br := bufio.NewReader(outR)
		for {
			line, err := br.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				p.dispatch(bytes.TrimSpace(line))
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		<-exited
		<-p.done
		p.mu.Lock()
		defer p.mu.Unlock()
		if len(p.leaked) > 0 {
			t.Errorf("the guard's own replies reached the client: %q", p.leaked)
		}
	})
	p.rpc(t, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "guard-test", "version": "1"}})
	p.send(t, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return p
}

func (p *stdioPeer) dispatch(line []byte) {
	m, err := jsonrpc.Decode(line)
	p.mu.Lock()
	defer p.mu.Unlock()
	if pk, perr := jsonrpc.PeekFrame(line); perr == nil && strings.Contains(string(pk.ID), intercept.IDPrefix) {
		p.leaked = append(p.leaked, string(pk.ID)) // ids only: never print payloads
	}
	if err != nil {
		return
	}
	if m.Method != "" && len(m.ID) == 0 {
		p.notes = append(p.notes, m.Method)
		return
	}
	if ch, ok := p.waits[jsonrpc.IDKey(m.ID)]; ok {
		ch <- m
	}
}

func (p *stdioPeer) send(t *testing.T, b []byte) {
	t.Helper()
	if _, err := p.w.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
}

func (p *stdioPeer) rpc(t *testing.T, method string, params any) *jsonrpc.Message {
	t.Helper()
	p.mu.Lock()
	p.seq++
	id := p.seq
	ch := make(chan *jsonrpc.Message, 1)
	p.waits[jsonrpc.IDKey(json.RawMessage(fmt.Sprint(id)))] = ch
	p.mu.Unlock()
	req, err := jsonrpc.NewRequest(id, method, params)
	if err != nil {
		t.Fatal(err)
	}
	p.send(t, req)
	select {
	case m := <-ch:
		return m
	case <-time.After(testutil.Hang):
		t.Fatalf("no reply to %s", method)
	}
	return nil
}

func (p *stdioPeer) notifications() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.notes)
}

// ---- HTTP peer: the project's MCP client through the HTTP proxy ----

type httpPeer struct {
	c *mcp.Client
}

func newHTTPPeer(t *testing.T, url string) *httpPeer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Hang)
	defer cancel()
	c, err := mcp.Connect(ctx, mcp.Config{URL: url, RequestTimeout: testutil.Hang})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &httpPeer{c: c}
}

func (p *httpPeer) rpc(t *testing.T, method string, params any) *jsonrpc.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Hang)
	defer cancel()
	m, err := p.c.Call(ctx, method, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	if strings.Contains(string(m.ID), intercept.IDPrefix) {
		t.Errorf("a guard frame reached the client: id %s", m.ID)
	}
	return m
}

func driftingUpstream(t *testing.T, driftAfter int) string {
	t.Helper()
	return testbedserver.HTTP(t, testbed.Options{Profile: "drifting", Seed: 1, DriftAfter: driftAfter}).URL + "/mcp"
}

// ---- the lifecycle over both transports ----

type guardRig struct {
	store *guard.Store
	g     *intercept.Guard
	peer  guardPeer
	stdio *stdioPeer
}

// testHint words suggested commands as the CLI does for the default store.
func testHint(c guard.Command) string {
	s := "mcpdrill guard " + c.Verb + " "
	if c.Fingerprint != "" {
		s += "--fingerprint " + c.Fingerprint + " "
	}
	return s + c.Server
}

func newGuard(t *testing.T, st *guard.Store, posture guard.Posture, recheck time.Duration) *intercept.Guard {
	t.Helper()
	g, err := intercept.New(intercept.Options{Store: st, Server: "drifting", Posture: posture, Recheck: recheck,
		Timeout: testutil.Hang, Logf: t.Logf, Hint: testHint})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return g
}

func rigs(t *testing.T, posture guard.Posture, recheck time.Duration, driftAfter int) map[string]func(t *testing.T) *guardRig {
	return map[string]func(t *testing.T) *guardRig{
		"stdio": func(t *testing.T) *guardRig {
			st, _ := guard.Open(t.TempDir())
			g := newGuard(t, st, posture, recheck)
			p := newStdioPeer(t, g, fmt.Sprintf("MCPDRILL_DRIFT_AFTER=%d", driftAfter))
			return &guardRig{store: st, g: g, peer: p, stdio: p}
		},
		"http": func(t *testing.T) *guardRig {
			st, _ := guard.Open(t.TempDir())
			g := newGuard(t, st, posture, recheck)
			srv := startHTTPProxy(t, driftingUpstream(t, driftAfter), Config{Guard: g})
			return &guardRig{store: st, g: g, peer: newHTTPPeer(t, srv.URL+"/mcp")}
		},
	}
}

// waitStatus polls the store (at most 10 s) until the server's status is
// want. The store is files that another process may write, with no change
// notification, so polling is the synchronisation; the sleep is only the
// back-off between looks, not a guess at how long anything takes.
func waitStatus(t *testing.T, st *guard.Store, want guard.Status) *guard.Record {
	t.Helper()
	deadline := time.Now().Add(testutil.Hang)
	for wait := time.Millisecond; ; wait = min(2*wait, 20*time.Millisecond) {
		r, err := st.Get("drifting")
		if err != nil {
			t.Fatal(err)
		}
		if guard.StatusOf(r) == want {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("status %s, want %s", guard.StatusOf(r), want)
		}
		time.Sleep(wait)
	}
}

func requireRefused(t *testing.T, m *jsonrpc.Message, status string, hints ...string) {
	t.Helper()
	if m.Error == nil {
		t.Fatalf("tools/call was not refused: %s", m.Raw)
	}
	if m.Error.Code != intercept.CodeWithheld {
		t.Errorf("code %d, want %d", m.Error.Code, intercept.CodeWithheld)
	}
	for _, h := range append([]string{status}, hints...) {
		if !strings.Contains(m.Error.Message, h) {
			t.Errorf("refusal %q does not name %q", m.Error.Message, h)
		}
	}
	var data map[string]string
	if json.Unmarshal(m.Error.Data, &data) != nil || data["status"] != status || data["server"] != "drifting" {
		t.Errorf("refusal data %s", m.Error.Data)
	}
}

func requireServed(t *testing.T, p guardPeer) {
	t.Helper()
	names, _ := listNames(t, p)
	if !slices.Equal(names, driftingNames) {
		t.Fatalf("served %v, want %v", names, driftingNames)
	}
	if m := callEcho(t, p); m.Error != nil || !strings.Contains(string(m.Result), "hi") {
		t.Fatalf("tools/call: %s", m.Raw)
	}
}

func requireWithheld(t *testing.T, p guardPeer, status string) {
	t.Helper()
	names, meta := listNames(t, p)
	if len(names) != 0 {
		t.Fatalf("withheld server served %v", names)
	}
	var info map[string]string
	if json.Unmarshal(meta["io.mcpdrill/guard"], &info) != nil || info["status"] != status {
		t.Errorf("tools/list _meta %v, want guard status %s", meta, status)
	}
	requireRefused(t, callEcho(t, p), status, "mcpdrill guard")
}

// requireAudit checks that the audit log of st records want, in order.
func requireAudit(t *testing.T, st *guard.Store, want ...guard.Action) {
	t.Helper()
	if got := auditActions(t, st); !slices.Equal(got, want) {
		t.Fatalf("audit %v, want %v", got, want)
	}
}

// eachRig runs test as a subtest on each rig of rigs, named by its transport.
func eachRig[R any](t *testing.T, rigs map[string]func(*testing.T) R, test func(*testing.T, R)) {
	t.Helper()
	for name, mk := range rigs {
		t.Run(name, func(t *testing.T) { test(t, mk(t)) })
	}
}

func auditActions(t *testing.T, st *guard.Store) []guard.Action {
	t.Helper()
	evs, err := st.Audit("drifting")
	if err != nil {
		t.Fatal(err)
	}
	var out []guard.Action
	for _, e := range evs {
		out = append(out, e.Action)
		if e.Time.IsZero() || e.Actor == "" || e.Server != "drifting" {
			t.Errorf("audit event %+v", e)
		}
	}
	return out
}

// TestGuardDriftLifecycle: first use → verified (served) → the fixture
// rewrites a description mid-run → changed (withheld, calls refused) →
// approve → verified (served again). Over stdio the drift is found through
// notifications/tools/list_changed; over HTTP (no notification stream) by
// the periodic re-check.
func TestGuardDriftLifecycle(t *testing.T) {
	eachRig(t, rigs(t, guard.PostureDiscovery, 0, testbed.DefaultDriftAfter), runDriftLifecycle)
}

func runDriftLifecycle(t *testing.T, r *guardRig) {
	// none → verified (trust on first use): before the client's first
	// list (the 2nd the server serves) the guard pins the set with a
	// listing of its own (the 1st).
	requireServed(t, r.peer)
	rec := waitStatus(t, r.store, guard.StatusVerified)
	base := rec.Baseline.Fingerprint
	// List 3: still the approved set (it triggers the rug pull).
	if r.stdio != nil {
		names, _ := listNames(t, r.peer)
		if len(names) != 5 {
			t.Fatalf("3rd list: %v", names)
		}
	}
	// verified → changed: over stdio through list_changed; over HTTP (no
	// notification stream) through the guard's own re-check, which the
	// --recheck ticker runs (TestGuardPeriodicRecheckHTTP).
	if r.stdio == nil {
		for range testbed.DefaultDriftAfter {
			ctx, cancel := context.WithTimeout(context.Background(), testutil.Hang)
			if err := r.g.Recheck(ctx); err != nil {
				t.Fatal(err)
			}
			cancel()
		}
	}
	rec = waitStatus(t, r.store, guard.StatusChanged)
	if rec.DriftAt == nil || rec.LastSeen.Fingerprint == base || rec.Baseline.Fingerprint != base {
		t.Fatalf("changed record %+v", rec)
	}
	requireWithheld(t, r.peer, "changed")
	requireRefused(t, callEcho(t, r.peer), "changed", "mcpdrill guard diff drifting", "mcpdrill guard approve --fingerprint "+rec.LastSeen.Fingerprint+" drifting")
	if r.stdio != nil {
		if n := r.stdio.notifications(); !slices.Contains(n, "notifications/tools/list_changed") {
			t.Errorf("client notifications %v", n)
		}
	}
	// changed → verified by approve: service restored, with the new set.
	if _, _, err := r.store.Approve("drifting", rec.LastSeen.Fingerprint, "alice", time.Now()); err != nil {
		t.Fatal(err)
	}
	requireServed(t, r.peer)
	rec = waitStatus(t, r.store, guard.StatusVerified)
	if rec.Baseline.Fingerprint == base {
		t.Fatal("approve kept the old baseline")
	}
	requireAudit(t, r.store, guard.ActionFirstUse, guard.ActionDrift, guard.ActionApprove)
}

// TestGuardStrictPending: strict posture, no baseline → pending (withheld),
// approve → verified.
func TestGuardStrictPending(t *testing.T) {
	eachRig(t, rigs(t, guard.PostureStrict, 0, -1), func(t *testing.T, r *guardRig) {
		requireWithheld(t, r.peer, "pending")
		waitStatus(t, r.store, guard.StatusPending)
		if _, _, err := r.store.Approve("drifting", "", "alice", time.Now()); err != nil {
			t.Fatal(err)
		}
		requireServed(t, r.peer)
		requireAudit(t, r.store, guard.ActionHold, guard.ActionApprove)
	})
}

// TestGuardQuarantine: verified → quarantined (withheld at once, calls
// refused naming release) → released → verified.
func TestGuardQuarantine(t *testing.T) {
	eachRig(t, rigs(t, guard.PostureDiscovery, 0, -1), func(t *testing.T, r *guardRig) {
		requireServed(t, r.peer)
		if _, _, err := r.store.Quarantine("drifting", "suspicious", "alice", time.Now()); err != nil {
			t.Fatal(err)
		}
		requireRefused(t, callEcho(t, r.peer), "quarantined", "mcpdrill guard release drifting")
		requireWithheld(t, r.peer, "quarantined")
		if _, _, err := r.store.Approve("drifting", "", "alice", time.Now()); err == nil {
			t.Fatal("approve of a quarantined server succeeded")
		}
		if _, _, err := r.store.Release("drifting", "alice", time.Now()); err != nil {
			t.Fatal(err)
		}
		requireServed(t, r.peer)
		requireAudit(t, r.store, guard.ActionFirstUse, guard.ActionQuarantine, guard.ActionRelease)
	})
}

// TestGuardCorruptStoreFailsClosed: a corrupt record is never reset: the
// list is withheld and calls refused, and the file is left as it was.
func TestGuardCorruptStoreFailsClosed(t *testing.T) {
	eachRig(t, rigs(t, guard.PostureDiscovery, 0, -1), func(t *testing.T, r *guardRig) {
		path := r.store.Dir() + "/drifting.json"
		if err := os.WriteFile(path, []byte("{broken"), 0o600); err != nil {
			t.Fatal(err)
		}
		names, _ := listNames(t, r.peer)
		if len(names) != 0 {
			t.Fatalf("served %v from a corrupt store", names)
		}
		m := callEcho(t, r.peer)
		if m.Error == nil || m.Error.Code != intercept.CodeWithheld || !strings.Contains(m.Error.Message, "corrupt") {
			t.Fatalf("call: %s", m.Raw)
		}
		if b, _ := os.ReadFile(path); string(b) != "{broken" {
			t.Fatalf("corrupt record rewritten: %q", b)
		}
	})
}

// TestGuardTwoProxiesShareStore: two HTTP proxies with their own guards on
// one store and one drifting upstream, hammered concurrently: one first
// use, one drift, and both withhold after it; one approve serves both.
func TestGuardTwoProxiesShareStore(t *testing.T) {
	st, _ := guard.Open(t.TempDir())
	up := driftingUpstream(t, 12)
	var peers []*httpPeer
	for range 2 {
		st2, _ := guard.Open(st.Dir()) // a store value of its own, as another process would have
		g := newGuard(t, st2, guard.PostureDiscovery, 0)
		srv := startHTTPProxy(t, up, Config{Guard: g})
		peers = append(peers, newHTTPPeer(t, srv.URL+"/mcp"))
	}
	var wg sync.WaitGroup
	for _, p := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				p.rpc(t, "tools/list", nil)
				callEcho(t, p)
			}
		}()
	}
	wg.Wait()
	waitStatus(t, st, guard.StatusChanged)
	for _, p := range peers {
		requireWithheld(t, p, "changed")
	}
	acts := auditActions(t, st)
	count := map[guard.Action]int{}
	for _, a := range acts {
		count[a]++
	}
	// (reseen may appear: a reply listed before the drift can be judged after it)
	if count[guard.ActionFirstUse] != 1 || count[guard.ActionDrift] != 1 {
		t.Fatalf("audit %v", acts)
	}
	if _, _, err := st.Approve("drifting", "", "alice", time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, p := range peers {
		requireServed(t, p)
	}
}

// TestGuardRecheckRepliesNeverReachClient: the guard's own listings (one
// per interval) happen while the client talks; none of their replies
// reaches it (stdioPeer fails the test on any guard id it receives).
func TestGuardRecheckRepliesNeverReachClient(t *testing.T) {
	st, _ := guard.Open(t.TempDir())
	g := &countingGuard{Guard: newGuard(t, st, guard.PostureDiscovery, 10*time.Millisecond)}
	p := newStdioPeer(t, g)
	listNames(t, p)
	// The client keeps calling until the guard has sent several listings of
	// its own and has its replies back (nothing in flight), so those replies
	// crossed the relay while the client talked; the peer's cleanup then
	// fails the test if any of them reached the client.
	const rechecks = 5
	deadline := time.Now().Add(testutil.Hang)
	for calls := 1; ; calls++ {
		callEcho(t, p)
		g.mu.Lock()
		n, idle := g.sent, g.answered == g.sent
		g.mu.Unlock()
		if calls >= 20 && n >= rechecks && idle {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d calls, %d guard listing(s) sent (want %d, none in flight)", calls, n, rechecks)
		}
	}
}

// countingGuard counts the requests of the guard's own it sends to the
// server and the answers to them that come back through the relay.
type countingGuard struct {
	*intercept.Guard
	mu             sync.Mutex
	sent, answered int
}

func (c *countingGuard) Attach(send func([]byte), roundTrip func(context.Context, []byte) ([]byte, error), toClient func([]byte)) {
	c.Guard.Attach(func(b []byte) {
		c.mu.Lock()
		c.sent++
		c.mu.Unlock()
		send(b)
	}, roundTrip, toClient)
}

func (c *countingGuard) Screen(f *faults.Frame, pk jsonrpc.Peek, perr error, correlate func(*faults.Frame)) ([]byte, faults.Action, bool) {
	if f.Dir == faults.ToClient && strings.Contains(string(pk.ID), intercept.IDPrefix) {
		c.mu.Lock()
		c.answered++
		c.mu.Unlock()
	}
	return c.Guard.Screen(f, pk, perr, correlate)
}

// TestGuardPeriodicRecheckHTTP: with --recheck and no client traffic after
// the first listing, the guard's own listings find the drift.
func TestGuardPeriodicRecheckHTTP(t *testing.T) {
	st, _ := guard.Open(t.TempDir())
	g := newGuard(t, st, guard.PostureDiscovery, 20*time.Millisecond)
	srv := startHTTPProxy(t, driftingUpstream(t, 2), Config{Guard: g})
	p := newHTTPPeer(t, srv.URL+"/mcp")
	listNames(t, p)
	rec := waitStatus(t, st, guard.StatusChanged)
	if rec.DriftAt == nil {
		t.Fatal("no drift time")
	}
	requireWithheld(t, p, "changed")
}

// sessionCatcher records the Mcp-Session-Id the server hands out.
type sessionCatcher struct {
	mu  sync.Mutex
	sid string
}

func (s *sessionCatcher) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			s.mu.Lock()
			s.sid = id
			s.mu.Unlock()
		}
	}
	return resp, err
}

// TestGuardListChangedOverHTTP: over HTTP the guard announces that the
// server is no longer served with notifications/tools/list_changed on the
// client's open GET stream (the Streamable HTTP notification stream), as
// it does on stdout for a stdio client. The server never changes here (an
// operator quarantines it), so the notification can only be the proxy's.
func TestGuardListChangedOverHTTP(t *testing.T) {
	st, _ := guard.Open(t.TempDir())
	g := newGuard(t, st, guard.PostureDiscovery, 0)
	srv := startHTTPProxy(t, driftingUpstream(t, 1000), Config{Guard: g})
	catch := &sessionCatcher{}
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Hang)
	defer cancel()
	c, err := mcp.Connect(ctx, mcp.Config{URL: srv.URL + "/mcp", Protocol: "2025-11-25", HTTPClient: &http.Client{Transport: catch}, RequestTimeout: testutil.Hang})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	peer := &httpPeer{c: c}
	requireServed(t, peer)
	waitStatus(t, st, guard.StatusVerified)
	catch.mu.Lock()
	sid := catch.sid
	catch.mu.Unlock()
	if sid == "" {
		t.Fatal("no session id from the server")
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := make(chan string, 16)
	go func() {
		defer close(events)
		br := bufio.NewReader(resp.Body)
		for {
			ev, err := jsonrpc.ReadEvent(br, 0, nil)
			if ev.HasData {
				events <- string(ev.Data)
			}
			if err != nil {
				return
			}
		}
	}()
	// The stream is the proxy's to speak on once it is registered.
	for deadline := time.Now().Add(testutil.Hang); ; time.Sleep(time.Millisecond) {
		srv.h.streamsMu.Lock()
		n := len(srv.h.streams)
		srv.h.streamsMu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d client streams registered, want 1", n)
		}
	}
	if _, _, err := st.Quarantine("drifting", "suspicious", "alice", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := g.Recheck(ctx); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, st, guard.StatusQuarantined)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("the stream ended without list_changed")
			}
			if strings.Contains(ev, `"notifications/tools/list_changed"`) {
				return
			}
		case <-ctx.Done():
			t.Fatal("no notifications/tools/list_changed on the client's GET stream")
		}
	}
}

// TestGuardWithholdsUnreadableList: a tools/list answer the guard cannot
// read (a schema nested 2 000 levels deep, past the comparison's limit, or
// 10 000, past encoding/json's) is withheld, fail closed, and the client
// still gets its answer, under its own id.
func TestGuardWithholdsUnreadableList(t *testing.T) {
	for _, depth := range []int{2000, testbed.DefaultSchemaDepth} {
		t.Run(fmt.Sprint(depth), func(t *testing.T) {
			st, _ := guard.Open(t.TempDir())
			g := newGuard(t, st, guard.PostureDiscovery, 0)
			p := newStdioPeer(t, g, "MCPDRILL_PROFILE=deep-schema", fmt.Sprintf("MCPDRILL_SCHEMA_DEPTH=%d", depth))
			names, meta := listNames(t, p)
			if len(names) != 0 {
				t.Fatalf("an unreadable list served %v", names)
			}
			var info map[string]string
			if json.Unmarshal(meta["io.mcpdrill/guard"], &info) != nil || !strings.Contains(info["message"], "could not be read") {
				t.Errorf("tools/list _meta %v, want the guard's explanation", meta)
			}
		})
	}
}

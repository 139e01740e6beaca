package clientdrill

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary is also the drilled client (roleEnv=client, its
// behaviour in modeEnv) and the stdio relay (argv "client-server").
const (
	roleEnv = "MCPDRILL_CLIENTDRILL_TEST_ROLE"
	modeEnv = "MCPDRILL_CLIENTDRILL_TEST_MODE"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "client-server" {
		if err := Relay(context.Background(), os.Args[3], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	if os.Getenv(roleEnv) == "client" {
		os.Exit(testClient(os.Getenv(modeEnv)))
	}
	os.Exit(m.Run())
}

// testOptions drills the test binary as a client in mode.
func testOptions(t *testing.T, mode string, ids ...string) Options {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Command: []string{exe}, ServerArgv: []string{exe, "client-server"}, Seed: 7,
		Env: append(os.Environ(), roleEnv+"=client", modeEnv+"="+mode), Timeout: 500 * time.Millisecond}
	for _, id := range ids {
		sc, ok := Lookup(id)
		if !ok {
			t.Fatalf("no scenario %q", id)
		}
		o.Scenarios = append(o.Scenarios, sc)
	}
	return o
}

// rpc is the test client's connection to the scenario server.
type rpc interface {
	// send writes a message; for a request, wait returns its response.
	send(msg map[string]any) error
	wait(id int, d time.Duration) (map[string]any, bool)
	close()
}

// testClient is a small MCP client with a behaviour per mode:
//   - good: uses the requested timeout, sends notifications/cancelled, refuses
//     server requests, reports every call;
//   - hang: waits for every answer without a timeout;
//   - crash: kills itself (SIGKILL) as soon as a call does not succeed;
//   - quit: reports a warm-up line, then exits 3 as soon as a call does not
//     succeed;
//   - silent: writes no report lines and exits 0.
func testClient(mode string) int {
	var sctx stepContext
	if err := json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &sctx); err != nil {
		return 2
	}
	var c rpc
	var err error
	if u, ok := sctx.Server["url"].(string); ok {
		c = newHTTPRPC(u)
	} else {
		var args []string
		for _, a := range sctx.Server["args"].([]any) {
			args = append(args, a.(string))
		}
		c, err = newStdioRPC(sctx.Server["command"].(string), args)
		if err != nil {
			return 2
		}
	}
	defer c.close()
	id := 0
	call := func(method string, params any, d time.Duration) (map[string]any, bool) {
		id++
		if c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}) != nil {
			return nil, false
		}
		return c.wait(id, d)
	}
	forever := 24 * time.Hour
	if _, ok := call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "test", "version": "1"}}, 5*time.Second); !ok {
		return 2
	}
	_ = c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	out := json.NewEncoder(os.Stdout)
	if mode == "quit" {
		// A report line for no step: the client reports, so ending
		// without reporting the faulted call is a crash.
		_ = out.Encode(map[string]any{"call": "warm-up", "step": 9, "outcome": "ok"})
	}
	for _, st := range sctx.Steps {
		if st.Op == "tools/list" {
			call("tools/list", map[string]any{}, 5*time.Second)
			continue
		}
		d := time.Duration(sctx.TimeoutMS) * time.Millisecond
		if mode == "hang" {
			d = forever
		}
		resp, ok := call("tools/call", map[string]any{"name": st.Name, "arguments": st.Arguments}, d)
		line := map[string]any{"call": st.Name}
		switch {
		case !ok:
			line["outcome"] = "timeout"
			_ = c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": id}})
		case resp["error"] != nil:
			line["outcome"], line["error"] = "error", resp["error"]
		default:
			line["outcome"], line["value"] = "ok", resp["result"]
		}
		if line["outcome"] != "ok" {
			switch mode {
			case "crash":
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			case "quit":
				return 3
			}
		}
		if mode != "silent" {
			_ = out.Encode(line)
		}
	}
	return 0
}

// dispatch routes one incoming message: a response to its waiter, a server
// request to a refusal.
func dispatch(msg map[string]any, replies chan<- map[string]any, send func(map[string]any) error) {
	if _, isReq := msg["method"]; isReq {
		if id, ok := msg["id"]; ok {
			_ = send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32601, "message": "not supported"}})
		}
		return
	}
	replies <- msg
}

func waitFor(replies <-chan map[string]any, id int, d time.Duration) (map[string]any, bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case m, ok := <-replies:
			if !ok {
				return nil, false
			}
			if n, _ := m["id"].(float64); int(n) == id {
				return m, true
			}
		case <-t.C:
			return nil, false
		}
	}
}

type stdioRPC struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	replies chan map[string]any
}

func newStdioRPC(command string, args []string) (*stdioRPC, error) {
	cmd := exec.Command(command, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &stdioRPC{cmd: cmd, in: in, replies: make(chan map[string]any, 64)}
	go func() {
		defer close(s.replies)
		sc := bufio.NewScanner(outp)
		sc.Buffer(make([]byte, 64<<10), 32<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				dispatch(m, s.replies, s.send)
			}
		}
	}()
	return s, nil
}

func (s *stdioRPC) send(msg map[string]any) error {
	b, _ := json.Marshal(msg)
	_, err := s.in.Write(append(b, '\n'))
	return err
}
func (s *stdioRPC) wait(id int, d time.Duration) (map[string]any, bool) {
	return waitFor(s.replies, id, d)
}
func (s *stdioRPC) close() { s.in.Close(); _ = s.cmd.Wait() }

type httpRPC struct {
	url, session string
	replies      chan map[string]any
}

func newHTTPRPC(u string) *httpRPC { return &httpRPC{url: u, replies: make(chan map[string]any, 64)} }

func (h *httpRPC) send(msg map[string]any) error {
	b, _ := json.Marshal(msg)
	req, _ := http.NewRequest(http.MethodPost, h.url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if h.session != "" {
		req.Header.Set("Mcp-Session-Id", h.session)
	}
	// Headers of a held reply may never come: of the requests, only
	// initialize, which carries the session id, is waited for.
	got := make(chan struct{})
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			close(got)
			return
		}
		if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
			h.session = s
		}
		close(got)
		defer resp.Body.Close()
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 64<<10), 32<<20)
			for sc.Scan() {
				if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
					var m map[string]any
					if json.Unmarshal([]byte(data), &m) == nil {
						dispatch(m, h.replies, h.send)
					}
				}
			}
			return
		}
		var m map[string]any
		if json.NewDecoder(resp.Body).Decode(&m) == nil {
			h.replies <- m
		}
	}()
	if _, isReq := msg["id"]; !isReq || msg["method"] == "initialize" {
		<-got
	}
	return nil
}
func (h *httpRPC) wait(id int, d time.Duration) (map[string]any, bool) {
	return waitFor(h.replies, id, d)
}
func (h *httpRPC) close() {}

package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/memnet"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// observeHTTP drives the testbed (reply style json or sse) through the
// proxy: initialize, initialized, then the call and, concurrently, a ping.
// Testbed, proxy and client run in a synctest bubble on in-memory networks
// (package memnet), so the delays a plan injects, the client's 1.5 s
// timeout and the order in which the replies come are exact, however
// loaded the machine.
func observeHTTP(t *testing.T, reply, planSrc, call string) (o observation) {
	t.Helper()
	p := plan(t, planSrc)
	synctest.Test(t, func(t *testing.T) {
		h, err := testbed.NewHandler(testbed.Options{Profile: "good", Seed: 1, Reply: reply})
		if err != nil {
			t.Fatal(err)
		}
		up := memnet.Serve(h)
		defer up.Close()
		px, err := NewHTTP(HTTPOptions{Config: Config{Plan: p}, Upstream: "http://127.0.0.1" + testbed.PathMCP, Client: up.Client(),
			OnError: func(err error) { t.Errorf("proxy: %v", err) }})
		if err != nil {
			t.Fatal(err)
		}
		n := memnet.Listen()
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- px.Serve(ctx, n.Listener()) }()
		defer func() {
			n.Close()
			cancel()
			if err := <-served; err != nil {
				t.Errorf("Serve: %v", err)
			}
		}()
		c := n.Client()
		c.Timeout = 1500 * time.Millisecond
		o = observeHTTPWith(t, c, "http://127.0.0.1"+testbed.PathMCP, call)
	})
	return o
}

// observeHTTPWith is observeHTTP's exchange, with client c, against the
// proxy's endpoint url.
func observeHTTPWith(t *testing.T, c *http.Client, url, call string) observation {
	t.Helper()
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	init := do(c, http.MethodPost, url, hdr, []byte(initReq))
	if init.status != 200 {
		t.Fatalf("initialize: %s", init)
	}
	hdr.Set("Mcp-Session-Id", init.header.Get("Mcp-Session-Id"))
	hdr.Set("Mcp-Protocol-Version", "2025-06-18")
	do(c, http.MethodPost, url, hdr, []byte(initNote))

	// The ping goes once the call is on its way to the proxy (or failed to go).
	wrote := make(chan struct{})
	var wroteOnce sync.Once
	callWritten := func() { wroteOnce.Do(func() { close(wrote) }) }
	pingDone := make(chan time.Time, 1)
	start := time.Now()
	go func() {
		<-wrote
		e := do(c, http.MethodPost, url, hdr, []byte(pingCall))
		if e.err == nil && bytes.Contains(e.body, []byte(`"id":3`)) {
			pingDone <- time.Now()
		}
		close(pingDone)
	}()
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { callWritten() }}
	req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodPost, url, strings.NewReader(call))
	req.Header = hdr.Clone()
	var o observation
	resp, err := c.Do(req)
	callWritten()
	if err == nil {
		o.status, o.ctype = resp.StatusCode, resp.Header.Get("Content-Type")
		var body []byte
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.HasPrefix(o.ctype, "text/event-stream") {
			br := bufio.NewReader(bytes.NewReader(body))
			for {
				ev, rerr := jsonrpc.ReadEvent(br, 0, nil)
				if ev.HasData {
					o.frames = append(o.frames, ev.Data)
				}
				if rerr != nil {
					break
				}
			}
		} else if len(body) > 0 {
			o.frames = append(o.frames, body)
		}
	}
	o.took = time.Since(start)
	o.err = err
	var ne interface{ Timeout() bool }
	o.hung = err != nil && errors.As(err, &ne) && ne.Timeout()
	for _, f := range o.frames {
		if id, valid := idOf(f); !valid || id == "2" {
			o.call = append(o.call, f)
		}
	}
	if at, ok := <-pingDone; ok {
		o.ping = true
		if at.Before(start.Add(o.took)) {
			o.pingIdx = 0
		} else {
			o.pingIdx = 1
		}
	}
	return o
}

var httpFaultCases = append([]faultCase{
	{"timeout", "fault: timeout\n    tool: echo", echoCall, func(t *testing.T, o observation) {
		if !o.hung || !o.ping {
			t.Errorf("want the POST to hang and the ping answered:\n%v", o)
		}
	}},
	{"latency", "fault: latency\n    tool: echo\n    params: {latency: 300ms}", echoCall, func(t *testing.T, o observation) {
		if len(o.call) != 1 || string(o.call[0]) != echoReply || o.took < 300*time.Millisecond || !o.ping || o.pingIdx != 0 {
			t.Errorf("want the reply 300ms late and the ping answered before it:\n%v", o)
		}
	}},
	{"corrupt", "fault: corrupt\n    tool: echo", echoCall, func(t *testing.T, o observation) {
		if len(o.call) != 1 || !hasSentinel(o.call[0]) {
			t.Errorf("want sentinel leaves:\n%v", o)
		}
	}},
	{"truncate", "fault: truncate\n    tool: echo", echoCall, func(t *testing.T, o observation) {
		if o.err == nil || (len(o.call) == 1 && json.Valid(o.call[0])) {
			t.Errorf("want a short body and a broken connection:\n%v", o)
		}
	}},
	{"malformed", "fault: malformed\n    tool: echo\n    params: {variant: wrong-version}", echoCall, func(t *testing.T, o observation) {
		if len(o.call) != 1 || !bytes.Contains(o.call[0], []byte(`"jsonrpc":"1.0"`)) {
			t.Errorf("want jsonrpc 1.0:\n%v", o)
		}
	}},
	{"error on the request (server never sees it)", "fault: error\n    direction: c2s\n    kinds: [request]\n    tool: echo", echoCall, func(t *testing.T, o observation) {
		if o.status != 200 || len(o.call) != 1 || !bytes.Contains(o.call[0], []byte(`-32603`)) {
			t.Errorf("want the proxy's error:\n%v", o)
		}
	}},
	{"drop", "fault: drop\n    tool: echo", echoCall, func(t *testing.T, o observation) {
		if len(o.call) != 0 || (o.status != http.StatusAccepted && !strings.HasPrefix(o.ctype, "text/event-stream")) {
			t.Errorf("want no reply (202, or a stream without it):\n%v", o)
		}
	}},
	{"drop-tool", "fault: drop-tool\n    params: {name: echo, notify: true}", listCall, func(t *testing.T, o observation) {
		all := bytes.Join(o.frames, nil)
		if len(o.call) != 1 || bytes.Contains(o.call[0], []byte(`"name":"echo"`)) || !bytes.Contains(all, []byte("list_changed")) {
			t.Errorf("want echo gone and list_changed:\n%v", o)
		}
	}},
	{"rug-pull", "fault: rug-pull\n    params: {name: echo, change: description}", listCall, func(t *testing.T, o observation) {
		if len(o.call) != 1 || !bytes.Contains(o.call[0], []byte(`changed by mcpdrill rug-pull`)) {
			t.Errorf("want echo's description changed:\n%v", o)
		}
	}},
	{"disconnect", "fault: disconnect\n    tool: echo", echoCall, func(t *testing.T, o observation) {
		if o.err == nil || o.hung || len(o.call) != 0 {
			t.Errorf("want the connection aborted:\n%v", o)
		}
	}},
}, commonFaultCases...)

func TestHTTPFaultsAsObserved(t *testing.T) {
	for _, reply := range []string{"json", "sse"} {
		for _, c := range httpFaultCases {
			t.Run(reply+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				c.check(t, observeHTTP(t, reply, "seed: 1\nrules:\n  - "+c.plan+"\n", c.call))
			})
		}
	}
}

var _ = os.Stderr

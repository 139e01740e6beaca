package proxy

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

func TestReadBudgeted(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 100<<10)
	for _, tc := range []struct {
		name     string
		declared int64
		budget   int64
		wantErr  error
	}{
		{"known length fits", int64(len(body)), 1 << 20, nil},
		{"unknown length fits", -1, 1 << 20, nil},
		{"known length does not fit", int64(len(body)), 64 << 10, errBudget},
		{"unknown length does not fit", -1, 64 << 10, errBudget},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newByteBudget(tc.budget)
			got, charged, err := readBudgeted(b, bytes.NewReader(body), tc.declared, 1<<20)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if err == nil && !bytes.Equal(got.b, body) {
				t.Fatalf("read %d bytes, want %d", len(got.b), len(body))
			}
			if b.used != charged || (err == nil && charged < int64(len(body))) {
				t.Fatalf("charged %d, budget holds %d, body %d", charged, b.used, len(body))
			}
			b.give(charged)
			if b.used != 0 {
				t.Fatalf("%d bytes still held", b.used)
			}
		})
	}
}

// TestHTTPMemoryBudget (F9): while one large body is held, another that
// would go past the budget is answered 503, and nothing of it reaches the
// upstream; once the first is done, the budget is whole again.
func TestHTTPMemoryBudget(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	got := 0
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		got++
		first := got == 1
		mu.Unlock()
		if first {
			<-release
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	t.Cleanup(up.Close)
	h, err := NewHTTP(HTTPOptions{Upstream: up.URL + "/mcp", Config: Config{MaxFrame: 1 << 20}, MemoryBudget: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	px := serveProxy(t, h)
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("p", 700<<10) + `"}}`
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	done := make(chan exchange)
	go func() { done <- do(px.Client(), http.MethodPost, px.URL+"/mcp", hdr, []byte(big)) }()
	for { // the first body is held once the upstream has it
		mu.Lock()
		n := got
		mu.Unlock()
		if n == 1 {
			break
		}
		runtime.Gosched()
	}
	if ex := do(px.Client(), http.MethodPost, px.URL+"/mcp", hdr, []byte(big)); ex.status != http.StatusServiceUnavailable {
		t.Fatalf("a body past the budget: %v", ex)
	}
	close(release)
	if ex := <-done; ex.status != http.StatusOK {
		t.Fatalf("the first body: %v", ex)
	}
	if ex := do(px.Client(), http.MethodPost, px.URL+"/mcp", hdr, []byte(big)); ex.status != http.StatusOK {
		t.Fatalf("after the first: %v", ex)
	}
	mu.Lock()
	defer mu.Unlock()
	if got != 2 {
		t.Fatalf("the upstream received %d bodies, want 2", got)
	}
}

// TestHTTPRelaysOverCapEvents: an SSE event past the frame cap is relayed
// byte for byte as it comes, without being held whole.
func TestHTTPRelaysOverCapEvents(t *testing.T) {
	stream := "event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"pad\":\"" + strings.Repeat("q", 2<<20) + "\"}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, stream)
	}))
	t.Cleanup(up.Close)
	px := startHTTPProxy(t, up.URL+"/mcp", Config{MaxFrame: 256 << 10})
	ex := do(px.Client(), http.MethodPost, px.URL+"/mcp", http.Header{"Content-Type": {"application/json"}}, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if ex.err != nil || string(ex.body) != stream {
		t.Fatalf("relayed %d bytes of %d (%v)", len(ex.body), len(stream), ex.err)
	}
}

// TestBudgetTrim: memory is returned to the system after a burst that held
// at least trimPeak at once, and not during a stream of bodies that never
// held much at once, however many bytes pass.
func TestBudgetTrim(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name   string
		budget int64
		// bursts of held bodies: each holds n bodies of size at once,
		// then gives all back
		bursts, n, size int64
		want            int
	}{
		{"a stream of 4 MiB bodies", DefaultMemoryBudget, 200, 1, 4 * mib, 0},
		{"a stream of 16 MiB bodies two at a time", DefaultMemoryBudget, 100, 2, 16 * mib, 0},
		{"bursts of 64 MiB, one return per half budget given back", DefaultMemoryBudget, 50, 2, 32 * mib, 25},
		{"one burst too small to return", DefaultMemoryBudget, 1, 20, 4 * mib, 0},
		{"two bursts of 80 MiB", DefaultMemoryBudget, 2, 20, 4 * mib, 1},
		{"the budget filled four times", DefaultMemoryBudget, 4, 64, 4 * mib, 4},
		{"a small budget never returns", 32 * mib, 100, 8, 4 * mib, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := newByteBudget(tc.budget)
				var trims atomic.Int32
				b.trim = func() { trims.Add(1) }
				for range tc.bursts {
					for range tc.n {
						if !b.take(tc.size) {
							t.Fatalf("take %d with %d held of %d", tc.size, b.used, b.max)
						}
					}
					for range tc.n {
						b.give(tc.size)
					}
					synctest.Wait() // a trim started has run
				}
				if got := int(trims.Load()); got != tc.want {
					t.Fatalf("%d trims, want %d", got, tc.want)
				}
			})
		})
	}
}

// TestHTTPHeldBodyOutlivesHandler: a large request body still unsent when
// the reply comes back (an upstream that answers before it reads) stays
// out of the buffer pool until the transport closes it, so the bodies of
// later requests, read into pooled buffers meanwhile, change none of its
// bytes. Each transport copy may be closed more than once.
func TestHTTPHeldBodyOutlivesHandler(t *testing.T) {
	type sent struct {
		body io.ReadCloser
		want []byte
	}
	var mu sync.Mutex
	var unread []sent
	early := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		mu.Lock()
		unread = append(unread, sent{req.Body, frames[req.Header.Get("X-Frame")]})
		mu.Unlock()
		reply := `{"jsonrpc":"2.0","id":1,"result":{}}`
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(reply)), ContentLength: int64(len(reply)), Request: req}, nil
	})
	for name, src := range map[string]string{"no plan": "", "a live rule": "rules:\n  - fault: drop\n    direction: c2s\n    tool: nomatch\n"} {
		t.Run(name, func(t *testing.T) {
			cfg := Config{}
			if src != "" {
				cfg.Plan = plan(t, src)
			}
			h, err := NewHTTP(HTTPOptions{Config: cfg, Upstream: "http://upstream.invalid/mcp", Client: &http.Client{Transport: early}})
			if err != nil {
				t.Fatal(err)
			}
			unread = nil
			for i := range len(frames) {
				key := strconv.Itoa(i)
				req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(frames[key]))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Frame", key)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					t.Fatalf("request %d: %d %s", i, rec.Code, rec.Body)
				}
			}
			for i, s := range unread {
				got, err := io.ReadAll(s.body)
				if err != nil || !bytes.Equal(got, s.want) {
					t.Fatalf("request %d reached the upstream changed (%d bytes, %v)", i, len(got), err)
				}
				s.body.Close()
				s.body.Close()
			}
		})
	}
}

// frames are large requests, each of its own bytes, by index.
var frames = func() map[string][]byte {
	m := map[string][]byte{}
	for i := range 6 {
		pad := strings.Repeat(string(rune('a'+i)), 1<<20)
		m[strconv.Itoa(i)] = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"blob","arguments":{"pad":"%s"}}}`, i, pad)
	}
	return m
}()

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestHTTPPooledBodiesConcurrent: concurrent large requests and replies
// (JSON bodies and event streams), each of its own bytes, cross the proxy
// unchanged while pooled buffers pass from one to the next (under -race, a
// buffer reused while still read or written is also a reported race). The
// upstream answers each request with its digest and a reply of the
// request's size.
func TestHTTPPooledBodiesConcurrent(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		sum := sha256.Sum256(body)
		fill := strings.Repeat(r.Header.Get("X-Fill"), len(body))
		if r.Header.Get("X-SSE") != "" {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: "+`{"jsonrpc":"2.0","id":1,"result":{"sum":"%x","fill":"%s"}}`+"\n\n", sum, fill)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"sum":"%x","fill":"%s"}}`, sum, fill)
	}))
	defer up.Close()
	for name, src := range map[string]string{
		"no plan":               "",
		"a live rule each way":  "rules:\n  - fault: drop\n    direction: c2s\n    tool: nomatch\n  - fault: error\n    tool: nomatch\n",
		"a rule on every reply": "rules:\n  - fault: latency\n    method: tools/call\n    params: {latency: 0s}\n",
	} {
		t.Run(name, func(t *testing.T) {
			cfg := Config{}
			if src != "" {
				cfg.Plan = plan(t, src)
			}
			px := startHTTPProxy(t, up.URL+"/mcp", cfg)
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					for i := range 6 {
						size := (100 << 10) << (i % 4) // 100 KiB to 800 KiB
						fill := string(rune('a' + (g*6+i)%26))
						frame := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"blob","arguments":{"pad":"%s"}}}`, strings.Repeat(fill, size))
						req, _ := http.NewRequest(http.MethodPost, px.URL+"/mcp", bytes.NewReader(frame))
						req.Header.Set("Content-Type", "application/json")
						req.Header.Set("Accept", "application/json, text/event-stream")
						req.Header.Set("X-Fill", fill)
						sse := i%2 == 1
						if sse {
							req.Header.Set("X-SSE", "1")
						}
						resp, err := px.client.Do(req)
						if err != nil {
							t.Error(err)
							return
						}
						got, err := io.ReadAll(resp.Body)
						resp.Body.Close()
						sum := sha256.Sum256(frame)
						want := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"result":{"sum":"%x","fill":"%s"}}`, sum, strings.Repeat(fill, len(frame)))
						if sse {
							want = "event: message\ndata: " + want + "\n\n"
						}
						if err != nil || string(got) != want {
							t.Errorf("goroutine %d call %d: %d bytes back, not the %d the upstream sent (%v)", g, i, len(got), len(want), err)
							return
						}
					}
				})
			}
			wg.Wait()
		})
	}
}

// TestReturnMemoryEmptiesPool: after a burst, memory goes back to the
// system with the pooled body buffers it left (a sync.Pool keeps what it
// holds through one collection).
func TestReturnMemoryEmptiesPool(t *testing.T) {
	var held []*heldBody
	for range 4 {
		held = append(held, newHeldBody(1<<20))
	}
	for _, h := range held {
		h.release()
	}
	returnMemory()
	if h := heldBodies.Get().(*heldBody); cap(h.b) != 0 {
		t.Fatalf("a pooled buffer of %d bytes outlived the return of memory", cap(h.b))
	}
}

// TestStdioDelayedFramesIntact: frames held for a latency fault each keep
// their own bytes until they are written, though their copies lie in
// pooled buffers that later frames reuse: twenty distinct 256 KiB
// requests, sent without waiting, come back from an echoing server
// byte for byte (in any order: timers of equal delay may fire out of it).
func TestStdioDelayedFramesIntact(t *testing.T) {
	in, out, _ := startStdio(t, plan(t, "rules:\n  - fault: latency\n    direction: c2s\n    params: {latency: 20ms}\n"), nil, "cat")
	sent := map[string]bool{}
	for i := range 20 {
		line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"x","arguments":{"pad":"%s"}}}`, i, strings.Repeat(string(rune('a'+i)), 256<<10))
		sent[line] = true
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	var whole atomic.Int32
	read := make(chan error, 1)
	go func() {
		for range sent {
			line, err := out.ReadString('\n')
			if err != nil {
				read <- err
				return
			}
			if !sent[strings.TrimSuffix(line, "\n")] {
				read <- fmt.Errorf("a frame came back with another's bytes (%.60s…)", line)
				return
			}
			whole.Add(1)
		}
		read <- nil
	}()
	select {
	case err := <-read:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testutil.Hang): // a frame's bytes lost or merged with another's
		t.Fatalf("%d of %d frames came back", whole.Load(), len(sent))
	}
}

// TestHTTPDelayedEventsIntact: events held for a latency fault each keep
// their own bytes until they are written, though they are built in pooled
// buffers that later events reuse. The upstream streams sixteen distinct
// 128 KiB notifications, one every 4 ms, each delayed 10 ms: a buffer is
// given back while later events are still being held.
func TestHTTPDelayedEventsIntact(t *testing.T) {
	const n = 16
	event := func(i int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"i":%d,"data":"%s"}}`, i, strings.Repeat(string(rune('a'+i)), 128<<10))
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range n {
			fmt.Fprintf(w, "data: %s\n\n", event(i))
			http.NewResponseController(w).Flush()
			time.Sleep(4 * time.Millisecond)
		}
		fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	}))
	defer up.Close()
	px := startHTTPProxy(t, up.URL+"/mcp", Config{Plan: plan(t, "rules:\n  - fault: latency\n    kinds: [notification]\n    params: {latency: 10ms}\n")})
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	ex := do(&http.Client{Timeout: testutil.Hang}, http.MethodPost, px.URL+"/mcp", hdr, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`))
	if ex.err != nil || ex.status != http.StatusOK {
		t.Fatalf("%v", ex)
	}
	seen := map[int]bool{}
	for _, block := range strings.Split(string(ex.body), "\n\n") {
		_, data, ok := strings.Cut(block, "data: ")
		if !ok || strings.Contains(data, `"result"`) {
			continue // the answer, or what follows the last event
		}
		var i int
		if _, err := fmt.Sscanf(data, `{"jsonrpc":"2.0","method":"notifications/message","params":{"i":%d`, &i); err != nil || i < 0 || i >= n {
			t.Fatalf("an event that is none of those sent: %.80s…", data)
		}
		if data != event(i) || seen[i] {
			t.Fatalf("event %d came back with another's bytes", i)
		}
		seen[i] = true
	}
	if len(seen) != n {
		t.Fatalf("%d of %d events came back", len(seen), n)
	}
}

package proxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// h1TestHandler is what the server tests serve, by path. /wait waits up
// to waitMax for its client to leave and reports how that ended on onWait.
func h1TestHandler(onWait chan<- error, waitMax time.Duration) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/cl", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5")
		_, _ = io.WriteString(w, "hello")
	})
	mux.HandleFunc("/small", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "hi") })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, strings.Repeat("b", 10<<10))
	})
	mux.HandleFunc("/flush", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "a")
		flush(w)
		_, _ = io.WriteString(w, "b")
	})
	mux.HandleFunc("/204", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
		_, _ = io.WriteString(w, "x")
	})
	mux.HandleFunc("/error", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "nope", http.StatusBadRequest) })
	mux.HandleFunc("/abort", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "10")
		_, _ = io.WriteString(w, "abc")
		flush(w)
		panic(http.ErrAbortHandler)
	})
	mux.HandleFunc("/panic", func(w http.ResponseWriter, r *http.Request) { panic("boom") })
	mux.HandleFunc("/short", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "10")
		_, _ = io.WriteString(w, "abc")
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		_, _ = w.Write(b)
	})
	mux.HandleFunc("/ignore", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("/wait", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		watchClient(w)
		var err error
		select {
		case <-r.Context().Done():
			err = r.Context().Err()
		case <-time.After(waitMax):
			err = errors.New("the client left and the request's context did not end")
		}
		if onWait != nil {
			onWait <- err
		}
	})
	return mux
}

// startH1 serves handler with h1Server on loopback until the test ends;
// errs returns what the server has reported through onError so far.
func startH1(t *testing.T, handler http.Handler) (addr string, errs func() []error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []error
	srv := &h1Server{handler: handler, onError: func(err error) { mu.Lock(); got = append(got, err); mu.Unlock() }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return ln.Addr().String(), func() []error {
		mu.Lock()
		defer mu.Unlock()
		return append([]error(nil), got...)
	}
}

// rawExchange writes raw to a new connection and reads the responses it
// gets, then whether the connection is still open (a GET /small on it
// is answered).
func rawExchange(t *testing.T, addr, raw string, method string, n int) ([]*http.Response, []string, bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	var resps []*http.Response
	var bodies []string
	for len(resps) < n {
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			t.Fatalf("response %d: %v", len(resps)+1, err)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			b = append(b, []byte("<"+err.Error()+">")...)
		}
		resps, bodies = append(resps, resp), append(bodies, string(b))
	}
	if _, err := io.WriteString(c, "GET /small HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return resps, bodies, false
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return resps, bodies, false
	}
	b, _ := io.ReadAll(resp.Body)
	return resps, bodies, string(b) == "hi"
}

func TestH1Server(t *testing.T) {
	addr, errs := startH1(t, h1TestHandler(nil, time.Millisecond))
	get := func(path string) string { return "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n" }
	post := func(path, body string, extra string) string {
		return "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n" + extra + "\r\n" + body
	}
	cases := []struct {
		name   string
		raw    string
		method string
		n      int // responses expected
		status []int
		bodies []string
		header map[string]string // on the last response; "" means absent
		alive  bool
	}{
		{"declared length", get("/cl"), "GET", 1, []int{200}, []string{"hello"}, map[string]string{"Content-Length": "5", "Transfer-Encoding": ""}, true},
		{"short body gets its length", get("/small"), "GET", 1, []int{200}, []string{"hi"}, map[string]string{"Content-Length": "2"}, true},
		{"long body is chunked", get("/big"), "GET", 1, []int{200}, []string{strings.Repeat("b", 10<<10)}, map[string]string{"Content-Length": ""}, true},
		{"flush commits to chunked", get("/flush"), "GET", 1, []int{200}, []string{"ab"}, map[string]string{"Content-Length": ""}, true},
		{"204 has no body", get("/204"), "GET", 1, []int{204}, []string{""}, map[string]string{"Content-Length": ""}, true},
		{"http.Error", get("/error"), "GET", 1, []int{400}, []string{"nope\n"}, map[string]string{"Content-Type": "text/plain; charset=utf-8"}, true},
		{"HEAD keeps the length, sends no body", "HEAD /cl HTTP/1.1\r\nHost: x\r\n\r\n", "HEAD", 1, []int{200}, []string{""}, map[string]string{"Content-Length": "5"}, true},
		{"abort cuts the body and closes", get("/abort"), "GET", 1, []int{200}, []string{"abc<unexpected EOF>"}, nil, false},
		{"panic closes without a response", get("/panic"), "GET", 0, nil, nil, nil, false},
		{"a body shorter than declared closes", get("/short"), "GET", 1, []int{200}, []string{"abc<unexpected EOF>"}, nil, false},
		{"echo", post("/echo", "ping", ""), "POST", 1, []int{200}, []string{"ping"}, nil, true},
		{"unread body is drained", post("/ignore", strings.Repeat("z", 1000), ""), "POST", 1, []int{200}, []string{"ok"}, nil, true},
		{"a huge unread body closes", post("/ignore", strings.Repeat("z", h1DrainMax+10), ""), "POST", 1, []int{200}, []string{"ok"}, nil, false},
		{"HTTP/1.0 closes", "GET /small HTTP/1.0\r\n\r\n", "GET", 1, []int{200}, []string{"hi"}, map[string]string{"Connection": "close"}, false},
		{"Connection: close", "GET /small HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "GET", 1, []int{200}, []string{"hi"}, map[string]string{"Connection": "close"}, false},
		{"100-continue", post("/echo", "abc", "Expect: 100-continue\r\n"), "POST", 2, []int{100, 200}, []string{"", "abc"}, nil, true},
		{"unknown expectation", post("/echo", "abc", "Expect: tea\r\n"), "POST", 1, []int{417}, []string{""}, nil, false},
		{"HTTP/2 prior knowledge", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "GET", 1, []int{505}, []string{""}, nil, false},
		{"malformed request", "NOT HTTP\r\n\r\n", "GET", 1, []int{400}, []string{"mcpdrill: malformed HTTP request"}, nil, false},
		{"pipelined requests", get("/cl") + post("/echo", "two", "") + get("/small"), "GET", 3, []int{200, 200, 200}, []string{"hello", "two", "hi"}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(errs())
			resps, bodies, alive := rawExchange(t, addr, c.raw, c.method, c.n)
			if heard := errs()[before:]; c.name == "panic closes without a response" {
				if len(heard) != 1 || !strings.Contains(heard[0].Error(), "boom") {
					t.Errorf("onError heard %v, want the handler's panic", heard)
				}
			} else if len(heard) > 0 {
				t.Errorf("onError heard %v", heard)
			}
			for i, resp := range resps {
				if resp.StatusCode != c.status[i] || bodies[i] != c.bodies[i] {
					t.Errorf("response %d: %d %q, want %d %q", i+1, resp.StatusCode, bodies[i], c.status[i], c.bodies[i])
				}
			}
			if len(resps) > 0 {
				last := resps[len(resps)-1]
				for k, v := range c.header {
					got := last.Header.Get(k)
					if k == "Content-Length" && last.ContentLength >= 0 && got == "" && v != "" {
						got = strconv.FormatInt(last.ContentLength, 10)
					}
					if k == "Transfer-Encoding" || k == "Content-Length" && v == "" {
						if v == "" && (len(last.TransferEncoding) > 0 && k == "Transfer-Encoding" || k == "Content-Length" && last.ContentLength >= 0 && c.status[len(resps)-1] != 204) {
							t.Errorf("%s present, want absent", k)
						}
						continue
					}
					if k == "Connection" && v == "close" {
						if !last.Close {
							t.Errorf("response not marked Connection: close")
						}
						continue
					}
					if got != v {
						t.Errorf("%s = %q, want %q", k, got, v)
					}
				}
			}
			if alive != c.alive {
				t.Errorf("connection open afterwards = %v, want %v", alive, c.alive)
			}
		})
	}
}

// TestH1ServerHeadTooLarge: a request head past the limit is refused with
// 431 and the connection closed, without the server holding it.
func TestH1ServerHeadTooLarge(t *testing.T) {
	addr, _ := startH1(t, h1TestHandler(nil, time.Millisecond))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	go func() {
		_, _ = io.WriteString(c, "GET /cl HTTP/1.1\r\nHost: x\r\nX-Big: "+strings.Repeat("a", 4<<20)+"\r\n\r\n")
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || !resp.Close {
		t.Fatalf("status %d, close %v; want 431 and close", resp.StatusCode, resp.Close)
	}
}

// TestH1ServerClientLeaves: a handler that asked for the client to be
// watched sees its request's context end when the client closes the
// connection.
func TestH1ServerClientLeaves(t *testing.T) {
	waited := make(chan error, 1)
	addr, _ := startH1(t, h1TestHandler(waited, 10*time.Second))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, "POST /wait HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"); err != nil {
		t.Fatal(err)
	}
	// The handler is waiting once the server has read the request; give
	// the watch its chance to start by closing only after a round trip on
	// another connection.
	if _, _, alive := rawExchange(t, addr, "GET /cl HTTP/1.1\r\nHost: x\r\n\r\n", "GET", 1); !alive {
		t.Fatal("second connection closed")
	}
	c.Close()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Fatalf("handler's context: %v", err)
	}
}

// TestH1ServerShutdown: ending the context closes the listener and the
// idle connections, and serve returns nil.
func TestH1ServerShutdown(t *testing.T) {
	ln := loopbackListener(t)
	cancel, done := serveH1Test(ln)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, "GET /cl HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("idle connection after shutdown: %v, want EOF", err)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Fatal("listener still accepts")
	}
}

// scriptConn is a connection whose client sends in and then closes its
// side; what the server writes is kept.
type scriptConn struct {
	mu  sync.Mutex
	in  *strings.Reader
	out strings.Builder
}

func (c *scriptConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.in.Read(p)
}

func (c *scriptConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.Write(p)
}

func (c *scriptConn) Close() error                       { return nil }
func (c *scriptConn) LocalAddr() net.Addr                { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }
func (c *scriptConn) RemoteAddr() net.Addr               { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 2} }
func (c *scriptConn) SetDeadline(t time.Time) error      { return nil }
func (c *scriptConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *scriptConn) SetWriteDeadline(t time.Time) error { return nil }

// FuzzH1Server: any bytes from a client are served to their end with no
// panic, and what the server writes starts with a well-formed HTTP/1.1
// response.
func FuzzH1Server(f *testing.F) {
	f.Add([]byte("GET /cl HTTP/1.1\r\nHost: x\r\n\r\n"))
	f.Add([]byte("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nGET /big HTTP/1.1\r\n\r\n"))
	f.Add([]byte("POST /echo HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\nabc"))
	f.Add([]byte("HEAD /flush HTTP/1.0\r\nExpect: 100-continue\r\n\r\n"))
	f.Add([]byte("POST /wait HTTP/1.1\r\nContent-Length: 1\r\n\r\nx"))
	handler := h1TestHandler(nil, time.Millisecond)
	f.Fuzz(func(t *testing.T, in []byte) {
		c := &scriptConn{in: strings.NewReader(string(in))}
		(&h1Server{handler: handler}).serveConn(context.Background(), c)
		out := c.out.String()
		if out == "" {
			return
		}
		if !strings.HasPrefix(out, "HTTP/1.1 ") {
			t.Fatalf("server wrote %q", out)
		}
		if _, err := http.ReadResponse(bufio.NewReader(strings.NewReader(out)), nil); err != nil {
			t.Fatalf("unparseable response: %v in %q", err, out)
		}
	})
}

// flakyListener fails its first Accept calls the way a process out of
// file descriptors sees them.
type flakyListener struct {
	net.Listener
	fails int
}

func (l *flakyListener) Accept() (net.Conn, error) {
	if l.fails > 0 {
		l.fails--
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE}
	}
	return l.Listener.Accept()
}

// TestH1ServerAcceptErrors: failed accepts are retried, not fatal.
func TestH1ServerAcceptErrors(t *testing.T) {
	ln := loopbackListener(t)
	cancel, done := serveH1Test(&flakyListener{Listener: ln, fails: 3})
	resps, bodies, _ := rawExchange(t, ln.Addr().String(), "GET /cl HTTP/1.1\r\nHost: x\r\n\r\n", "GET", 1)
	if resps[0].StatusCode != 200 || bodies[0] != "hello" {
		t.Fatalf("got %d %q", resps[0].StatusCode, bodies[0])
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}

func loopbackListener(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// serveH1Test serves the test handler on ln until cancel; done gets what
// serve returned.
func serveH1Test(ln net.Listener) (cancel func(), done <-chan error) {
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- (&h1Server{handler: h1TestHandler(nil, time.Millisecond)}).serve(ctx, ln) }()
	return cancel, errc
}

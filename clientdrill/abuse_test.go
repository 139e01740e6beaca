package clientdrill

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

func testWorld(t *testing.T, id string) *world {
	t.Helper()
	sc, ok := Lookup(id)
	if !ok {
		t.Fatal(id)
	}
	return newWorld(sc, 1, time.Second)
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`

// Abuse: who can reach the HTTP listener, and with what.
func TestHTTPListenerAbuse(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h, err := listenHTTP(ctx, testWorld(t, "duplicate-reply"))
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	if ip := h.ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
		t.Fatalf("listening on %v, not loopback", ip)
	}
	_, port, _ := net.SplitHostPort(h.ln.Addr().String())
	post := func(body string, hdr map[string]string) int {
		req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(body))
		for k, v := range hdr {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	cases := []struct {
		name string
		body string
		hdr  map[string]string
		want int
	}{
		{"a web page's cross-origin POST", initBody, map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"an Origin that only starts like loopback", initBody, map[string]string{"Origin": "http://127.0.0.1.evil.example"}, http.StatusForbidden},
		{"DNS rebinding: a foreign Host", initBody, map[string]string{"Host": "evil.example:" + port}, http.StatusForbidden},
		{"a Host at another port", initBody, map[string]string{"Host": "localhost:1"}, http.StatusForbidden},
		{"a loopback Origin", initBody, map[string]string{"Origin": "http://localhost:3000"}, http.StatusOK},
		{"localhost at the listener's port", initBody, map[string]string{"Host": "localhost:" + port}, http.StatusOK},
		{"no session", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, nil, http.StatusBadRequest},
		{"a guessed session", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"Mcp-Session-Id": "0123"}, http.StatusNotFound},
		{"a body over the cap", `{"x":"` + strings.Repeat("a", maxFrame) + `"}`, nil, http.StatusRequestEntityTooLarge},
	}
	for _, tc := range cases {
		if got := post(tc.body, tc.hdr); got != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
		}
	}
	// At most maxConns sessions per scenario.
	for range maxConns {
		post(initBody, nil)
	}
	if got := post(initBody, nil); got != http.StatusServiceUnavailable {
		t.Errorf("session past the cap: status %d, want 503", got)
	}
}

// Abuse: another user reaches the stdio socket. Its directory is private
// and gone after the scenario.
func TestSocketIsPrivate(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := listenStdio(ctx, testWorld(t, "duplicate-reply"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm != 0o700 {
		t.Errorf("socket directory mode %o, want 700", perm)
	}
	s.close()
	if _, err := os.Stat(s.dir); !os.IsNotExist(err) {
		t.Errorf("socket directory left behind: %v", err)
	}
}

// Abuse: a peer floods the socket with more connections than the cap, or
// a line over the cap: the scenario serves the cap, and skips the line.
func TestSocketCaps(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := testWorld(t, "duplicate-reply")
	s, err := listenStdio(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	var conns []net.Conn
	for range maxConns + 4 {
		c, err := net.Dial("unix", s.path)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	go func() {
		_, _ = conns[0].Write(append(bytes.Repeat([]byte("a"), maxFrame+10), '\n'))
		_, _ = conns[0].Write([]byte(initBody + "\n"))
	}()
	_ = conns[0].SetReadDeadline(time.Now().Add(20 * time.Second))
	line, err := bufio.NewReader(conns[0]).ReadString('\n')
	if err != nil || !strings.Contains(line, `"protocolVersion"`) {
		t.Fatalf("after an oversize line: %q, %v", line, err)
	}
	// The connections past the cap are closed at once.
	_ = conns[maxConns].SetReadDeadline(time.Now().Add(20 * time.Second))
	if n, err := conns[maxConns].Read(make([]byte, 1)); n != 0 || err == nil || os.IsTimeout(err) {
		t.Fatalf("a connection past the cap: %d bytes, %v", n, err)
	}
	opens := 0
	for _, e := range w.snapshot().events {
		if e.kind == "open" {
			opens++
		}
	}
	if opens != maxConns {
		t.Errorf("%d connections served, want %d", opens, maxConns)
	}
}

// Abuse: the client's report lines. A line over the cap is skipped and
// the reader goes on; a line that is not a report is ignored; markers are
// found wherever they are.
func TestReadReport(t *testing.T) {
	in := strings.Join([]string{
		`not json`,
		`{"call":"lookup","outcome":"ok","value":{"answer":"mcpdrill-truth-1"}}`,
		`{"call":"lookup","outcome":"maybe"}`,
		`{"call":"record","outcome":"error","error":"` + strings.Repeat("x", 100) + ` mcpdrill-lie-2"}`,
		`{"call":"lookup","step":1,"outcome":"timeout"}`,
	}, "\n")
	recs := readAll(t, strings.NewReader(in), []string{"mcpdrill-truth-1", "mcpdrill-lie-2"})
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3: %+v", len(recs), recs)
	}
	if recs[0].step != 0 || !recs[0].found["mcpdrill-truth-1"] || recs[1].step != 1 || !recs[1].found["mcpdrill-lie-2"] ||
		recs[2].step != 0 || recs[2].outcome != appTimeout {
		t.Errorf("records %+v", recs)
	}
}

func readAll(t *testing.T, r io.Reader, marks []string) []record {
	t.Helper()
	ch := make(chan record, maxRecords+1)
	if err := readReport(r, marks, ch); err != nil {
		t.Fatal(err)
	}
	var out []record
	for r := range ch {
		out = append(out, r)
	}
	return out
}

func TestReadReportSkipsOversizeLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 32 MiB line")
	}
	big := `{"call":"lookup","outcome":"ok","value":"` + strings.Repeat("a", maxLine) + `"}`
	recs := readAll(t, strings.NewReader(big+"\n"+`{"call":"lookup","outcome":"error"}`+"\n"), nil)
	if len(recs) != 1 || recs[0].outcome != appError {
		t.Fatalf("records %+v, want only the line after the oversize one", recs)
	}
}

func FuzzParseLine(f *testing.F) {
	for _, s := range []string{`{"call":"a","outcome":"ok","value":1}`, `{"call":"a","step":-3,"outcome":"error"}`, `{`, `[]`, `{"call":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, ok := parseLine(b, []string{"m"})
		if ok && (r.call == "" || (r.outcome != appOK && r.outcome != appError && r.outcome != appTimeout)) {
			t.Fatalf("accepted %q as %+v", b, r)
		}
	})
}

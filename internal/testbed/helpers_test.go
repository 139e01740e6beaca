package testbed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

func TestMain(m *testing.M) {
	if code, ok := ServeChild(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// waitReply bounds a wait for a reply the test expects: only a hang
// reaches it.
const waitReply = testutil.Hang

// stdioPeer drives ServeStdio over pipes.
type stdioPeer struct {
	t     *testing.T
	in    *io.PipeWriter
	outR  *io.PipeReader
	lines chan []byte
	done  chan error
}

func startStdio(t *testing.T, o Options) *stdioPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioPeer{t: t, in: inW, outR: outR, lines: make(chan []byte, 1024), done: make(chan error, 1)}
	go func() {
		err := ServeStdio(context.Background(), o, inR, outW, io.Discard)
		outW.Close()
		p.done <- err
	}()
	go func() {
		lr := jsonrpc.NewLineReader(outR, 256<<20)
		for {
			line, err := lr.ReadLine()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					p.lines <- []byte("READ ERROR: " + err.Error())
				}
				close(p.lines)
				return
			}
			p.lines <- append([]byte(nil), line...)
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
	})
	return p
}

func (p *stdioPeer) send(lines ...string) {
	p.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(p.in, l+"\n"); err != nil {
			p.t.Fatalf("write: %v", err)
		}
	}
}

// recv returns the next line the server wrote.
func (p *stdioPeer) recv() []byte {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatal("server closed stdout")
		}
		return l
	case <-time.After(waitReply):
		p.t.Fatal("no reply in time")
	}
	return nil
}

// frame returns the next line, decoded.
func (p *stdioPeer) frame() map[string]any {
	p.t.Helper()
	return decode(p.t, p.recv())
}

// close ends stdin and returns ServeStdio's error.
func (p *stdioPeer) close() error {
	p.t.Helper()
	p.in.Close()
	go func() {
		for range p.lines {
		}
	}()
	select {
	case err := <-p.done:
		return err
	case <-time.After(waitReply):
		p.t.Fatal("ServeStdio did not return")
	}
	return nil
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("reply is not a JSON object: %v: %.200s", err, b)
	}
	return m
}

// ---- frame builders ----

func req(id any, method string, params map[string]any) string {
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func notif(method string, params map[string]any) string {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func meta(rev string) map[string]any {
	return map[string]any{metaVersion: rev, metaCapabilities: map[string]any{}, "io.modelcontextprotocol/clientInfo": map[string]any{"name": "t", "version": "0"}}
}

// mreq is a 2026-07-28 request: params plus the per-request _meta.
func mreq(id any, method string, params map[string]any) string {
	return mreqRev(id, method, params, Rev20260728)
}

func mreqRev(id any, method string, params map[string]any, rev string) string {
	p := map[string]any{"_meta": meta(rev)}
	for k, v := range params {
		p[k] = v
	}
	return req(id, method, p)
}

func initReq(id any, rev string) string {
	return req(id, "initialize", map[string]any{"protocolVersion": rev, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "t", "version": "0"}})
}

func call(name string, args any) map[string]any {
	return map[string]any{"name": name, "arguments": args}
}

// ---- expectations ----

// get walks a dotted path ("result.tools.0.name") through decoded JSON.
func get(v any, path string) (any, bool) {
	if path == "" {
		return v, true
	}
	switch x := v.(type) {
	case map[string]any:
		// Keys may contain dots ("io.modelcontextprotocol/serverInfo"):
		// take the longest key that starts the path.
		best := ""
		for k := range x {
			if (path == k || strings.HasPrefix(path, k+".")) && len(k) > len(best) {
				best = k
			}
		}
		if best == "" {
			return nil, false
		}
		return get(x[best], strings.TrimPrefix(strings.TrimPrefix(path, best), "."))
	case []any:
		k, rest, _ := strings.Cut(path, ".")
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || i >= len(x) {
			return nil, false
		}
		return get(x[i], rest)
	}
	return nil, false
}

// want describes one expected reply frame.
type want struct {
	id   any            // expected id (nil: JSON null)
	code int            // expected error code; 0 expects a result
	eq   map[string]any // path (from the frame) -> value
	has  []string       // paths that must exist
	not  []string       // paths that must not exist
}

func (w want) check(t *testing.T, f map[string]any) {
	t.Helper()
	if got, want := norm(f["id"]), norm(w.id); !reflect.DeepEqual(got, want) {
		t.Errorf("id = %v, want %v in %s", f["id"], w.id, short(f))
	}
	if w.code != 0 {
		code, _ := get(f, "error.code")
		if code != float64(w.code) {
			t.Errorf("error code = %v, want %d in %s", code, w.code, short(f))
		}
	} else if _, ok := f["result"]; !ok {
		t.Errorf("want a result, got %s", short(f))
	}
	for p, v := range w.eq {
		got, ok := get(f, p)
		if !ok || !reflect.DeepEqual(norm(got), norm(v)) {
			t.Errorf("%s = %v, want %v in %s", p, got, v, short(f))
		}
	}
	for _, p := range w.has {
		if _, ok := get(f, p); !ok {
			t.Errorf("%s missing in %s", p, short(f))
		}
	}
	for _, p := range w.not {
		if v, ok := get(f, p); ok {
			t.Errorf("%s = %v, want absent in %s", p, v, short(f))
		}
	}
}

// norm makes Go values comparable with decoded JSON.
func norm(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 600 {
		return fmt.Sprintf("%s…(%d bytes)", b[:600], len(b))
	}
	return string(b)
}

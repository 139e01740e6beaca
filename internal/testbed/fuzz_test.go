package testbed

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// fuzzProfiles are the profiles whose every reply must be valid JSON (the
// hostile I/O profiles misbehave by design; deep-schema exceeds the
// nesting encoding/json accepts).
var fuzzProfiles = []string{"good", "sloppy-errors", "drifting", "modern", "legacy", "vacuous", "bad-schema", "ref-cycle", "cursor-loop"}

func fuzzSeeds(f *testing.F) {
	for _, s := range []string{
		mreq(1, "server/discover", nil),
		initReq(1, Rev20250618) + "\n" + req(2, "tools/list", nil) + "\n" + req(3, "tools/call", call("echo", echoArgs)),
		mreq(1, "tools/call", call("search", map[string]any{"query": "mcp", "limit": 3})),
		mreq(1, "tools/call", call("weather", map[string]any{"city": "Oslo"})),
		mreq(1, "tools/list", map[string]any{"cursor": p2cursor}),
		mreq("L", "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}}),
		`{"jsonrpc":"2.0","id":1,`, `[]`, `{"jsonrpc":"2.0","id":{},"method":"x"}`, "\x00\xff",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1e308,"b":1e308}}}`,
	} {
		f.Add(byte(0), s)
	}
}

func FuzzServeStdio(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, pick byte, in string) {
		o := Options{Profile: fuzzProfiles[int(pick)%len(fuzzProfiles)], DriftAfter: 1}
		var out bytes.Buffer
		if err := ServeStdio(t.Context(), o, strings.NewReader(in), &out, io.Discard); err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n")) {
			if len(line) == 0 && out.Len() == 0 {
				continue
			}
			if !json.Valid(line) {
				t.Fatalf("invalid JSON reply %q", line)
			}
			if p, err := jsonrpc.PeekFrame(line); err != nil || p.Kind == jsonrpc.KindInvalid {
				t.Fatalf("not a JSON-RPC frame %q: %v", line, err)
			}
		}
	})
}

func FuzzHandler(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, pick byte, body string) {
		o := Options{Profile: fuzzProfiles[int(pick)%len(fuzzProfiles)]}
		h, err := NewHandler(o)
		if err != nil {
			t.Fatal(err)
		}
		method := "tools/list"
		if p, err := jsonrpc.PeekFrame([]byte(body)); err == nil && p.Method != "" {
			method = p.Method
		}
		r := httptest.NewRequest(http.MethodPost, PathMCP, strings.NewReader(body))
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("MCP-Protocol-Version", Rev20260728)
		r.Header.Set("Mcp-Method", method)
		w := httptest.NewRecorder()
		if strings.Contains(body, "subscriptions/listen") {
			return // holds the stream open until the client leaves
		}
		h.ServeHTTP(w, r)
		b := w.Body.Bytes()
		switch ct := w.Header().Get("Content-Type"); {
		case strings.HasPrefix(ct, "text/event-stream"):
			sr := jsonrpc.NewSSEReader(bytes.NewReader(b), 0)
			for {
				ev, err := sr.Next()
				if err != nil {
					break
				}
				if !json.Valid(ev.Data) {
					t.Fatalf("invalid SSE data %q", ev.Data)
				}
			}
		case strings.HasPrefix(ct, "application/json"):
			if !json.Valid(b) {
				t.Fatalf("invalid JSON body %q", b)
			}
		}
	})
}

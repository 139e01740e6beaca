package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// pagesOver is a RoundTripper answering tools/list with pages[i] for the
// i-th request (reply builds the frame from the request's id and the
// page), recording the requests.
func pagesOver(pages []string, reply func(id json.RawMessage, page string) string, sent *[]*jsonrpc.Message) RoundTripper {
	return func(_ context.Context, frame []byte) ([]byte, error) {
		m, err := jsonrpc.Decode(frame)
		if err != nil {
			return nil, err
		}
		*sent = append(*sent, m)
		i := len(*sent) - 1
		if i >= len(pages) {
			return nil, fmt.Errorf("request %d past the %d pages", i+1, len(pages))
		}
		return []byte(reply(m.ID, pages[i])), nil
	}
}

func answer(id json.RawMessage, page string) string {
	return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + page + `}`
}

// TestListToolsOver: a client over an injected round-tripper pages with
// ids of its prefix and the given _meta, and its listing says what a
// guard must refuse: a loop, a cap, a name listed twice, an ambiguous
// member; a reply that is not the answer, read strictly, fails the call.
func TestListToolsOver(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pages []string
		reply func(json.RawMessage, string) string
		err   string // a substring of the error ("": none)
		check func(ToolList) bool
	}{
		{name: "two pages", pages: []string{`{"tools":[{"name":"a"}],"nextCursor":"c1"}`, `{"tools":[{"name":"b"}]}`},
			check: func(l ToolList) bool {
				return l.Complete() && len(l.Tools) == 2 && l.Duplicate == "" && l.Ambiguity == "" &&
					l.Tools[0].Page == 0 && l.Tools[1].Page == 1
			}},
		{name: "cursor loop", pages: []string{`{"tools":[{"name":"a"}],"nextCursor":"c1"}`, `{"tools":[{"name":"b"}],"nextCursor":"c1"}`},
			check: func(l ToolList) bool { return l.CursorLoop && l.Pages == 2 }},
		{name: "page cap", pages: []string{`{"tools":[],"nextCursor":"c1"}`, `{"tools":[],"nextCursor":"c2"}`, `{"tools":[],"nextCursor":"c3"}`},
			check: func(l ToolList) bool { return l.Capped && !l.ToolsCapped && l.Pages == 3 }},
		{name: "listed twice across pages", pages: []string{`{"tools":[{"name":"a"}],"nextCursor":"c1"}`, `{"tools":[{"name":"a"}]}`},
			check: func(l ToolList) bool { return l.Duplicate == "a" }},
		{name: "case-variant member", pages: []string{`{"tools":[{"name":"a","Name":"b"}]}`},
			check: func(l ToolList) bool { return strings.Contains(l.Ambiguity, `page 1: tool 0 repeats member "Name"`) }},
		{name: "repeated schema member", pages: []string{`{"tools":[{"name":"a","inputSchema":{"type":"object","type":"string"}}]}`},
			check: func(l ToolList) bool { return strings.Contains(l.Ambiguity, "inputSchema of tool 0") }},
		{name: "another id", pages: []string{`{"tools":[]}`}, err: "not the answer",
			reply: func(_ json.RawMessage, p string) string { return answer(json.RawMessage(`"other"`), p) }},
		{name: "ambiguous envelope", pages: []string{`{"tools":[]}`}, err: "repeats a member name",
			reply: func(id json.RawMessage, p string) string {
				return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + p + `,"result":{"tools":[{"name":"x"}]}}`
			}},
		{name: "a batch", pages: []string{`{"tools":[]}`}, err: "not the answer",
			reply: func(id json.RawMessage, p string) string { return "[" + answer(id, p) + "]" }},
		{name: "an error reply", pages: []string{`{}`}, err: "boom",
			reply: func(id json.RawMessage, _ string) string {
				return `{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32603,"message":"boom"}}`
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reply := tc.reply
			if reply == nil {
				reply = answer
			}
			var sent []*jsonrpc.Message
			c := NewClientOver(pagesOver(tc.pages, reply, &sent), Config{IDPrefix: "own-", MaxListPages: 3})
			l, err := c.ListToolsMeta(t.Context(), json.RawMessage(`{"progressToken":"p"}`))
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want one saying %q", err, tc.err)
			case tc.err == "" && err != nil:
				t.Fatal(err)
			case tc.check != nil && !tc.check(l):
				t.Fatalf("listing %+v", l)
			}
			for i, m := range sent {
				var p struct {
					Meta   json.RawMessage `json:"_meta"`
					Cursor *string         `json:"cursor"`
				}
				_ = json.Unmarshal(m.Params, &p)
				if !strings.HasPrefix(string(m.ID), `"own-`) || string(p.Meta) != `{"progressToken":"p"}` || (p.Cursor != nil) != (i > 0) {
					t.Errorf("request %d: %s", i+1, m.Raw)
				}
			}
		})
	}
}

// TestPostRoundTripper: one POST with the session's headers, its answer
// read from a JSON body, an SSE event, or a batch in either.
func TestPostRoundTripper(t *testing.T) {
	const frame = `{"jsonrpc":"2.0","id":"own-1","method":"tools/list"}`
	want := `{"jsonrpc":"2.0","id":"own-1","result":{"tools":[]}}`
	for _, tc := range []struct {
		name, ctype, body string
		modern            bool
	}{
		{"json", "application/json", want, false},
		{"json batch", "application/json", `[{"jsonrpc":"2.0","id":7,"result":{}},` + want + `]`, false},
		{"sse", "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\ndata: " + want + "\n\n", true},
		{"sse batch", "text/event-stream", "data: [{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}," + want + "]\n\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer k" || r.Header.Get(HeaderSessionID) != "s1" {
					http.Error(w, "no session", http.StatusUnauthorized)
					return
				}
				if tc.modern && r.Header.Get(HeaderMethod) != "tools/list" {
					http.Error(w, "Mcp-Method "+r.Header.Get(HeaderMethod), http.StatusBadRequest)
					return
				}
				w.Header().Set("Content-Type", tc.ctype)
				fmt.Fprint(w, tc.body)
			}))
			defer srv.Close()
			hdr := http.Header{"Authorization": {"Bearer k"}, HeaderSessionID: {"s1"}}
			if tc.modern {
				hdr.Set(HeaderMethod, "tools/call") // the client's last request
			}
			rt, err := PostRoundTripper(srv.Client(), srv.URL, hdr, 0)
			if err != nil {
				t.Fatal(err)
			}
			b, err := rt(t.Context(), []byte(frame))
			if err != nil || string(b) != want {
				t.Fatalf("answer %s, %v; want %s", b, err, want)
			}
		})
	}
}

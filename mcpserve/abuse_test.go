package mcpserve

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/hostile"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// The abuse list of doc.go, one test each: the model controls every
// argument.

// TestAbuseConfigPathIsNotAFileToRead: a config argument that is not one
// of the readable configurations is refused without being opened: a FIFO
// there would block the first read, and /etc/passwd's text never shows.
func TestAbuseConfigPathIsNotAFileToRead(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "mcp.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	s := start(t, Options{Targets: &Targets{Home: home(t, map[string]any{"a": child("touch", nil)})}})
	s.init("2025-06-18")
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"scan", map[string]any{"target": "a", "config": fifo}},
		{"fingerprint", map[string]any{"target": "a", "config": "/etc/passwd"}},
		{"servers", map[string]any{"config": fifo}},
		{"drift", map[string]any{"target": "a", "config": "../../../../etc/shadow", "manifest": map[string]any{"tools": []any{}}}},
	} {
		r := s.tool(call.tool, call.args)
		if !r.IsError || !strings.Contains(r.text(), "not one of the configurations") || strings.Contains(r.text(), "root:") {
			t.Errorf("%s %v: %+v", call.tool, call.args, r)
		}
	}
}

// TestAbuseServerNameRunsNothingElse: only a name in a readable
// configuration starts anything; a command line given as a name, or a
// server of a workspace file the user did not trust, starts nothing.
func TestAbuseServerNameRunsNothingElse(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	dir := t.TempDir()
	proof := filepath.Join(dir, "started")
	ws := filepath.Join(dir, "repo")
	writeJSON(t, filepath.Join(ws, ".vscode", "mcp.json"), map[string]any{"servers": map[string]any{
		"ws": child("touch", map[string]string{"MCPSERVE_TOUCH": proof})}})
	h := home(t, map[string]any{"mine": child("testbed", nil)})
	for _, name := range []string{"touch " + proof, "sh -c 'touch " + proof + "'", "ws", "../ws", "mine; touch " + proof} {
		s := start(t, Options{Targets: &Targets{Home: h, Workspace: ws}})
		s.init("2025-06-18")
		r := s.tool("scan", map[string]any{"target": name})
		if !r.IsError || !strings.Contains(r.text(), "no server named") {
			t.Errorf("target %q: %+v", name, r)
		}
	}
	if _, err := os.Stat(proof); err == nil {
		t.Fatal("a server was started")
	}
	// Trusted, the workspace's server is the user's: it starts by name.
	s := start(t, Options{Targets: &Targets{Home: h, Workspace: ws, TrustWorkspace: true}})
	s.init("2025-06-18")
	if r := s.tool("scan", map[string]any{"target": "ws"}); r.IsError {
		t.Fatalf("trusted workspace: %s", r.text())
	}
	if _, err := os.Stat(proof); err != nil {
		t.Errorf("the trusted workspace's server did not start: %v", err)
	}
	// Files named at start replace discovery: the home's servers are gone.
	s = start(t, Options{Targets: &Targets{Home: h, Files: []string{filepath.Join(ws, ".vscode", "mcp.json")}}})
	s.init("2025-06-18")
	if r := s.tool("fingerprint", map[string]any{"target": "mine"}); !r.IsError {
		t.Errorf("a server outside --config was used: %s", r.text())
	}
}

// TestAbuseEntriesThatNeedTheUser: an entry that needs a value the user
// types (${input:ID}) or that the user disabled is not used, and the
// servers tool says why.
func TestAbuseEntriesThatNeedTheUser(t *testing.T) {
	input := child("touch", nil)
	input["args"] = []string{"${input:token}"}
	disabled := child("touch", nil)
	disabled["disabled"] = true
	s := start(t, Options{Targets: &Targets{Home: home(t, map[string]any{"input": input, "off": disabled})}})
	s.init("2025-06-18")
	if r := s.tool("scan", map[string]any{"target": "input"}); !r.IsError || !strings.Contains(r.text(), `input "token" has no value`) {
		t.Errorf("input: %s", r.text())
	}
	if r := s.tool("scan", map[string]any{"target": "off"}); !r.IsError || !strings.Contains(r.text(), "disabled") {
		t.Errorf("disabled: %s", r.text())
	}
	var out serversOut
	if r := s.tool("servers", nil); r.IsError || json.Unmarshal(r.Structured, &out) != nil || len(out.Servers) != 2 {
		t.Fatalf("servers: %s", r.text())
	}
	for _, e := range out.Servers {
		if e.Usable || e.Note == "" {
			t.Errorf("servers: %+v", e)
		}
	}
}

// TestAbuseURLs: a URL with credentials is refused; a loopback server is
// not dialled unless its origin was allowed at start (by IP or by a name
// that resolves to it); other schemes are refused.
func TestAbuseURLs(t *testing.T) {
	if testing.Short() {
		t.Skip("scans a server")
	}
	h, err := testbed.NewHandler(testbed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	scanOf := func(s *session, target string) scanOut {
		t.Helper()
		r := s.tool("scan", map[string]any{"target": target})
		if r.IsError {
			t.Fatalf("%s: %s", target, r.text())
		}
		var out scanOut
		if err := json.Unmarshal(r.Structured, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	s := start(t, Options{Targets: &Targets{Home: t.TempDir()}})
	s.init("2025-06-18")
	for _, target := range []string{"http://user:secret@127.0.0.1:" + port + "/mcp", "file:///etc/passwd", "ftp://127.0.0.1/"} {
		if r := s.tool("scan", map[string]any{"target": target}); !r.IsError || strings.Contains(r.text(), "secret") {
			t.Errorf("%s: %+v", target, r)
		}
	}
	if r := s.tool("scan", map[string]any{"target": srv.URL + testbed.PathMCP, "config": "x.json"}); !r.IsError {
		t.Errorf("a URL with config: %+v", r)
	}
	for _, target := range []string{srv.URL + testbed.PathMCP, "http://localhost:" + port + testbed.PathMCP} {
		out := scanOf(s, target)
		if out.Established {
			t.Errorf("%s: scanned without --allow-url", target)
		}
		if !strings.Contains(string(mustJSON(t, out.Findings)), "loopback") {
			t.Errorf("%s: the findings do not say why: %+v", target, out.Findings)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback server got %d request(s) it was not allowed", n)
	}
	allowed := start(t, Options{Targets: &Targets{Home: t.TempDir(), AllowURLs: []string{srv.URL}}})
	allowed.init("2025-06-18")
	if out := scanOf(allowed, srv.URL+testbed.PathMCP+"?key=s3cr3t"); !out.Established || strings.Contains(out.Target.Name, "s3cr3t") {
		t.Errorf("allowed origin: %+v", out)
	}
	if hits.Load() == 0 {
		t.Error("the allowed server got no request")
	}
}

// TestAddressRule: which addresses a URL target may dial.
func TestAddressRule(t *testing.T) {
	for _, tc := range []struct {
		ip             string
		public, allowd string // refusal without and with --allow-url
	}{
		{"169.254.169.254", "link-local", "link-local"},
		{"fe80::1", "link-local", "link-local"},
		{"224.0.0.1", "link-local", "link-local"},
		{"239.1.2.3", "multicast", "multicast"},
		{"0.0.0.0", "unspecified", "unspecified"},
		{"::", "unspecified", "unspecified"},
		{"127.0.0.1", "loopback", ""},
		{"::ffff:127.0.0.1", "loopback", ""},
		{"::1", "loopback", ""},
		{"10.1.2.3", "private", ""},
		{"192.168.1.1", "private", ""},
		{"fd00::1", "private", ""},
		{"100.64.0.1", "private", ""},
		{"8.8.8.8", "", ""},
		{"2001:4860:4860::8888", "", ""},
	} {
		ip := netip.MustParseAddr(tc.ip)
		if got := addressRefused(ip, false); got != tc.public {
			t.Errorf("%s: %q, want %q", tc.ip, got, tc.public)
		}
		if got := addressRefused(ip, true); got != tc.allowd {
			t.Errorf("%s allowed: %q, want %q", tc.ip, got, tc.allowd)
		}
	}
}

// TestAbuseHugeOutputs: a server with 1,000 tools gets a result of at most
// 200 tools (500 fingerprints) that says how many it left out; a message
// over the size cap is refused and the session goes on.
func TestAbuseHugeOutputs(t *testing.T) {
	if testing.Short() {
		t.Skip("scans a server")
	}
	s := start(t, Options{Targets: &Targets{Home: home(t, map[string]any{"big": child("hostile", map[string]string{"MCPSERVE_TOOLS": "1000"})})}})
	s.init("2025-06-18")
	r := s.tool("scan", map[string]any{"target": "big"})
	var sc scanOut
	if r.IsError || json.Unmarshal(r.Structured, &sc) != nil {
		t.Fatalf("scan: %s", r.text())
	}
	if len(sc.Tools) != maxScanTools || sc.ToolsOmitted != 1000-maxScanTools || len(sc.Findings) > maxFindings {
		t.Errorf("scan: %d tools, %d omitted, %d findings", len(sc.Tools), sc.ToolsOmitted, len(sc.Findings))
	}
	if total := sc.Counts.Error + sc.Counts.Warn + sc.Counts.Info; total != len(sc.Findings)+sc.FindingsOmitted {
		t.Errorf("counts %+v, %d listed + %d omitted", sc.Counts, len(sc.Findings), sc.FindingsOmitted)
	}
	var fp fingerprintOut
	if r := s.tool("fingerprint", map[string]any{"target": "big"}); r.IsError || json.Unmarshal(r.Structured, &fp) != nil {
		t.Fatalf("fingerprint: %s", r.text())
	}
	if len(fp.Tools) != maxFingerprintTools || fp.ToolsOmitted != 500 || fp.ToolCount != 1000 {
		t.Errorf("fingerprint: %d tools, %d omitted of %d", len(fp.Tools), fp.ToolsOmitted, fp.ToolCount)
	}
	s.sendRaw(`{"jsonrpc":"2.0","id":"big","method":"tools/list","params":{"pad":"` + strings.Repeat("x", maxLineBytes) + `"}}`)
	if m := s.read(); m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidRequest {
		t.Errorf("an oversized message: %s %v", m.Raw, m.Error)
	}
	if m := s.call("ping", nil); m.Error != nil {
		t.Errorf("after an oversized message: %v", m.Error)
	}
}

// TestAbuseServerTextIsData: what a hostile server says (terminal escapes,
// a right-to-left override, invisible tag characters, an instruction to
// the model, the secret it was started with) reaches the model escaped,
// cut and masked, and only as string values of the structured result.
func TestAbuseServerTextIsData(t *testing.T) {
	if testing.Short() {
		t.Skip("scans a server")
	}
	const secret = "sk-live-0123456789abcdef"
	s := start(t, Options{Targets: &Targets{Home: home(t, map[string]any{"evil": child("hostile",
		map[string]string{"MCPSERVE_TOOLS": "3", "MCPSERVE_SECRET": secret})})}})
	s.init("2025-06-18")
	for _, call := range []string{"scan", "fingerprint"} {
		r := s.tool(call, map[string]any{"target": "evil"})
		if r.IsError {
			t.Fatalf("%s: %s", call, r.text())
		}
		if strings.Contains(r.text(), secret) || strings.ContainsAny(r.text(), "\x1b\x07\u202e\U000E0068") {
			t.Errorf("%s: the result carries the secret or a raw control character:\n%s", call, r.text())
		}
		v, err := jsonvalue.DecodeJSON(r.Structured)
		if err != nil {
			t.Fatal(err)
		}
		var strs []string
		walkStrings(v, &strs)
		seen := false
		for _, str := range strs {
			for _, c := range str {
				if !strconv.IsGraphic(c) {
					t.Errorf("%s: %q holds %U", call, str, c)
				}
			}
			if n := utf8.RuneCountInString(str); n > 10*messageLimit+1 {
				t.Errorf("%s: a string of %d runes", call, n)
			}
			seen = seen || strings.Contains(str, `\x1b]52`)
		}
		if !seen {
			t.Errorf("%s: the server's name is not in the result, escaped: %s", call, r.text())
		}
	}
	m := s.call("tools/list", nil)
	if !strings.Contains(string(m.Result), "untrusted") {
		t.Error("no tool description says results are untrusted")
	}
}

// TestAbuseHostileCorpus: the project's hostile corpus (terminal escapes,
// workflow commands, bidi overrides, NUL, text that is not UTF-8) in a
// server's name, tool names, error messages and stderr reaches no result
// as it is: over HTTP (scan, fingerprint, drift, whose findings quote tool
// names) and over stdio from a server that dies saying it on stderr.
func TestAbuseHostileCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("scans a server")
	}
	srv := httptest.NewServer(hostile.Handler())
	t.Cleanup(srv.Close)
	crash := map[string]any{"command": os.Args[0], "env": map[string]string{hostile.EnvChild: "crash"}}
	s := start(t, Options{Targets: &Targets{Home: home(t, map[string]any{"dying": crash}), AllowURLs: []string{srv.URL}}})
	s.init("2025-06-18")
	manifest := map[string]any{"tools": []any{map[string]any{"name": hostile.ToolName(0) + "-gone", "inputSchema": map[string]any{"type": "object"}}}}
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"scan", map[string]any{"target": srv.URL}},
		{"fingerprint", map[string]any{"target": srv.URL}},
		{"drift", map[string]any{"target": srv.URL, "manifest": manifest}},
		{"scan", map[string]any{"target": "dying"}},
	} {
		r := s.tool(call.tool, call.args)
		if r.IsError {
			t.Fatalf("%s %v: %s", call.tool, call.args["target"], r.text())
		}
		v, err := jsonvalue.DecodeJSON(r.Structured)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.text(), `\\x`) {
			t.Errorf("%s %v: the corpus did not reach the result, escaped: %s", call.tool, call.args["target"], r.text())
		}
		var strs []string
		walkStrings(v, &strs)
		for _, str := range strs {
			for _, m := range hostile.Markers {
				if strings.Contains(str, m) {
					t.Errorf("%s %v: %q holds %q", call.tool, call.args["target"], str, m)
				}
			}
		}
	}
}

func walkStrings(v any, out *[]string) {
	switch x := v.(type) {
	case string:
		*out = append(*out, x)
	case map[string]any:
		for _, e := range x {
			walkStrings(e, out)
		}
	case []any:
		for _, e := range x {
			walkStrings(e, out)
		}
	}
}

// TestAbuseCancelledCall: notifications/cancelled stops a running call (a
// scan of a server that never answers), which then gets no answer.
func TestAbuseCancelledCall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	s := start(t, Options{Targets: &Targets{Home: home(t, map[string]any{"hang": child("testbed", map[string]string{"MCPSERVE_PROFILE": "hang"})})}})
	s.init("2025-06-18")
	s.send(map[string]any{"jsonrpc": "2.0", "id": "long", "method": "tools/call", "params": map[string]any{"name": "scan", "arguments": map[string]any{"target": "hang"}}})
	s.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": "long"}})
	for range 3 {
		if m := s.call("ping", nil); m.Error != nil {
			t.Fatal(m.Error)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

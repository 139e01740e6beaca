// Package hostile is an MCP server whose every word is hostile text: its
// serverInfo, its tool names and descriptions, its error messages and its
// stderr carry terminal escapes, GitHub Actions workflow commands, Markdown
// and HTML (Strings). Tests run it through every command and output format
// to check that what a server says reaches a terminal, a CI log or a page
// only made safe (internal/safetext).
//
// It speaks the 2025-06-18 revision (initialize handshake; server/discover
// is an unknown method) over Streamable HTTP with JSON replies and no
// sessions (Handler), and over stdio when a test binary is re-executed
// with EnvChild set (ServeChild).
package hostile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
)

// Strings is the corpus: terminal escapes (OSC 52 clipboard write, clear
// screen, OSC 8 hyperlink, CSI as a C1 control), line rewriting (CR,
// backspace), bidirectional overrides, NUL, DEL, GitHub Actions workflow
// commands (both prefixes, at the start of the text and after a line
// break), Markdown links and images, raw HTML, autolinks and text that is
// not UTF-8.
var Strings = []string{
	"\x1b]52;c;cHduZWQ=\x07",
	"\x1b[2J\x1b[H",
	"\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
	"\u009b31m",
	"ok\rREWRITTEN",
	"abc\b\b\bxyz",
	"\u202etxt.exe",
	"a\u2066b\u2069c",
	"nul\x00here",
	"del\x7f",
	"::error::pwned",
	"  ::add-mask::secret",
	"::set-output name=x::y",
	"line\n::warning::second",
	"##[error]old style",
	"[click](https://evil.example/)",
	"![img](https://evil.example/t.png)",
	"<img src=x onerror=alert(1)>",
	"<script>alert(1)</script>",
	"www.evil.example",
	"me@evil.example",
	"\xff\xfe not utf-8",
}

// Markers are parts of Strings that must never reach an output as they are
// (each is what makes its string dangerous), for a test to look for.
var Markers = []string{"\x1b", "\a", "\u009b", "\r", "\b", "\u202e", "\u2066", "\x00", "\x7f", "##[", "\xff"}

// Version is serverInfo.version.
var Version = Strings[10]

// Name is serverInfo.name: the whole corpus, joined.
func Name() string { return strings.Join(Strings, " ") }

// Revision is the protocol revision the server speaks.
const Revision = "2025-06-18"

// Tools are the server's tools: one per string of the corpus, named after
// it and described by it, with one required string argument "q" and an
// outputSchema that accepts any object (a finding names each tool).
func Tools() []map[string]any {
	out := make([]map[string]any, len(Strings))
	for i, s := range Strings {
		out[i] = map[string]any{
			"name":        ToolName(i),
			"description": s,
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
				"q": map[string]any{"type": "string", "description": s}}, "required": []string{"q"}},
			"outputSchema": map[string]any{"type": "object"},
		}
	}
	return out
}

// ToolName is the name of tool i.
func ToolName(i int) string { return fmt.Sprintf("t%02d%s", i, Strings[i]) }

// request is a JSON-RPC request or notification.
type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// Reply answers one JSON-RPC message; nil for a notification.
func Reply(msg []byte) []byte {
	var req request
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 || msg[0] != '{' || json.Unmarshal(msg, &req) != nil {
		return encode(nil, nil, &rpcError{-32700, "parse error: " + Name()})
	}
	if len(req.ID) == 0 {
		return nil
	}
	var p struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Name            string          `json:"name"`
		Arguments       json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(req.Params, &p) // absent or odd params are empty ones
	switch req.Method {
	case "initialize":
		v := p.ProtocolVersion
		if !slices.Contains([]string{Revision, "2025-03-26", "2024-11-05"}, v) {
			v = Revision
		}
		return encode(req.ID, map[string]any{"protocolVersion": v, "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]any{"name": Name(), "version": Version, "title": Strings[15]}, "instructions": Name()}, nil)
	case "ping":
		return encode(req.ID, map[string]any{}, nil)
	case "tools/list":
		return encode(req.ID, map[string]any{"tools": Tools()}, nil)
	case "tools/call":
		i := -1
		for j := range Strings {
			if ToolName(j) == p.Name {
				i = j
			}
		}
		if i < 0 {
			return encode(req.ID, nil, &rpcError{-32602, "unknown tool " + p.Name + ": " + Name()})
		}
		var args map[string]any
		if json.Unmarshal(p.Arguments, &args) != nil || args["q"] == nil {
			return encode(req.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": Strings[i]}}, "isError": true}, nil)
		}
		return encode(req.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": Strings[i]}},
			"structuredContent": map[string]any{"said": Strings[i]}}, nil)
	}
	return encode(req.ID, nil, &rpcError{-32601, "method not found: " + req.Method + ": " + Name()})
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func encode(id json.RawMessage, result any, e *rpcError) []byte {
	m := map[string]any{"jsonrpc": "2.0", "id": id}
	if id == nil {
		m["id"] = nil
	}
	if e != nil {
		m["error"] = e
	} else {
		m["result"] = result
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// Handler serves the server over Streamable HTTP: POST answers with JSON
// (202 for a notification), GET and DELETE are 405.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		out := Reply(body)
		if out == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out) // an error: the client hung up
	})
}

// EnvChild is set in the environment of a test binary re-executed as the
// stdio server: "serve" serves, "crash" writes the corpus on stderr and
// exits 1 before the handshake.
const EnvChild = "MCPDRILL_HOSTILE_CHILD"

// ServeChild serves stdio when the process was started with EnvChild set
// and reports the exit code the process should end with; ok is false, and
// nothing happens, in an ordinary process. It writes the corpus on stderr
// first, one string a line.
func ServeChild() (code int, ok bool) {
	mode := os.Getenv(EnvChild)
	if mode == "" {
		return 0, false
	}
	for _, s := range Strings {
		fmt.Fprintln(os.Stderr, s)
	}
	if mode == "crash" {
		return 1, true
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		if out := Reply(sc.Bytes()); out != nil {
			if _, err := os.Stdout.Write(append(out, '\n')); err != nil {
				return 0, true // the client hung up
			}
		}
	}
	return 0, true
}

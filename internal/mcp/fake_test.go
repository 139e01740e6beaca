package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/internal/reap"
	"github.com/mcpdrill/mcpdrill/internal/reap/reaptest"
)

// The test binary doubles as every stdio fixture server: with MCPDRILL_FAKE
// set, TestMain runs that fake instead of the tests.
func TestMain(m *testing.M) {
	reaptest.Run()
	if mode := os.Getenv("MCPDRILL_FAKE"); mode != "" {
		if mode == "orphan" { // legacy, after leaving a setsid grandchild behind
			if err := reaptest.SpawnFromEnv(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			mode = "legacy"
		}
		if mode == "sdk" {
			runSDKStdio()
			os.Exit(0)
		}
		runFake(mode, os.Stdin, os.Stdout)
		os.Exit(0)
	}
	// As the CLI does: orphans re-parent here, and must be reaped here.
	if err := reap.Subreaper(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// fakeCfg returns the configuration that starts fake mode.
func fakeCfg(t *testing.T, mode string) Config {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A wait that a test expects to run out is short; a wait for an
	// answer is long enough that no loaded machine reaches it (testutil.Hang),
	// so no outcome depends on how fast the fake is scheduled. Modes that
	// answer server/discover get the long probe; modes that ignore it wait
	// 300ms. Tests that expect a request to time out set RequestTimeout.
	discover := 300 * time.Millisecond
	switch mode {
	case "modern", "legacy-32601", "refuse-legacy", "refuse-future", "refuse-all":
		discover = testutil.Hang
	}
	return Config{
		Command:         []string{exe, "-test.run=^$"},
		Env:             []string{"MCPDRILL_FAKE=" + mode, "GORACE=atexit_sleep_ms=0"},
		RequestTimeout:  testutil.Hang,
		DiscoverTimeout: discover,
	}
}

// fake is a scriptable stdio MCP server. Modes:
//
//	legacy          ignores server/discover, speaks 2025-11-25 and older
//	legacy-32601    answers server/discover with -32601
//	legacy-late     answers server/discover only after initialize
//	discover-late   dual-era, answers server/discover only once initialize
//	                comes, then initialize (a server slower to start than the probe)
//	modern          answers server/discover, requires _meta on every request
//	slow-modern     modern-only, first reply only after 500ms; initialize → error
//	modern-drop     modern-only, ignores the first server/discover
//	refuse-legacy   server/discover → -32022 supported [2025-06-18] then legacy
//	refuse-future   -32022 unless protocolVersion is 2027-01-01
//	refuse-all      -32022 supported [2099-01-01]
//	noise           legacy, printing non-JSON lines to stdout
//	oversize        legacy, tools/list reply is one huge line
//	oversize-tail   as oversize, with "id" as the last member
//	oversize-ask    legacy, before its tools/list reply sends a huge request of its own under the same id
//	hang            legacy, never answers tools/call (logs cancellations on stderr)
//	silent          reads stdin, never writes
//	deaf            never reads stdin
//	crash           legacy, tools/call writes half a line and exits 3
//	ping            legacy, pings the client and lists roots before tools/list
//	stubborn        legacy, ignores stdin EOF and SIGTERM
//	flood           legacy, floods stdout with notifications and noise
//	exit-start      writes "missing API_KEY" to stderr and exits 1 at once
//	kill-start      writes a line to stderr and kills itself with SIGKILL
//	linger          legacy, ignores stdin EOF (not SIGTERM)
//	raw-drop        legacy, drops a frame it cannot parse (no -32700)
//	raw-late        legacy, answers a frame it cannot parse only after its next reply
//	raw-hang        legacy, stops answering anything after a frame it cannot parse
//	raw-crash       legacy, exits 2 on a frame it cannot parse
//	paged / loop / endless   tools/list pagination variants
//	orphan          legacy, after starting a setsid grandchild (package reaptest)
func runFake(mode string, in io.Reader, out io.Writer) {
	w := bufio.NewWriter(out)
	// lateParse holds back the -32700 of raw-late until the next reply.
	lateParse := false
	send := func(v any) {
		b, _ := json.Marshal(v)
		w.Write(b)
		w.WriteByte('\n')
		if lateParse {
			lateParse = false
			w.WriteString(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}` + "\n")
		}
		w.Flush()
	}
	result := func(id json.RawMessage, r any) {
		send(map[string]any{"jsonrpc": "2.0", "id": id, "result": r})
	}
	fail := func(id json.RawMessage, code int, msg string, data any) {
		e := map[string]any{"code": code, "message": msg}
		if data != nil {
			e["data"] = data
		}
		send(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	}
	if mode == "stubborn" {
		signal.Ignore(syscall.SIGTERM)
	}
	switch mode {
	case "exit-start":
		fmt.Fprintln(os.Stderr, "config loaded from /etc/fake")
		fmt.Fprintln(os.Stderr, "missing API_KEY")
		os.Exit(1)
	case "kill-start":
		fmt.Fprintln(os.Stderr, "about to die")
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	if mode == "deaf" { // never reads stdin
		time.Sleep(time.Minute)
	}
	if mode == "noise" {
		fmt.Fprintln(w, "starting server on stdout, oops")
		w.Flush()
	}
	slept := false
	var heldDiscover json.RawMessage
	var pendingPing json.RawMessage
	var heldTools json.RawMessage
	hung := false
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m jsonrpc.Message
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			switch mode {
			case "raw-drop":
			case "raw-late":
				lateParse = true
			case "raw-hang":
				hung = true
			case "raw-crash":
				os.Exit(2)
			default:
				fail(nil, -32700, "parse error", nil)
			}
			continue
		}
		if hung {
			continue
		}

		if m.Method == "" { // a response from the client
			if string(m.ID) == string(pendingPing) && heldTools != nil {
				ok := string(m.Result) == "{}"
				fmt.Fprintf(os.Stderr, "ping answered ok=%v\n", ok)
				if ok {
					result(heldTools, map[string]any{"tools": []any{map[string]any{"name": "pinged", "inputSchema": map[string]any{"type": "object"}}}})
				}
				heldTools = nil
			}
			if string(m.ID) == `"roots-1"` {
				fmt.Fprintf(os.Stderr, "roots answered %s\n", m.Result)
			}
			continue
		}
		if m.Method == "notifications/cancelled" {
			fmt.Fprintf(os.Stderr, "cancelled %s\n", m.Params)
			continue
		}
		if m.ID == nil {
			continue
		}
		if mode == "silent" {
			continue
		}
		if mode == "slow-modern" && !slept {
			slept = true
			time.Sleep(500 * time.Millisecond)
		}
		if mode == "modern-drop" && m.Method == "server/discover" && !slept {
			slept = true
			continue
		}
		if (mode == "slow-modern" || mode == "modern-drop") && m.Method == "initialize" {
			fail(m.ID, -32602, "unsupported protocol version", map[string]any{"supported": []string{Rev20260728}})
			continue
		}
		modernMode := mode == "modern" || mode == "refuse-future" || mode == "refuse-all" || mode == "slow-modern" || mode == "modern-drop" ||
			(mode == "refuse-legacy" && m.Method == "server/discover")
		if modernMode && m.Method != "initialize" {
			var p struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			}
			_ = json.Unmarshal(m.Params, &p)
			var v string
			_ = json.Unmarshal(p.Meta[MetaProtocolVersion], &v)
			if _, ok := p.Meta[MetaClientCapabilities]; !ok || v == "" {
				fail(m.ID, -32602, "missing _meta", nil)
				continue
			}
			switch {
			case mode == "refuse-legacy":
				fail(m.ID, -32022, "unsupported", map[string]any{"supported": []string{"2025-06-18"}, "requested": v})
				continue
			case mode == "refuse-all":
				fail(m.ID, -32022, "unsupported", map[string]any{"supported": []string{"2099-01-01"}, "requested": v})
				continue
			case mode == "refuse-future" && v != "2027-01-01":
				fail(m.ID, -32022, "unsupported", map[string]any{"supported": []string{"2027-01-01"}, "requested": v})
				continue
			}
		}
		switch m.Method {
		case "server/discover":
			switch mode {
			case "modern", "refuse-future", "slow-modern", "modern-drop":
				result(m.ID, map[string]any{
					"supportedVersions": []string{Rev20260728, "2027-01-01"},
					"capabilities":      map[string]any{"tools": map[string]any{}},
					"instructions":      "be nice",
					"ttlMs":             0, "cacheScope": "public",
					"_meta": map[string]any{MetaServerInfo: map[string]any{"name": "fake-modern", "version": "1.0"}},
				})
			case "legacy-32601":
				fail(m.ID, -32601, "method not found", nil)
			case "legacy-late", "discover-late":
				heldDiscover = m.ID
			}
			// other legacy modes: no reply at all
		case "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			_ = json.Unmarshal(m.Params, &p)
			v := p.ProtocolVersion
			if !IsKnown(v) || IsModern(v) {
				v = Rev20250618
			}
			if mode == "discover-late" && heldDiscover != nil {
				result(heldDiscover, map[string]any{
					"supportedVersions": []string{Rev20260728, Rev20251125},
					"capabilities":      map[string]any{"tools": map[string]any{}},
					"ttlMs":             0, "cacheScope": "public",
					"_meta": map[string]any{MetaServerInfo: map[string]any{"name": "fake-dual", "version": "1.0"}},
				})
				heldDiscover = nil
			}
			result(m.ID, map[string]any{"protocolVersion": v, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "fake-" + mode, "version": "0.1", "title": "Fake"}, "instructions": "hi"})
			if heldDiscover != nil {
				fail(heldDiscover, -32601, "late", nil)
				heldDiscover = nil
			}
		case "ping":
			result(m.ID, map[string]any{})
		case "tools/list":
			var p struct {
				Cursor string `json:"cursor"`
			}
			_ = json.Unmarshal(m.Params, &p)
			switch mode {
			case "oversize", "oversize-tail":
				big := strings.Repeat("x", 8192)
				if mode == "oversize" {
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"%s"}]}}`+"\n", m.ID, big)
				} else {
					fmt.Fprintf(w, `{"result":{"tools":[{"name":"%s","x":{"id":99}}]},"jsonrpc":"2.0","id":%s}`+"\n", big, m.ID)
				}
				w.Flush()
				continue
			case "ping":
				heldTools = m.ID
				pendingPing = json.RawMessage(`"ping-1"`)
				send(map[string]any{"jsonrpc": "2.0", "id": "roots-1", "method": "roots/list"})
				send(map[string]any{"jsonrpc": "2.0", "id": "samp-1", "method": "sampling/createMessage", "params": map[string]any{}})
				send(map[string]any{"jsonrpc": "2.0", "id": "ping-1", "method": "ping"})
				continue
			case "many-tools": // 3 pages of 25 tiny tools
				page := 0
				fmt.Sscan(p.Cursor, &page)
				next := ""
				if page < 2 {
					next = fmt.Sprint(page + 1)
				}
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", m.ID, tinyTools(25, next))
				w.Flush()
				continue
			case "noise":
				fmt.Fprintln(w, "debug: listing tools")
				w.Flush()
			case "oversize-ask":
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"method":"sampling/createMessage","params":{"pad":"%s"}}`+"\n", m.ID, strings.Repeat("x", 8192))
				w.Flush()
			case "flood":
				for i := 0; i < 20000; i++ {
					fmt.Fprintf(w, `{"jsonrpc":"2.0","method":"notifications/n%d"}`+"\n", i)
					fmt.Fprintf(w, "noise %d %s\n", i, strings.Repeat("#", 200))
				}
				w.Flush()
			}
			page := map[string]any{}
			n := 0
			fmt.Sscanf(p.Cursor, "c%d", &n)
			page["tools"] = []any{map[string]any{"name": fmt.Sprintf("t%d", n), "title": "T", "description": "d",
				"inputSchema": map[string]any{"type": "object"}, "annotations": map[string]any{"readOnlyHint": true}}}
			switch mode {
			case "paged":
				if n < 2 {
					page["nextCursor"] = fmt.Sprintf("c%d", n+1)
				}
				page["ttlMs"] = 1000
				if n != 1 {
					page["cacheScope"] = "public"
				}
			case "loop":
				page["nextCursor"] = fmt.Sprintf("c%d", (n+1)%2)
			case "endless":
				page["nextCursor"] = fmt.Sprintf("c%d", n+1)
			case "modern":
				page["ttlMs"] = 500
				page["cacheScope"] = "private"
				page["resultType"] = "complete"
			}
			result(m.ID, page)
		case "tools/call":
			switch mode {
			case "hang":
				continue
			case "crash":
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"res`, m.ID)
				w.Flush()
				os.Exit(3)
			}
			var p struct {
				Name string         `json:"name"`
				Meta map[string]any `json:"_meta"`
			}
			_ = json.Unmarshal(m.Params, &p)
			result(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": p.Name}}, "echoMeta": p.Meta})
		default:
			fail(m.ID, -32601, "method not found", nil)
		}
	}
	if mode == "stubborn" || mode == "linger" {
		time.Sleep(time.Minute)
	}
}

// newSDKServer builds a server with the official Go SDK: one typed tool.
func newSDKServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "sdk-fixture", Version: "1.8.0"}, &sdk.ServerOptions{Instructions: "sdk"})
	type in struct {
		Text string `json:"text" jsonschema:"text to echo"`
	}
	type out struct {
		Echo string `json:"echo"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "echoes"}, func(_ context.Context, _ *sdk.CallToolRequest, i in) (*sdk.CallToolResult, out, error) {
		return nil, out{Echo: i.Text}, nil
	})
	return s
}

func runSDKStdio() {
	_ = newSDKServer().Run(context.Background(), &sdk.StdioTransport{})
}

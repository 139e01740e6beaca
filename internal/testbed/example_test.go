package testbed_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// A 2026-07-28 client needs no handshake: every request carries its
// protocol version and capabilities in params._meta.
func ExampleServeStdio() {
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}` + "\n")
	_ = testbed.ServeStdio(context.Background(), testbed.Options{Profile: "good"}, in, os.Stdout, io.Discard)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpdrill-testbed","title":"mcpdrill testbed (good)","version":"1.0.0"}},"content":[{"text":"{\"a\":2,\"b\":3,\"sum\":5}","type":"text"}],"resultType":"complete","structuredContent":{"a":2,"b":3,"sum":5}}}
}

// Over HTTP the same request must also mirror the method, the tool name and
// the protocol version in headers; a mismatch is -32020 with status 400.
func ExampleNewHandler() {
	h, _ := testbed.NewHandler(testbed.Options{Profile: "good"})
	srv := httptest.NewServer(h)
	defer srv.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest("POST", srv.URL+testbed.PathMCP, strings.NewReader(body))
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "subtract") // not what the body says
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	fmt.Println(res.StatusCode, string(b))
	// Output:
	// 400 {"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Mcp-Name header does not match the body"}}
}

func ExampleProfiles() {
	for _, p := range testbed.Profiles() {
		if !p.Hostile {
			fmt.Println(p.Name)
		}
	}
	// Output:
	// content
	// drifting
	// good
	// legacy
	// modern
	// partial
	// sloppy-content
	// sloppy-errors
	// slow-start
	// typical
	// vacuous
}

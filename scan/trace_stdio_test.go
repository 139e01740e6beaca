package scan

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/internal/telemetry"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// envTap names the directory into which a tapped stdio testbed child
// copies every byte it reads from stdin (one file per process).
const envTap = "MCPDRILL_SCAN_TEST_TAP"

// serveTapped runs the stdio testbed named by testbed.EnvChild with its
// stdin copied to a file under $MCPDRILL_SCAN_TEST_TAP; ok is false in an
// ordinary process.
func serveTapped() (int, bool) {
	dir := os.Getenv(envTap)
	if dir == "" {
		return 0, false
	}
	var o testbed.Options
	if err := json.Unmarshal([]byte(os.Getenv(testbed.EnvChild)), &o); err != nil {
		fmt.Fprintln(os.Stderr, "tap: bad child options:", err)
		return 4, true
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("stdin-%d", os.Getpid())))
	if err != nil {
		fmt.Fprintln(os.Stderr, "tap:", err)
		return 4, true
	}
	defer f.Close()
	if err := testbed.ServeStdio(context.Background(), o, io.TeeReader(os.Stdin, f), os.Stdout, os.Stderr); err != nil {
		return 1, true
	}
	return 0, true
}

// tappedConfig is stdioConfig with the child's stdin recorded under a
// fresh directory, returned.
func tappedConfig(t *testing.T, o testbed.Options) (mcp.Config, string) {
	t.Helper()
	cfg := stdioConfig(t, o)
	dir := t.TempDir()
	cfg.Env = append(cfg.Env, envTap+"="+dir)
	return cfg, dir
}

// tappedFrame is one line a stdio server read, as the client wrote it.
type tappedFrame struct {
	line        string
	peek        jsonrpc.Peek
	traceparent string
	rev         string // the revision the frame names, if any
}

// tapped reads back every line the tapped servers read.
func tapped(t *testing.T, dir string) []tappedFrame {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "stdin-*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no tap files (%v)", err)
	}
	var out []tappedFrame
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			fr := tappedFrame{line: sc.Text()}
			fr.peek, _ = jsonrpc.PeekFrame(sc.Bytes())
			var m struct {
				Params struct {
					ProtocolVersion string                     `json:"protocolVersion"`
					Meta            map[string]json.RawMessage `json:"_meta"`
				} `json:"params"`
			}
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				_ = json.Unmarshal(m.Params.Meta["traceparent"], &fr.traceparent)
				_ = json.Unmarshal(m.Params.Meta[mcp.MetaProtocolVersion], &fr.rev)
				if fr.peek.Method == "initialize" {
					fr.rev = m.Params.ProtocolVersion
				}
			}
			out = append(out, fr)
		}
		f.Close()
	}
	return out
}

// TestStdioFindingsNameTheirSpans scans stdio testbeds with a tracer: every
// MCP frame the client sent became one exported span, every finding names
// a span of the right method, and the server read, in params._meta, the
// traceparent of the very span (from 2025-06-18 on, never on raw probes).
func TestStdioFindingsNameTheirSpans(t *testing.T) {
	tests := []struct {
		profile string
		revs    []string
		meta    bool
	}{
		{"sloppy-errors", nil, true}, // modern 2026-07-28
		{"vacuous", []string{mcp.Rev20250618}, true},
		{"sloppy-errors", []string{mcp.Rev20250326}, false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.profile, tc.revs), func(t *testing.T) {
			t.Parallel()
			rcv := testutil.NewOTLPReceiver(t)
			tr, err := telemetry.New(context.Background(), telemetry.Options{Endpoint: rcv.URL})
			if err != nil {
				t.Fatal(err)
			}
			cfg, dir := tappedConfig(t, testbed.Options{Profile: tc.profile, Revisions: tc.revs})
			rep := scanWith(t, cfg, Options{Tracer: tr})
			if err := tr.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			if rep.Protocol.Transport != "stdio" || len(rep.Findings) == 0 {
				t.Fatalf("protocol %+v, %d findings", rep.Protocol, len(rep.Findings))
			}
			calls := tr.Since(0)
			byID := map[string]telemetry.Call{}
			for _, c := range calls {
				byID[c.SpanID] = c
				sp := rcv.Span(c.SpanID)
				if sp == nil || sp.Kind != tracepb.Span_SPAN_KIND_CLIENT || hex.EncodeToString(sp.TraceId) != c.TraceID {
					t.Fatalf("call %+v was not exported as a client span", c)
				}
			}
			// One span per frame the client wrote (its replies to server
			// requests aside), and one trace for the run.
			frames := tapped(t, dir)
			sent := 0
			for _, fr := range frames {
				if fr.peek.Kind != jsonrpc.KindResponse && fr.peek.Kind != jsonrpc.KindError {
					sent++
				}
			}
			if sent != len(calls) {
				t.Errorf("%d frames sent, %d calls traced", sent, len(calls))
			}
			withMeta := 0
			for _, fr := range frames {
				// A frame travels under the revision it names (server/discover
				// in _meta, initialize in params) or the session's.
				rev := rep.Protocol.Revision
				if fr.rev != "" {
					rev = fr.rev
				}
				own := fr.peek.Kind == jsonrpc.KindRequest && !strings.HasPrefix(string(fr.peek.ID), `"`)
				if fr.traceparent == "" {
					if own && rev >= telemetry.MetaRevision {
						t.Errorf("own request without traceparent: %.200s", fr.line)
					}
					continue
				}
				withMeta++
				if !own || rev < telemetry.MetaRevision {
					t.Errorf("traceparent where none belongs: %.200s", fr.line)
				}
				parts := strings.Split(fr.traceparent, "-")
				c, ok := byID[parts[len(parts)-2]]
				if len(parts) != 4 || !ok || fr.traceparent != "00-"+c.TraceID+"-"+c.SpanID+"-01" || c.Method != fr.peek.Method {
					t.Errorf("traceparent %s of %s names call %+v", fr.traceparent, fr.peek.Method, c)
				}
			}
			if tc.meta && withMeta == 0 {
				t.Error("no frame carried a traceparent")
			}
			for _, f := range rep.Findings {
				sp := rcv.Span(f.SpanID)
				if sp == nil {
					t.Errorf("%s %s: span %q was not exported", f.Rule, f.Tool, f.SpanID)
					continue
				}
				method := byID[f.SpanID].Method
				if hex.EncodeToString(sp.TraceId) != f.TraceID || !strings.HasPrefix(sp.Name, method) {
					t.Errorf("%s: span %s of call %s", f.Rule, sp.Name, method)
				}
				switch {
				case strings.HasPrefix(f.Rule, "MCP-OUT-"):
					if method != "tools/list" {
						t.Errorf("%s %s names %s", f.Rule, f.Tool, method)
					}
				case f.Rule == RuleErrParse || f.Rule == RuleErrInvalidRequest || f.Rule == RuleErrMissingMeta:
					// the raw probe frame's own span
					if id := strAttr(sp, "jsonrpc.request.id"); !strings.HasPrefix(id, "mcpdrill-") {
						t.Errorf("%s names %s id %q, not its probe", f.Rule, sp.Name, id)
					}
				case strings.HasPrefix(f.Rule, "MCP-ERR-"):
					if method == "tools/list" || method == "initialize" || method == "server/discover" {
						t.Errorf("%s names %s, not its probe", f.Rule, method)
					}
				}
			}
		})
	}
}

// TestStdioUntraced: without a tracer a stdio scan sends no traceparent and
// its findings carry no ids.
func TestStdioUntraced(t *testing.T) {
	cfg, dir := tappedConfig(t, testbed.Options{Profile: "sloppy-errors", Revisions: []string{mcp.Rev20250618}})
	rep := scanWith(t, cfg, Options{})
	if len(rep.Findings) == 0 {
		t.Fatal("no findings")
	}
	for _, f := range rep.Findings {
		if f.TraceID != "" || f.SpanID != "" {
			t.Errorf("untraced finding with ids: %+v", f)
		}
	}
	frames := tapped(t, dir)
	if len(frames) == 0 {
		t.Fatal("nothing tapped")
	}
	for _, fr := range frames {
		if strings.Contains(fr.line, "traceparent") {
			t.Errorf("untraced frame carries a traceparent: %.200s", fr.line)
		}
	}
}

func strAttr(s *tracepb.Span, key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value.GetStringValue()
		}
	}
	return ""
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// spanNames runs an OTLP/HTTP receiver and returns its URL and a function
// reading back the received spans' names by hex span id.
func spanNames(t *testing.T) (string, func() map[string]string) {
	t.Helper()
	rcv := testutil.NewOTLPReceiver(t)
	return rcv.URL, func() map[string]string {
		names := map[string]string{}
		for id, s := range rcv.Spans() {
			names[id] = s.Name
		}
		return names
	}
}

// TestStdioOTLP: scan and drift of a stdio server with --otlp-endpoint
// export spans, and every finding names one of them; without the flag the
// findings carry no ids.
func TestStdioOTLP(t *testing.T) {
	// The untraced runs must not pick up a collector from the environment.
	t.Setenv("OTEL_SDK_DISABLED", "true")
	vacEnv, vacCmd := testbedArgs(t, testbed.Options{Profile: "vacuous"})
	goodEnv, goodCmd := testbedArgs(t, testbed.Options{Profile: "good"})
	manifest := filepath.Join(t.TempDir(), "m.json")
	if err := os.WriteFile(manifest, []byte(`{"tools":[{"name":"ghost","inputSchema":{"type":"object"}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	type findings struct {
		Findings []struct {
			Rule    string `json:"rule"`
			TraceID string `json:"trace_id"`
			SpanID  string `json:"span_id"`
		} `json:"findings"`
	}
	for _, tc := range []struct {
		pre      []string
		env      string
		cmd      []string
		untraced bool
	}{
		{[]string{"scan", "--no-second-connection"}, vacEnv, vacCmd, false},
		{[]string{"drift", manifest}, goodEnv, goodCmd, true},
	} {
		pre, env, cmd := tc.pre, tc.env, tc.cmd
		url, names := spanNames(t)
		args := append(append(append([]string{}, pre...), "--json", "--fail-on", "never", "--env", env), "--otlp-endpoint", url, "--")
		code, out, errOut := runCLI(t, append(args, cmd...)...)
		var got findings
		if err := json.Unmarshal([]byte(out), &got); err != nil || code != exitOK {
			t.Fatalf("%v: exit %d, %v: %s", pre, code, err, errOut)
		}
		spans := names()
		if len(got.Findings) == 0 || len(spans) < 3 {
			t.Fatalf("%v: %d findings, %d spans", pre, len(got.Findings), len(spans))
		}
		for _, f := range got.Findings {
			if _, ok := spans[f.SpanID]; !ok || len(f.TraceID) != 32 {
				t.Errorf("%v: %s names span %q, not exported", pre, f.Rule, f.SpanID)
			}
		}
		if pre[0] == "drift" {
			for _, f := range got.Findings {
				if spans[f.SpanID] != "tools/list" {
					t.Errorf("drift %s names %q", f.Rule, spans[f.SpanID])
				}
			}
		}
		if !tc.untraced {
			continue
		}
		args = append(append(append([]string{}, pre...), "--json", "--fail-on", "never", "--env", env), "--")
		code, out, _ = runCLI(t, append(args, cmd...)...)
		got = findings{}
		if err := json.Unmarshal([]byte(out), &got); err != nil || code != exitOK || len(got.Findings) == 0 {
			t.Fatalf("%v untraced: exit %d, %v", pre, code, err)
		}
		for _, f := range got.Findings {
			if f.TraceID != "" || f.SpanID != "" {
				t.Errorf("%v untraced: %s carries ids", pre, f.Rule)
			}
		}
	}
}

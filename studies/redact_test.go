package studies

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/redact"
	"github.com/mcpdrill/mcpdrill/report"
	"github.com/mcpdrill/mcpdrill/scan"
)

// TestRowsHoldNoSecrets: a row keeps servers.json's argv and URL without
// their secrets, and a URL that does not parse is not quoted in the error.
func TestRowsHoldNoSecrets(t *testing.T) {
	spec, err := ParseSpec([]byte(`{"mcpServers": {
  "local":  {"command": "srv", "args": ["--token", "S1", "--api-key=S2", "API_KEY=S3", "--port", "8080"]},
  "remote": {"url": "https://u:S4@mcp.example.test/mcp?key=S5#S6"},
  "launched": {"url": "http://127.0.0.1:${PORT}/mcp?k=S7", "launch": {"command": "srv", "args": ["--secret", "S8", "--port", "${PORT}"]}}
}}`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]Row{}
	for _, e := range spec.Servers {
		rows[e.Name] = identity(e)
	}
	if got, want := rows["local"].Command, []string{"srv", "--token", "REDACTED", "--api-key=REDACTED", "API_KEY=REDACTED", "--port", "8080"}; !slices.Equal(got, want) {
		t.Errorf("command %q, want %q", got, want)
	}
	if got := rows["remote"].URL; got != "https://mcp.example.test/mcp?key=REDACTED" {
		t.Errorf("url %q", got)
	}
	if got := rows["launched"].URL; got != "http://127.0.0.1:${PORT}/mcp?k=REDACTED" {
		t.Errorf("launch url %q", got)
	}
	if got, want := rows["launched"].Launch, []string{"srv", "--secret", "REDACTED", "--port", "${PORT}"}; !slices.Equal(got, want) {
		t.Errorf("launch %q, want %q", got, want)
	}

	_, err = ParseSpec([]byte(`{"mcpServers": {"x": {"url": "http://u:S9@127.0.0.1:port/mcp?k=S10", "launch": {"command": "srv"}}}}`), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "invalid port") || strings.Contains(err.Error(), "S9") || strings.Contains(err.Error(), "S10") {
		t.Errorf("unparsable launch url: %v", err)
	}
}

// TestRunMasksResolvedSecrets: what the masking rule calls secret (an
// ${env:} value under a secret-looking name, an ${input:}, an environment
// value under a secret-looking name) is masked in everything a row keeps,
// including what the server says of itself (serverInfo, tool names,
// messages) and echoes of it cut short; what it does not (a path, a home
// directory, a value whose name and place say nothing) is kept as it is;
// an input without a value fails the row naming the input.
func TestRunMasksResolvedSecrets(t *testing.T) {
	const envSecret, inputSecret = "planted-env-TOKEN-1234", "planted-INPUT-5678"
	spec, err := ParseSpec([]byte(`{
  "inputs": [{"type": "promptString", "id": "key", "description": "API key", "password": true}],
  "servers": {
    "echo":   {"command": "srv", "args": ["${env:STUDY_PLANTED_TOKEN}", "${input:key}", "${workspaceFolder}", "--root", "${env:FSROOT}", "${env:HOME}"],
               "env": {"LITERAL_KEY": "planted-literal-env", "FSROOT": "/tmp", "PLAIN": "plain-value"}},
    "nokey":  {"command": "srv", "args": ["${input:other}"]}
  }}`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The server echoes what it was given: its command and environment on
	// stderr, the environment secret less its last character as its name,
	// the input as a tool name, both in a finding.
	echo := func(_ context.Context, cfg mcp.Config, _ scan.Options) (*scan.Report, error) {
		r := &scan.Report{Established: true}
		r.Meta.Stderr = []string{strings.Join(cfg.Command, " "), strings.Join(cfg.Env, " ")}
		r.Server = scan.Server{Name: envSecret[:len(envSecret)-1], Version: "v-" + inputSecret[2:]}
		r.Tools = []scan.ToolReport{{Name: "t-" + inputSecret, Reason: "reads /tmp/data and /home/tester/.cfg"}}
		r.Findings = []report.Finding{{Rule: "MCP-X", Severity: report.SeverityInfo, Tool: "t-" + inputSecret, Message: "said " + envSecret[1:] + " under /tmp/data"}}
		return r, nil
	}
	res, err := Run(context.Background(), spec, Options{
		Scan:      echo,
		Workspace: "/ws",
		Inputs:    map[string]string{"key": inputSecret},
		LookupEnv: func(k string) (string, bool) {
			v, ok := map[string]string{"STUDY_PLANTED_TOKEN": envSecret, "FSROOT": "/tmp", "HOME": "/home/tester"}[k]
			return v, ok
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var docs bytes.Buffer
	if err := Write(&docs, res); err != nil {
		t.Fatal(err)
	}
	// The pages render nothing but the document (studies/pages): what
	// results.json holds is what they can show.
	for _, r := range res.Servers {
		for _, f := range r.Found() {
			docs.WriteString(f.Message + f.Tool)
		}
	}
	out := docs.String()
	for _, s := range []string{envSecret, inputSecret, "planted-literal-env"} {
		for i := 0; i+redact.EchoRun <= len(s); i++ {
			if part := s[i : i+redact.EchoRun]; strings.Contains(out, part) {
				t.Errorf("the results and pages hold %q, part of %q", part, s)
			}
		}
	}
	for _, s := range []string{"/tmp/data", "/home/tester/.cfg", "--root /tmp /home/tester", "FSROOT=/tmp", "PLAIN=plain-value"} {
		if !strings.Contains(out, s) {
			t.Errorf("the results lack %q: a value that is no secret was masked", s)
		}
	}
	rows := map[string]Row{}
	for _, r := range res.Servers {
		rows[r.Name] = r
	}
	if got := res.Meta.Servers["echo"].Stderr; len(got) == 0 || got[0] != "srv REDACTED REDACTED /ws --root /tmp /home/tester" {
		t.Errorf("echo stderr %q", got)
	}
	if r := rows["nokey"]; r.Status != StatusFailed || r.Failure != FailConfig || r.Reason != `input "other" has no value` {
		t.Errorf("nokey: %s %s %q", r.Status, r.Failure, r.Reason)
	}
}

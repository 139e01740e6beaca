package studies

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
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

// TestRunMasksResolvedSecrets: what ${env:…}, ${input:…} and the entry's
// environment resolved to is masked in what a row keeps of the server's
// words, and an input without a value fails the row naming the input.
func TestRunMasksResolvedSecrets(t *testing.T) {
	spec, err := ParseSpec([]byte(`{
  "inputs": [{"type": "promptString", "id": "key", "description": "API key", "password": true}],
  "servers": {
    "echo":   {"command": "srv", "args": ["${env:STUDY_PLANTED}", "${input:key}", "${workspaceFolder}"], "env": {"LITERAL": "planted-literal-env"}},
    "nokey":  {"command": "srv", "args": ["${input:other}"]}
  }}`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	echo := func(_ context.Context, cfg mcp.Config, _ scan.Options) (*scan.Report, error) {
		r := &scan.Report{Established: true}
		r.Meta.Stderr = []string{strings.Join(cfg.Command, " "), strings.Join(cfg.Env, " ")}
		return r, nil
	}
	res, err := Run(context.Background(), spec, Options{
		Scan:      echo,
		Workspace: "/ws",
		Inputs:    map[string]string{"key": "planted-input"},
		LookupEnv: func(k string) (string, bool) {
			if k == "STUDY_PLANTED" {
				return "planted-env", true
			}
			return "", false
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"planted-env", "planted-input", "planted-literal-env"} {
		if strings.Contains(string(b), s) {
			t.Errorf("results hold %q:\n%s", s, b)
		}
	}
	rows := map[string]Row{}
	for _, r := range res.Servers {
		rows[r.Name] = r
	}
	if got := res.Meta.Servers["echo"].Stderr; len(got) == 0 || got[0] != "srv REDACTED REDACTED /ws" {
		t.Errorf("echo stderr %q", got)
	}
	if r := rows["nokey"]; r.Status != StatusFailed || r.Failure != FailConfig || r.Reason != `input "other" has no value` {
		t.Errorf("nokey: %s %s %q", r.Status, r.Failure, r.Reason)
	}
}

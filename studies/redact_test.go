package studies

import (
	"slices"
	"strings"
	"testing"
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

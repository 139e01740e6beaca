package studies

import (
	"strings"
	"testing"
)

// Abuse list of "configurations" (see Configuration): each refused with
// the entry named.
func TestConfigurationsValidate(t *testing.T) {
	long := strings.Repeat("x", maxConfigValue+1)
	for _, tc := range []struct{ name, entry, want string }{
		{"on an HTTP entry", `{"url":"http://127.0.0.1:1/mcp","configurations":[{"name":"a","env":{"A":"1"}}]}`, "stdio entries"},
		{"no name", `{"command":"x","configurations":[{"env":{"A":"1"}}]}`, "configuration name"},
		{"a name with a newline", `{"command":"x","configurations":[{"name":"a\nb","env":{"A":"1"}}]}`, "configuration name"},
		{"named twice", `{"command":"x","configurations":[{"name":"a","env":{"A":"1"}},{"name":"a","env":{"B":"1"}}]}`, "named twice"},
		{"sets nothing", `{"command":"x","configurations":[{"name":"a"}]}`, "sets nothing"},
		{"not an env name", `{"command":"x","configurations":[{"name":"a","env":{"A=B":"1"}}]}`, "not an environment variable name"},
		{"a long value", `{"command":"x","configurations":[{"name":"a","env":{"A":"` + long + `"}}]}`, "over 256 bytes"},
		{"a long argument", `{"command":"x","configurations":[{"name":"a","args":["` + long + `"]}]}`, "over 256 bytes"},
		{"too many", `{"command":"x","configurations":[` + strings.Repeat(`{"name":"a","env":{"A":"1"}},`, 8) + `{"name":"z","env":{"A":"1"}}]}`, "at most 8"},
	} {
		_, err := ParseSpec([]byte(`{"mcpServers":{"s":`+tc.entry+`}}`), t.TempDir())
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `server "s"`) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := ParseSpec([]byte(`{"mcpServers":{"s":{"command":"x","configurations":[{"name":"all toolsets","env":{"GITLAB_TOOLSETS":"all"},"source":"README"}]}}}`), t.TempDir()); err != nil {
		t.Errorf("a plain configuration: %v", err)
	}
}

// A configuration's settings override the entry's and add to its
// arguments.
func TestWithEnv(t *testing.T) {
	got := withEnv([]string{"A=1", "B=2"}, []string{"B=3", "C=4"})
	if strings.Join(got, " ") != "A=1 B=3 C=4" {
		t.Errorf("%v", got)
	}
}

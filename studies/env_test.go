package studies

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/scan"
)

// TestServersRunScrubbed: a server study run starts, over stdio or as an
// HTTP entry's launch, sees the allow-listed environment (a scratch HOME,
// PATH, locale, its own env) and none of the caller's credentials, however
// they are named. The servers dump their environment to a file and exit.
func TestServersRunScrubbed(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the servers are POSIX shells")
	}
	secrets := map[string]string{
		"GITHUB_TOKEN":          "ghp_callers0token",
		"AWS_SECRET_ACCESS_KEY": "aws-callers-secret",
		"NPM_TOKEN":             "npm_callers_token",
		"OPENAI_API_KEY":        "sk-callers-key",
		"MY_DATABASE_URL":       "postgres://u:pw@db/x",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	t.Setenv("LANG", "C.UTF-8")
	dumps := t.TempDir()
	dump := func(name string) []string {
		return []string{"-c", `env > "$0"; exit 3`, filepath.Join(dumps, name)}
	}
	servers := map[string]any{
		"stdio": map[string]any{"command": "/bin/sh", "args": dump("stdio"),
			"env": map[string]string{"ROW_SETTING": "kept", "PASSED_ON_PURPOSE": "${env:NPM_TOKEN}"}},
		"launched": map[string]any{"url": "http://127.0.0.1:${PORT}/mcp",
			"launch": map[string]any{"command": "/bin/sh", "args": dump("launched"), "env": map[string]string{"ROW_SETTING": "kept"}, "ready": "5s"}},
	}
	data, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := ParseSpec(data, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	if _, err := Run(context.Background(), spec, Options{Scan: scan.Run, Jobs: 2, Deadline: 20 * time.Second, RequestTimeout: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"stdio", "launched"} {
		b, err := os.ReadFile(filepath.Join(dumps, name))
		if err != nil {
			t.Fatalf("%s: the server wrote no environment: %v", name, err)
		}
		env := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if k, v, ok := strings.Cut(l, "="); ok {
				env[k] = v
			}
		}
		for k, v := range secrets {
			if _, ok := env[k]; ok {
				t.Errorf("%s: the server sees %s", name, k)
			}
			for ek, ev := range env {
				if strings.Contains(ev, v) && !(name == "stdio" && ek == "PASSED_ON_PURPOSE") {
					t.Errorf("%s: %s carries the caller's %s", name, ek, k)
				}
			}
		}
		if env["ROW_SETTING"] != "kept" || env["PATH"] == "" || env["LANG"] != "C.UTF-8" {
			t.Errorf("%s: row env, PATH or locale missing: %v", name, env)
		}
		if env["HOME"] == "" || env["HOME"] == home || env["HOME"] != env["TMPDIR"] {
			t.Errorf("%s: HOME %q, TMPDIR %q: want the scratch directory", name, env["HOME"], env["TMPDIR"])
		}
	}
	// A row names a variable of the caller's on purpose: that one passes.
	if b, _ := os.ReadFile(filepath.Join(dumps, "stdio")); !strings.Contains(string(b), "PASSED_ON_PURPOSE=npm_callers_token") {
		t.Error("the row's own ${env:NPM_TOKEN} did not reach the server")
	}
}

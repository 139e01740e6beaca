package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// planted are the secrets TestPlantedSecretsNeverPrinted hands mcpdrill in
// every way a user can: none may appear in anything mcpdrill writes.
var planted = map[string]string{
	"header value":       "PLANTED_HDR_5eb1",
	"userinfo password":  "PLANTED_PW_5eb1",
	"query value":        "PLANTED_Q_5eb1",
	"argv --token value": "PLANTED_ARGV_5eb1",
	"argv --flag=value":  "PLANTED_EQ_5eb1",
	"argv KEY=value":     "PLANTED_KV_5eb1",
	"env value":          "PLANTED_ENV_5eb1",
}

// leakChecker collects every artifact and stream a run produced and reports
// each planted secret found in one.
type leakChecker struct {
	t    *testing.T
	seen int
	// secrets are the planted secrets by kind (planted when nil).
	secrets map[string]string
}

func (lc *leakChecker) check(what, text string) {
	lc.t.Helper()
	lc.seen++
	secrets := lc.secrets
	if secrets == nil {
		secrets = planted
	}
	for kind, secret := range secrets {
		if strings.Contains(text, secret) {
			i := strings.Index(text, secret)
			lo, hi := max(0, i-80), min(len(text), i+len(secret)+40)
			lc.t.Errorf("%s: contains the planted %s: …%s…", what, kind, text[lo:hi])
		}
	}
}

// checkFile checks a file's contents and, since store files are named after
// what they hold, its name.
func (lc *leakChecker) checkFile(what, path string) {
	lc.t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		lc.t.Errorf("%s: %v", what, err)
		return
	}
	lc.check(what+" ("+filepath.Base(path)+")", string(b))
	lc.check(what+" file name", filepath.Base(path))
}

// checkDir checks every file below dir.
func (lc *leakChecker) checkDir(what, dir string) {
	lc.t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		lc.check(what+" path", strings.TrimPrefix(p, dir))
		if !d.IsDir() {
			n++
			lc.checkFile(what, p)
		}
		return nil
	})
	if err != nil {
		lc.t.Errorf("%s: %v", what, err)
	}
	if n == 0 {
		lc.t.Errorf("%s: no files written", what)
	}
}

// TestPlantedSecretsNeverPrinted plants a header value, a URL's userinfo
// password and query value, secret argv values and an environment value,
// then runs scan, drift, drift capture/check, wrap (stdio and HTTP, with an
// event log and a guard store), study run/report and guard status/audit,
// and looks for every secret in every output stream and artifact.
func TestPlantedSecretsNeverPrinted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs subprocesses")
	}
	lc := &leakChecker{t: t}
	tmp := t.TempDir()
	bin := testutil.Binary(t)

	// HTTP: a testbed behind a URL carrying a password and a query token.
	h, err := testbed.NewHandler(testbed.Options{Profile: "good"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	u, err := url.Parse(srv.URL + testbed.PathMCP)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("alice", planted["userinfo password"])
	u.RawQuery = "api_key=" + planted["query value"] + "&region=eu"
	secretURL := u.String()
	header := "Authorization: Bearer " + planted["header value"]
	httpTarget := []string{"--url", secretURL, "--header", header}

	// stdio: the testbed child (this test binary) with secrets in its argv
	// (it ignores them) and its environment.
	childEnv, childCmd := testbedArgs(t, testbed.Options{Profile: "good"})
	secretArgs := []string{"--token", planted["argv --token value"], "--api-key=" + planted["argv --flag=value"], "API_KEY=" + planted["argv KEY=value"]}
	stdioCmd := append(append([]string{}, childCmd...), secretArgs...)
	envFlags := []string{"--env", childEnv, "--env", "SERVICE_TOKEN=" + planted["env value"]}
	childOptions := strings.TrimPrefix(childEnv, testbed.EnvChild+"=")
	stdioTarget := append(append(append([]string{}, envFlags...), "--"), stdioCmd...)

	run := func(what string, args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(t, args...)
		if code == exitUsage || code == exitInternal {
			t.Errorf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", what, code, out, errOut)
		}
		lc.check(what+" stdout", out)
		lc.check(what+" stderr", errOut)
		return out
	}

	// scan: every format, both transports.
	for _, format := range []string{"--fail-on=never", "--json", "--format=sarif", "--format=junit", "--format=github"} {
		run("scan http "+format, append([]string{"scan", format, "--no-second-connection", "--fail-on", "never"}, httpTarget...)...)
		run("scan stdio "+format, append([]string{"scan", format, "--no-second-connection", "--fail-on", "never"}, stdioTarget...)...)
	}
	// What is kept: the URL's host, path and query keys; the flags.
	var scanned struct {
		Target struct {
			URL     string   `json:"url"`
			Command []string `json:"command"`
		} `json:"target"`
		Established bool `json:"established"`
	}
	mustJSON(t, run("scan http target", append([]string{"scan", "--json", "--no-second-connection", "--fail-on", "never"}, httpTarget...)...), &scanned)
	if !scanned.Established || scanned.Target.URL != "http://"+u.Host+u.Path+"?api_key=REDACTED&region=REDACTED" {
		t.Errorf("scan http target: established %v, url %q", scanned.Established, scanned.Target.URL)
	}
	mustJSON(t, run("scan stdio target", append([]string{"scan", "--json", "--no-second-connection", "--fail-on", "never"}, stdioTarget...)...), &scanned)
	if want := []string{"--token", "REDACTED", "--api-key=REDACTED", "API_KEY=REDACTED"}; !scanned.Established ||
		!slices.Equal(scanned.Target.Command[len(scanned.Target.Command)-len(want):], want) {
		t.Errorf("scan stdio target: established %v, command %q", scanned.Established, scanned.Target.Command)
	}

	// drift against a manifest: every format, both transports.
	manifest := filepath.Join(tmp, "manifest.json")
	if err := os.WriteFile(manifest, []byte(`{"tools":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"table", "json", "sarif", "junit", "github"} {
		run("drift http "+format, append([]string{"drift", manifest, "--format", format, "--fail-on", "never"}, httpTarget...)...)
		run("drift stdio "+format, append([]string{"drift", manifest, "--format", format, "--fail-on", "never"}, stdioTarget...)...)
	}

	// drift capture / check from a spec.
	for _, tc := range []struct{ name, server string }{
		{"http", "  url: " + quoteYAML(secretURL) + "\n  headers:\n    Authorization: " + quoteYAML("Bearer "+planted["header value"]) + "\n"},
		{"stdio", "  command: [" + joinYAML(stdioCmd) + "]\n  env:\n    " + testbed.EnvChild + ": " + quoteYAML(childOptions) +
			"\n    SERVICE_TOKEN: " + planted["env value"] + "\n"},
	} {
		spec := filepath.Join(tmp, "spec-"+tc.name+".yaml")
		if err := os.WriteFile(spec, []byte("server:\n"+tc.server), 0o600); err != nil {
			t.Fatal(err)
		}
		base := filepath.Join(tmp, "base-"+tc.name+".json")
		run("drift capture "+tc.name, "drift", "capture", spec, "-o", base)
		lc.checkFile("drift capture "+tc.name, base)
		for _, format := range []string{"table", "json", "sarif", "junit", "github"} {
			run("drift check "+tc.name+" "+format, "drift", "check", "--baseline", base, "--spec", spec, "--format", format)
		}
	}

	// wrap, stdio: scanned through the proxy, so wrap's stderr lands in the
	// scan report's stderr tail too; with an event log and a guard store.
	guardDir := filepath.Join(tmp, "guard")
	wrapLog := filepath.Join(tmp, "wrap-stdio.jsonl")
	wrapped := append([]string{bin, "wrap", "--guard", guardDir, "--log", wrapLog, "--faults", "latency:latency=1ms", "--only", "tools/list", "--"}, stdioCmd...)
	run("scan through wrap stdio", append(append(append([]string{"scan", "--json", "--no-second-connection", "--fail-on", "never"}, envFlags...), "--"), wrapped...)...)
	lc.checkFile("wrap stdio event log", wrapLog)

	// wrap, HTTP: a real process; its stderr is read whole.
	httpLog := filepath.Join(tmp, "wrap-http.jsonl")
	proxyURL, stopWrap := startWrapHTTP(t, bin, "--listen", "127.0.0.1:0", "--upstream", secretURL,
		"--guard", guardDir, "--log", httpLog, "--faults", "latency:latency=1ms", "--only", "tools/list")
	pu, err := url.Parse(proxyURL)
	if err != nil {
		t.Fatal(err)
	}
	pu.Path, pu.RawQuery = u.Path, u.RawQuery
	run("scan through wrap http", "scan", "--json", "--no-second-connection", "--fail-on", "never", "--url", pu.String(), "--header", header)
	lc.check("wrap http stderr", stopWrap())
	lc.checkFile("wrap http event log", httpLog)

	for _, log := range []string{wrapLog, httpLog} {
		if b, _ := os.ReadFile(log); strings.Count(string(b), "\n") < 2 {
			t.Errorf("%s: no fault recorded after the plan:\n%s", filepath.Base(log), b)
		}
	}

	// guard: the store's records and audit log, and what the CLI shows.
	lc.checkDir("guard store", guardDir)
	if recs, _ := filepath.Glob(filepath.Join(guardDir, "*.json")); len(recs) != 2 {
		t.Errorf("guard store: %d records, want one per wrapped server: %q", len(recs), recs)
	}
	for _, sub := range []string{"status", "audit"} {
		run("guard "+sub, "guard", sub, "--dir", guardDir)
		run("guard "+sub+" --json", "guard", sub, "--dir", guardDir, "--json")
	}

	// study: results.json, SUMMARY.md and the scoreboard.
	envMap := map[string]string{
		testbed.EnvChild: childOptions,
		"SERVICE_TOKEN":  planted["env value"],
	}
	servers := map[string]any{"mcpServers": map[string]any{
		"remote": map[string]any{"url": secretURL, "headers": map[string]string{"Authorization": "Bearer " + planted["header value"]}},
		"local":  map[string]any{"command": stdioCmd[0], "args": stdioCmd[1:], "env": envMap},
	}}
	b, err := json.Marshal(servers)
	if err != nil {
		t.Fatal(err)
	}
	serversPath := filepath.Join(tmp, "servers.json")
	if err := os.WriteFile(serversPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(tmp, "results.json")
	run("study run", "study", "run", serversPath, "-o", results, "-j", "1", "--no-second-connection")
	lc.checkFile("study results", results)
	for _, format := range []string{"table", "sarif", "junit", "github"} {
		run("study run "+format, "study", "run", serversPath, "-q", "--format", format, "-j", "2", "--no-second-connection")
	}
	var study struct {
		Servers []struct {
			Name, Status, URL string
			Command           []string
		}
	}
	if b, err := os.ReadFile(results); err == nil {
		mustJSON(t, string(b), &study)
	}
	if len(study.Servers) != 2 {
		t.Errorf("study: %d rows, want 2", len(study.Servers))
	}
	for _, row := range study.Servers {
		if row.Status != "scanned" {
			t.Errorf("study row %s: status %s, want scanned", row.Name, row.Status)
		}
	}
	reportDir := filepath.Join(tmp, "study-report")
	run("study report", "study", "report", results, "-o", reportDir)
	lc.checkDir("study report", reportDir)

	if lc.seen < 40 {
		t.Errorf("only %d outputs checked", lc.seen)
	}
}

// startWrapHTTP starts `mcpdrill wrap` in HTTP mode and returns the proxy's
// base URL and a function that stops it and returns all it wrote on stderr.
func startWrapHTTP(t *testing.T, bin string, args ...string) (string, func() string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Hang)
	cmd := exec.CommandContext(ctx, bin, append([]string{"wrap"}, args...)...)
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	addr := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			line := sc.Text()
			stderr.WriteString(line + "\n")
			if _, rest, ok := strings.Cut(line, "listening on "); ok {
				a, _, _ := strings.Cut(rest, " ")
				select {
				case addr <- a:
				default:
				}
			}
		}
	}()
	stop := func() string {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-done
		_ = cmd.Wait()
		cancel()
		return stderr.String()
	}
	select {
	case a := <-addr:
		return a, stop
	case <-done:
	case <-time.After(testutil.Hang):
	}
	out := stop()
	t.Fatalf("wrap did not start listening:\n%s", out)
	return "", nil
}

func mustJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("JSON: %v\n%s", err, s)
	}
}

func quoteYAML(s string) string {
	b, _ := json.Marshal(s) // a JSON string is a YAML string
	return string(b)
}

func joinYAML(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = quoteYAML(s)
	}
	return strings.Join(q, ", ")
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

// This file runs the command blocks of the README and of docs/*.md as
// written ("README commands run as written on a fresh clone", wherever the
// example lives). TestREADMECommands takes every line of every ```sh block,
// README.md first and then docs/*.md in name order (docFiles), and runs it
// in bash in a scratch directory with the built mcpdrill first on PATH,
// checking the exit status the page implies. What it changes, and nothing
// else:
//
//   - Ports. The README's fixed addresses are replaced by free ones:
//     127.0.0.1:3000 (the testbed of "Servers for the examples"),
//     127.0.0.1:3001 (server-everything there, given PORT=…, as the README
//     says) and 127.0.0.1:7070 (a fresh one for each line that listens).
//   - npx. An `npx` on PATH runs `npx -y PKG ARGS…` from the pinned binary
//     of PKG in testdata/npm (readmeNPM; the Makefile's MCPDRILL_NPM_*), so
//     nothing is fetched; any other package fails the line.
//   - Stand-ins for the reader's own server: `./server` (drift) and
//     `npx -y some-weather-server` (guard) run `mcpdrill testbed`, the same
//     server the HTTP examples reach on :3000.
//   - The guard synopsis lines (`--dir DIR [SERVER]`…) run with their
//     placeholders filled: the store and server of the `wrap --guard` lines
//     above them, optional parts included.
//   - HOME is a scratch home (so `~/…` paths, `configs` and the guard store
//     stay in the test), with GOCACHE, GOMODCACHE and GOPATH kept and GOBIN
//     in the scratch directory (`go install` leaves ~/go/bin alone).
//     TOKEN and KEY, which the examples expand, are set to dummies.
//   - Lines starting with `go ` or `make ` run in the repository root ("from
//     a clone"; `make demo` and `make screenshot` leave bin/ and out/ there,
//     both ignored by git). The zsh completion line runs in zsh after
//     compinit, as its comment says (skipped when zsh is not installed;
//     .ci/run installs it), and ~/.config/fish/completions exists, as fish
//     makes it.
//
// The files the README tells the reader to have are made first: plan.yaml
// and the drift spec from the README's own YAML blocks, tools.json by the
// README's capture commands; the client configurations, servers.json and
// today.json (a later capture of spec.yaml), whose content the README does
// not show, by the test. Long-running commands (--listen, --http,
// streamableHttp) start in the background; the test waits for their port,
// lists tools through them with the official Go SDK, and stops them with
// SIGINT (exit 0 for mcpdrill's). The two servers of "Servers for the
// examples" run until the end. A stdio `wrap` line is started by the SDK
// client, as an MCP client would, and must exit 0 when the client closes.

// readmeNotRun lists the README command lines this test cannot run here,
// and why. Keep it short: every other line runs.
var readmeNotRun = map[string]string{
	"git clone https://github.com/mcpdrill/mcpdrill && cd mcpdrill":                                "fetches from GitHub; the test runs in the clone it is part of",
	"mcpdrill scan --url https://example.test/mcp --header 'Authorization=Bearer ${TOKEN}' --json": "a remote server of the reader's (example.test never resolves); --header is tested against local servers in auth_test.go",
	"make test":  "the command that runs this test",
	"make study": "installs the pilot's 50 servers from the npm registry (studies/pilot/install.sh) and scans them for minutes",
	"npx @modelcontextprotocol/conformance server --url http://127.0.0.1:7070/mcp": "the official conformance suite (pinned in testdata/conformance with Node 22, minutes): `make conformance` runs it this way in .ci/run",
}

// readmeExit holds the lines whose documented exit status is not 0.
var readmeExit = map[string]int{
	// Tool set 2 of the drifting profile is a breaking upgrade of what was captured.
	"mcpdrill drift tools.json -- mcpdrill testbed --profile drifting --version 2": exitFindings,
	// server-everything's HTTP mode answers an ended session's id with 400,
	// not 404 (MCP-CONF-HTTP-SESSION-ID, an error).
	"mcpdrill scan --url http://127.0.0.1:3001/mcp": exitFindings,
	// servers.json holds the sloppy-errors testbed, whose findings are errors.
	"mcpdrill study run servers.json --format sarif --fail-on error > study.sarif": exitFindings,
}

// readmeNPM: the packages pinned in testdata/npm that `npx -y PKG` runs, by
// the variable the Makefile (and testutil.NPMServer) names each binary by.
var readmeNPM = map[string]string{
	"@modelcontextprotocol/server-everything": "MCPDRILL_NPM_EVERYTHING",
	"@modelcontextprotocol/server-filesystem": "MCPDRILL_NPM_FILESYSTEM",
	"@modelcontextprotocol/server-memory":     "MCPDRILL_NPM_MEMORY",
}

// The addresses the README's examples use.
const (
	readmeTestbedAddr    = "127.0.0.1:3000"
	readmeEverythingAddr = "127.0.0.1:3001"
	readmeListenAddr     = "127.0.0.1:7070"
	// The store and server id of the README's `wrap --guard` lines.
	readmeGuardDir, readmeGuardServer = "~/.mcpdrill/pins", "weather"
)

// readmeLine is one command line of a ```sh block, comment cut, with the
// file (relative to the repository root) and the section ("#…" heading) it
// is in.
type readmeLine struct{ file, section, text string }

// docFiles returns the pages whose examples run, relative to the
// repository root: README.md, then docs/*.md in name order.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(testutil.ModuleRoot(t), "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(docs)
	out := []string{"README.md"}
	for _, d := range docs {
		out = append(out, filepath.Join("docs", filepath.Base(d)))
	}
	return out
}

// readDoc returns a page of docFiles.
func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testutil.ModuleRoot(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readmeShellLines returns every command line of the sh blocks of every
// page of docFiles, in order.
func readmeShellLines(t *testing.T) []readmeLine {
	t.Helper()
	var out []readmeLine
	for _, name := range docFiles(t) {
		section, fence := "", ""
		for _, l := range strings.Split(readDoc(t, name), "\n") {
			switch {
			case fence == "" && strings.HasPrefix(l, "```"):
				fence = strings.TrimPrefix(l, "```")
			case fence != "" && strings.HasPrefix(l, "```"):
				fence = ""
			case fence == "sh":
				for _, c := range shellLines(l) {
					out = append(out, readmeLine{name, section, c})
				}
			case fence == "" && strings.HasPrefix(l, "#"):
				section = l
			}
		}
	}
	return out
}

// readmeSection returns the section that starts with heading, in whichever
// page of docFiles has it: up to the next heading (outside code blocks) of
// the same or a higher level, so a page's "# title" is the whole page.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	level := headingLevel(heading)
	for _, name := range docFiles(t) {
		var b strings.Builder
		in, fence := false, false
		for _, l := range strings.Split(readDoc(t, name), "\n") {
			if strings.HasPrefix(l, "```") {
				fence = !fence
			}
			if !fence && !strings.HasPrefix(l, "```") {
				if l == heading {
					in = true
					continue
				}
				if in && headingLevel(l) > 0 && headingLevel(l) <= level {
					break
				}
			}
			if in {
				b.WriteString(l + "\n")
			}
		}
		if in {
			return b.String()
		}
	}
	t.Fatalf("no page of README.md and docs/ has %q", heading)
	return ""
}

// headingLevel is the level of a Markdown heading line (0: none).
func headingLevel(l string) int {
	n := len(l) - len(strings.TrimLeft(l, "#"))
	if n == 0 || !strings.HasPrefix(l[n:], " ") {
		return 0
	}
	return n
}

// codeBlocks returns the fenced blocks of lang in s.
func codeBlocks(s, lang string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// shellLines returns the command lines of a shell block: no blank or
// comment lines, trailing comments (after two spaces) cut.
func shellLines(block string) []string {
	var out []string
	for _, l := range strings.Split(block, "\n") {
		if i := strings.Index(l, "  #"); i >= 0 {
			l = l[:i]
		}
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// TestREADMECommands runs every command line of the README's sh blocks as
// written; see the top of this file for what it replaces and why.
func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary and servers")
	}
	lines := readmeShellLines(t)
	if len(lines) < 40 {
		t.Fatalf("only %d command lines in the sh blocks of README.md and docs/", len(lines))
	}
	seen := map[string]bool{}
	for _, l := range lines {
		seen[l.text] = true
	}
	for k := range readmeNotRun {
		if !seen[k] {
			t.Errorf("readmeNotRun names a line no page has any more: %q", k)
		}
	}
	for k := range readmeExit {
		if !seen[k] {
			t.Errorf("readmeExit names a line no page has any more: %q", k)
		}
	}
	r := newReadmeRun(t)
	for _, l := range lines {
		t.Run(l.file+"/"+l.text, func(t *testing.T) { r.run(t, l) })
	}
	t.Run("stop the servers for the examples", func(t *testing.T) {
		for _, s := range r.servers {
			code, err := s.stop()
			if err != nil || (strings.HasPrefix(s.line, "mcpdrill ") && code != exitOK) {
				t.Errorf("%s: exit %d after SIGINT (%v)\n%s", s.line, code, err, s.out)
			}
		}
	})
}

type readmeRun struct {
	t               *testing.T // the whole test, which the servers for the examples outlive subtests in
	root, dir, home string
	env             []string
	ports           map[string]string // README address → the free one used here
	servers         []*readmeBG       // "Servers for the examples", up to the end
}

func newReadmeRun(t *testing.T) *readmeRun {
	t.Helper()
	r := &readmeRun{t: t, root: testutil.ModuleRoot(t), dir: t.TempDir()}
	r.home = filepath.Join(r.dir, "home")
	r.ports = map[string]string{readmeTestbedAddr: testutil.FreeAddr(t), readmeEverythingAddr: testutil.FreeAddr(t)}

	// The environment: mcpdrill and the npx stand-in first on PATH, a
	// scratch HOME, Go's caches kept.
	goEnv, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	gv := strings.Split(strings.TrimSpace(string(goEnv)), "\n")
	if len(gv) != 3 {
		t.Fatalf("go env: %q", goEnv)
	}
	stub := filepath.Join(r.dir, "stub")
	for _, d := range []string{stub, r.home, filepath.Join(r.home, ".config", "Claude"), filepath.Join(r.home, ".config", "fish", "completions"), filepath.Join(r.dir, ".vscode")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	drop := regexp.MustCompile(`^(PATH|HOME|XDG_CONFIG_HOME|GOBIN|GOCACHE|GOMODCACHE|GOPATH|MAKEFLAGS|MFLAGS|MAKELEVEL|MCPDRILL_GUARD_DIR|PORT|TOKEN|KEY|OTEL_[A-Z_]*)=`)
	for _, kv := range os.Environ() {
		if !drop.MatchString(kv) {
			r.env = append(r.env, kv)
		}
	}
	r.env = append(r.env,
		"PATH="+stub+string(os.PathListSeparator)+filepath.Dir(testutil.Binary(t))+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+r.home, "GOBIN="+filepath.Join(r.dir, "gobin"),
		"GOCACHE="+gv[0], "GOMODCACHE="+gv[1], "GOPATH="+gv[2],
		"TOKEN=readme-test-token", "KEY=readme-test-key")

	// npx: pinned packages only (their binaries come in through the
	// MCPDRILL_NPM_* variables a line that needs them sets), and the
	// guard example's placeholder server.
	var npx strings.Builder
	npx.WriteString("#!/bin/sh\n# npx for TestREADMECommands: packages pinned in testdata/npm, never the registry.\n[ \"$1\" = -y ] && shift\npkg=$1\nshift\ncase $pkg in\n")
	pkgs := make([]string, 0, len(readmeNPM))
	for p := range readmeNPM {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		fmt.Fprintf(&npx, "%s) bin=$%s ;;\n", p, readmeNPM[p])
	}
	npx.WriteString("some-weather-server) exec mcpdrill testbed \"$@\" ;;\n" +
		"*) echo \"npx (README test): $pkg is not pinned in testdata/npm\" >&2; exit 127 ;;\nesac\n" +
		"[ -n \"$bin\" ] || { echo \"npx (README test): $pkg is not installed\" >&2; exit 127; }\nexec \"$bin\" \"$@\"\n")

	a := r.ports[readmeTestbedAddr]
	files := map[string]string{
		"stub/npx": npx.String(),
		// drift's `-- ./server`: the reader's server.
		"server":    "#!/bin/sh\nexec mcpdrill testbed \"$@\"\n",
		"plan.yaml": readmeBlock(t, "# Injecting faults (`wrap`)", "yaml", "seed:"),
		"home/.config/Claude/claude_desktop_config.json": `{"mcpServers": {"testbed": {"command": "mcpdrill", "args": ["testbed"]}}}`,
		".vscode/mcp.json": `{
  // VS Code: a server that needs an input
  "inputs": [{"type": "promptString", "id": "api-key", "description": "API key", "password": true}],
  "servers": {
    "weather": {"type": "http", "url": "http://` + a + `/mcp", "headers": {"Authorization": "Bearer ${input:api-key}"}},
  },
}`,
		".mcp.json": `{"mcpServers": {"api": {"type": "stdio", "command": "mcpdrill", "args": ["testbed"]}}}`,
		"servers.json": `{"mcpServers": {
  "testbed": {"command": "mcpdrill", "args": ["testbed", "--profile", "good"]},
  "testbed-http": {"url": "http://` + a + `/mcp"},
  "sloppy": {"command": "mcpdrill", "args": ["testbed", "--profile", "sloppy-errors"]}
}}`,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(r.dir, name), []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// tools.json as the README says to get one (this also leaves the
	// two-line spec.yaml), then the README's spec, which the drift examples
	// before that block read.
	for _, l := range shellLines(readmeBlock(t, "# Drift: manifests and baselines (`drift`)", "sh", "-o tools.json")) {
		if strings.HasSuffix(l, "-o tools.json") || strings.HasSuffix(l, "> spec.yaml") {
			if code, out := r.exec(t, l, r.dir, nil); code != 0 {
				t.Fatalf("%s: exit %d\n%s", l, code, out)
			}
		}
	}
	spec := r.replacer(readmeListenAddr).Replace(readmeBlock(t, "# Drift: manifests and baselines (`drift`)", "yaml", "canaries:"))
	if err := os.WriteFile(filepath.Join(r.dir, "spec.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return r
}

// readmeBlock returns the first lang block of a section (readmeSection)
// that holds marker.
func readmeBlock(t *testing.T, heading, lang, marker string) string {
	t.Helper()
	for _, b := range codeBlocks(readmeSection(t, heading), lang) {
		if strings.Contains(b, marker) {
			return b
		}
	}
	t.Fatalf("section %q has no %s block with %q", heading, lang, marker)
	return ""
}

// replacer swaps the README's addresses for the ones used here, with listen
// for 127.0.0.1:7070.
func (r *readmeRun) replacer(listen string) *strings.Replacer {
	return strings.NewReplacer(readmeTestbedAddr, r.ports[readmeTestbedAddr], readmeEverythingAddr, r.ports[readmeEverythingAddr], readmeListenAddr, listen)
}

// run runs one README line.
func (r *readmeRun) run(t *testing.T, l readmeLine) {
	if reason, ok := readmeNotRun[l.text]; ok {
		t.Skip("not run here: " + reason)
	}
	listen := testutil.FreeAddr(t)
	line := r.replacer(listen).Replace(l.text)
	env := append([]string(nil), r.env...)
	for pkg, v := range readmeNPM {
		if strings.Contains(line, "npx -y "+pkg) || (v == "MCPDRILL_NPM_EVERYTHING" && strings.Contains(l.text, readmeEverythingAddr)) {
			env = append(env, v+"="+testutil.NPMServer(t, v)[0])
		}
	}
	if strings.HasPrefix(line, "mcpdrill guard ") && strings.Contains(line, "--dir DIR") {
		fp := "FP"
		if strings.Contains(line, "FP") {
			fp = r.guardLastSeen(t)
		}
		line = strings.NewReplacer("--fingerprint FP", "--fingerprint "+fp, "[--note TEXT]", "--note 'README test'",
			"[SERVER]", readmeGuardServer, "SERVER", readmeGuardServer, "DIR", readmeGuardDir).Replace(line)
	}
	if strings.Contains(line, "today.json") {
		r.ensure(t, "today.json", "mcpdrill drift capture spec.yaml -o today.json")
	}
	if line == "make screenshot" {
		chromiumOrSkip(t)
	}
	dir := r.dir
	if strings.HasPrefix(line, "go ") || strings.HasPrefix(line, "make ") {
		dir = r.root
	}

	switch {
	case strings.Contains(line, "--listen ") || strings.Contains(line, "--http ") || strings.HasSuffix(line, " streamableHttp"):
		addr := listen
		if f := strings.Fields(line); strings.HasSuffix(line, " streamableHttp") {
			addr = r.ports[readmeEverythingAddr]
			env = append(env, "PORT="+strings.TrimPrefix(addr, "127.0.0.1:"))
		} else {
			for i := range f[:len(f)-1] {
				if f[i] == "--listen" || f[i] == "--http" {
					addr = f[i+1]
				}
			}
		}
		if l.section == "### Servers for the examples" {
			s := startReadmeBG(t, r.t, line, dir, env, addr)
			r.servers = append(r.servers, s)
			readmeListTools(t, "http://"+addr+"/mcp", s)
		} else {
			s := startReadmeBG(t, t, line, dir, env, addr)
			defer func() {
				if code, err := s.stop(); err != nil || code != exitOK {
					t.Errorf("exit %d after SIGINT (%v)\n%s", code, err, s.out)
				}
			}()
			readmeListTools(t, "http://"+addr+"/mcp", s)
		}
	case strings.HasPrefix(line, "mcpdrill wrap ") && strings.Contains(line, " -- "):
		cs, stderr, err := sdkConnect(t, env, dir, line, "")
		if err != nil {
			t.Fatalf("connect: %v\nstderr: %s", err, stderr)
		}
		callTools(cs, 3)
		if err := cs.Close(); err != nil {
			t.Errorf("wrap did not exit 0 when the client closed: %v\nstderr: %s", err, stderr)
		}
	default:
		want := readmeExit[l.text]
		if code, out := r.exec(t, line, dir, env); code != want {
			t.Fatalf("%s: exit %d, want %d\n%s", line, code, want, out)
		}
		if line == "go install ./cmd/mcpdrill" {
			if _, err := os.Stat(filepath.Join(r.dir, "gobin", "mcpdrill")); err != nil {
				t.Errorf("go install put no mcpdrill in GOBIN: %v", err)
			}
		}
	}
}

// exec runs a line to its end (runLine), in r's environment when env is nil.
func (r *readmeRun) exec(t *testing.T, line, dir string, env []string) (int, string) {
	t.Helper()
	if env == nil {
		env = r.env
	}
	return runLine(t, line, dir, env)
}

// runLine runs a shell line to its end in dir and returns its exit status
// and output (stdout and stderr as they come).
func runLine(t *testing.T, line, dir string, env []string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Hang)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	if strings.Contains(line, "completion zsh") {
		zsh, err := exec.LookPath("zsh")
		if err != nil {
			t.Skip("zsh is not installed")
		}
		// "in ~/.zshrc, after compinit"
		cmd = exec.CommandContext(ctx, zsh, "-c", "autoload -Uz compinit && compinit -u; "+line)
	}
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return 0, string(out)
}

// ensure makes a file with a command when the scratch directory lacks it.
func (r *readmeRun) ensure(t *testing.T, name, line string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(r.dir, name)); err == nil {
		return
	}
	if code, out := r.exec(t, line, r.dir, nil); code != 0 {
		t.Fatalf("%s: exit %d\n%s", line, code, out)
	}
}

// guardLastSeen returns the fingerprint the guard store last saw for the
// README's server.
func (r *readmeRun) guardLastSeen(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(testutil.Binary(t), "guard", "status", "--dir", filepath.Join(r.home, ".mcpdrill", "pins"), "--json", readmeGuardServer)
	cmd.Env = r.env
	out, err := cmd.Output()
	var st struct {
		Servers []struct {
			LastSeen string `json:"last_seen"`
		} `json:"servers"`
	}
	if err != nil || json.Unmarshal(out, &st) != nil || len(st.Servers) != 1 || st.Servers[0].LastSeen == "" {
		t.Fatalf("guard status: %v\n%s", err, out)
	}
	return st.Servers[0].LastSeen
}

// chromiumOrSkip skips the test when there is no Chromium, unless
// MCPDRILL_REQUIRE_CHROMIUM is set (as in CI).
func chromiumOrSkip(t *testing.T) {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if _, err := exec.LookPath(name); err == nil {
			return
		}
	}
	if os.Getenv("MCPDRILL_REQUIRE_CHROMIUM") != "" {
		t.Fatal("chromium not found")
	}
	t.Skip("chromium not found")
}

// readmeBG is a long-running README command in the background.
type readmeBG struct {
	line string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error
}

// startReadmeBG starts a line and waits until addr accepts connections. It
// is killed, if still running, when owner ends.
func startReadmeBG(t, owner *testing.T, line, dir string, env []string, addr string) *readmeBG {
	t.Helper()
	s := &readmeBG{line: line, out: &syncBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command("bash", "-c", "exec "+line)
	s.cmd.Dir, s.cmd.Env = dir, env
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.err = s.cmd.Wait(); close(s.done) }()
	owner.Cleanup(func() {
		select {
		case <-s.done:
		default:
			s.cmd.Process.Kill()
			<-s.done
		}
	})
	for deadline := time.Now().Add(testutil.Hang); ; time.Sleep(50 * time.Millisecond) {
		select {
		case <-s.done:
			t.Fatalf("exited before listening on %s: %v\n%s", addr, s.err, s.out)
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on %s after %v\n%s", addr, testutil.Hang, s.out)
		}
	}
}

// stop sends SIGINT and returns the exit status.
func (s *readmeBG) stop() (int, error) {
	select {
	case <-s.done:
	default:
		s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-s.done:
		case <-time.After(testutil.Hang):
			s.cmd.Process.Kill()
			<-s.done
			return -1, errors.New("did not stop on SIGINT")
		}
	}
	var ee *exec.ExitError
	if errors.As(s.err, &ee) {
		return ee.ExitCode(), nil
	}
	return 0, s.err
}

// readmeListTools connects the official Go SDK client over Streamable HTTP
// and lists tools.
func readmeListTools(t *testing.T, url string, s *readmeBG) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Hang)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "mcpdrill-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v\n%s", url, err, s.out)
	}
	defer cs.Close()
	if res, err := cs.ListTools(ctx, nil); err != nil || len(res.Tools) == 0 {
		t.Fatalf("tools/list through %s: %v %v\n%s", url, res, err, s.out)
	}
}

// TestREADMEWrapSeeds: the README's first wrap example (run as written by
// TestREADMECommands) under other seeds and rates, in both eras: every
// client connects, since the handshake is exempt from the faults.
func TestREADMEWrapSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	env := pathWithBinary(t)
	dir := t.TempDir()
	var first string
	for _, l := range shellLines(readmeBlock(t, "# Injecting faults (`wrap`)", "sh", "--rate")) {
		if first == "" && strings.HasPrefix(l, "mcpdrill wrap ") && strings.Contains(l, " -- ") {
			first = l
		}
	}
	if !strings.Contains(first, "--seed 7") || !strings.Contains(first, "--rate 0.2") || !strings.Contains(first, "--log events.jsonl") {
		t.Fatalf("first stdio example %q: want --rate 0.2 --seed 7 --log events.jsonl", first)
	}
	for _, seed := range []string{"1", "2", "3", "5", "7", "11"} {
		for _, rate := range []string{"0.2", "0.3"} {
			for _, rev := range []string{"", "2025-11-25"} {
				line := strings.NewReplacer("--seed 7", "--seed "+seed, "--rate 0.2", "--rate "+rate, "--log events.jsonl", "--log seeds.jsonl").Replace(first)
				cs, stderr, err := sdkConnect(t, env, dir, line, rev)
				if err != nil {
					t.Fatalf("seed %s, rate %s, revision %q: connect: %v\nstderr: %s", seed, rate, rev, err, stderr)
				}
				callTools(cs, 1)
				cs.Close()
				if strings.Contains(stderr.String(), `method "initialize"`) || strings.Contains(stderr.String(), `method "server/discover"`) {
					t.Errorf("seed %s: a fault on the handshake:\n%s", seed, stderr)
				}
			}
		}
	}
	log, err := os.ReadFile(filepath.Join(dir, "seeds.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), `{"plan":`); n != 24 {
		t.Errorf("the log holds %d sessions, want 24 (one appended per run)", n)
	}
	if n := strings.Count(string(log), `"fault":"`); n < 5 {
		t.Errorf("only %d faults fired in 24 sessions: the traffic did not exercise the plan", n)
	}
}

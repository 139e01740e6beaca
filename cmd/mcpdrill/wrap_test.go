package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrill/mcpdrill/faults"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/proxy"
)

// syncBuffer is a bytes.Buffer a child's stderr may write while a test
// reads it.
type syncBuffer = testutil.SyncBuffer

// pathWithBinary returns an environment whose PATH starts with the
// directory of the built mcpdrill, so that command lines run as written.
func pathWithBinary(t *testing.T) []string {
	t.Helper()
	bin := testutil.Binary(t)
	return append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// sdkConnect connects the official Go SDK client to a stdio server started
// by the shell command line, in dir, and returns the session (closed at
// the end of the test) and the command's stderr. rev is the protocol
// revision the client asks for ("" for the SDK's latest).
func sdkConnect(t *testing.T, env []string, dir, line, rev string) (*sdk.ClientSession, *syncBuffer, error) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "exec "+line)
	cmd.Dir, cmd.Env = dir, env
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Hang)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "mcpdrill-test", Version: "1"}, nil)
	var opts *sdk.ClientSessionOptions
	if rev != "" {
		opts = &sdk.ClientSessionOptions{ProtocolVersion: rev}
	}
	cs, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, opts)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, stderr, err
}

// callTools lists and calls a tool n times, with a short deadline each:
// faults may time them out or corrupt them, which is what the proxy is for.
func callTools(cs *sdk.ClientSession, n int) {
	for range n {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		cs.ListTools(ctx, nil)
		cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		cancel()
	}
}

// TestWrapFaultNotices: each injected fault is one stderr line naming the
// rule, fault, method and id (--quiet: none); --log appends one session
// per run, and --plan LOG replays the last session or the one --session
// names.
func TestWrapFaultNotices(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	env := pathWithBinary(t)
	dir := t.TempDir()
	base := "mcpdrill wrap --faults error --only tools/list --log events.jsonl"
	run := func(flags string) (*syncBuffer, error) {
		t.Helper()
		cs, stderr, err := sdkConnect(t, env, dir, base+" "+flags+" -- mcpdrill testbed", "2025-11-25")
		if err != nil {
			t.Fatalf("%s: connect: %v\nstderr: %s", flags, err, stderr)
		}
		_, lerr := cs.ListTools(context.Background(), nil)
		cs.Close()
		return stderr, lerr
	}
	stderr, err := run("--seed 3 --session first")
	if err == nil {
		t.Fatal("tools/list succeeded under an error fault on every reply")
	}
	var notices []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(l, "mcpdrill wrap: fault ") {
			notices = append(notices, l)
		}
	}
	want := regexp.MustCompile(`^mcpdrill wrap: fault error \(rule "0:error"\): replace on s2c response #\d+, method "tools/list", id \d+$`)
	if len(notices) != 1 || !want.MatchString(notices[0]) {
		t.Fatalf("notices %q, want one matching %s\nstderr: %s", notices, want, stderr)
	}
	stderr, _ = run("--seed 4 --quiet")
	if strings.Contains(stderr.String(), "mcpdrill wrap: fault ") {
		t.Errorf("--quiet printed notices:\n%s", stderr)
	}
	log, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(log, []byte(`{"plan":`)); n != 2 {
		t.Fatalf("%d sessions in the log, want 2:\n%s", n, log)
	}
	for _, tc := range []struct {
		flags, banner string
	}{
		{"--plan events.jsonl", `seed 4, session "default"`},
		{"--plan events.jsonl --session first", `seed 3, session "first"`},
	} {
		cs, stderr, err := sdkConnect(t, env, dir, "mcpdrill wrap "+tc.flags+" -- mcpdrill testbed", "")
		if err != nil {
			t.Fatalf("%s: %v\n%s", tc.flags, err, stderr)
		}
		cs.Close()
		if !strings.Contains(stderr.String(), tc.banner) {
			t.Errorf("%s: replayed %q, want %s", tc.flags, stderr, tc.banner)
		}
	}
	code, _, errOut := runCLI(t, "wrap", "--plan", filepath.Join(dir, "events.jsonl"), "--session", "nope", "--", "true")
	if code != exitUsage || !strings.Contains(errOut, `no session "nope"`) || !strings.Contains(errOut, "default, first") {
		t.Errorf("unknown session: exit %d, %s", code, errOut)
	}
}

// TestWrapPassesOnServerStatus: wrap exits with the server's status and
// says so on stderr when it is not 0.
func TestWrapPassesOnServerStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := testutil.Binary(t)
	for _, tc := range []struct {
		script string
		code   int
		notice bool
	}{
		{"exit 0", 0, false},
		{"exit 5", 5, true},
		{"kill -TERM $$", 128 + 15, true},
	} {
		cmd := exec.Command(bin, "wrap", "--", "sh", "-c", tc.script)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		code := 0
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		notice := strings.Contains(stderr.String(), "mcpdrill wrap: the server exited with status ")
		if code != tc.code || notice != tc.notice {
			t.Errorf("%s: exit %d (notice %v), want %d (notice %v)\n%s", tc.script, code, notice, tc.code, tc.notice, stderr.String())
		}
	}
}

// TestFaultNotice: what a notice shows of an event, and that text from the
// traffic is quoted and cut.
func TestFaultNotice(t *testing.T) {
	long := strings.Repeat("x", 200)
	for _, tc := range []struct {
		name string
		e    proxy.Event
		want string
	}{
		{"a call", proxy.Event{Dir: "s2c", Index: 3, RuleName: "1:corrupt", Fault: "corrupt", Action: "replace", Applied: true, Kind: "response", Method: "tools/call", Tool: "search", ID: json.RawMessage(`4`)},
			`mcpdrill wrap: fault corrupt (rule "1:corrupt"): replace on s2c response #3, method "tools/call", tool "search", id 4`},
		{"not applied, string id", proxy.Event{Dir: "c2s", Index: 0, RuleName: "r", Fault: "drop-tool", Action: "forward", Kind: "request", Method: "tools/list", ID: json.RawMessage(`"a"`)},
			`mcpdrill wrap: fault drop-tool (rule "r"): forward on c2s request #0 (not applied), method "tools/list", id "a"`},
		{"no method or id", proxy.Event{Dir: "s2c", Index: 9, RuleName: "0:drop", Fault: "drop", Action: "drop", Applied: true, Kind: "invalid"},
			`mcpdrill wrap: fault drop (rule "0:drop"): drop on s2c invalid #9`},
		{"control characters", proxy.Event{Dir: "s2c", RuleName: "0:error", Fault: "error", Action: "replace", Applied: true, Kind: "response", Method: "tools/call", Tool: "a\x1b[2Jb", ID: json.RawMessage(`"\u009b1m"`)},
			`mcpdrill wrap: fault error (rule "0:error"): replace on s2c response #0, method "tools/call", tool "a\x1b[2Jb", id "\u009b1m"`},
		{"long tool, object id", proxy.Event{Dir: "s2c", RuleName: "0:error", Fault: "error", Action: "replace", Applied: true, Kind: "response", Tool: long, ID: json.RawMessage(`{"a":1}`)},
			`mcpdrill wrap: fault error (rule "0:error"): replace on s2c response #0, tool "` + long[:noticeMax] + `…", id (unprintable)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := faultNotice(tc.e); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestFaultNoticesTee: the stderr recorder hands every event on to the log.
func TestFaultNoticesTee(t *testing.T) {
	var stderr, log bytes.Buffer
	n := &faultNotices{w: &stderr, next: proxy.NewJSONL(&log)}
	n.Record(proxy.Event{Dir: "s2c", RuleName: "0:drop", Fault: "drop", Action: "drop", Kind: "response"})
	if strings.Count(stderr.String(), "\n") != 1 || strings.Count(log.String(), "\n") != 1 {
		t.Fatalf("stderr %q, log %q", stderr.String(), log.String())
	}
}

// TestPlanFromLog: the session a replay takes from a log of several.
func TestPlanFromLog(t *testing.T) {
	header := func(seed uint64, session string) string {
		var b bytes.Buffer
		if _, err := proxy.NewJSONLog(&b, &faults.Plan{Seed: seed, SeedSet: true, Session: session, Rules: []faults.Rule{{Fault: "drop", Probability: 1}}}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	event := `{"seed":1,"session":"a","dir":"s2c","index":0,"rule":0,"rule_name":"0:drop","fault":"drop"}` + "\n"
	log := header(1, "a") + event + header(2, "b") + event + `{"seed":2,"ses` + "\n" + header(3, "a") + event
	for _, tc := range []struct {
		name, data, session string
		isLog               bool
		seed                uint64
		err                 string
	}{
		{"last session", log, "", true, 3, ""},
		{"named session", log, "b", true, 2, ""},
		{"last of a repeated name", log, "a", true, 3, ""},
		{"unknown session", log, "c", true, 0, `no session "c" in the log (its sessions: a, b)`},
		{"one session", header(9, "x"), "", true, 9, ""},
		{"a plan file", "seed: 1\nrules:\n  - fault: drop\n", "", false, 0, ""},
		{"an invalid later header", header(1, "a") + `{"plan":{"rules":[]}}` + "\n", "", true, 0, "line 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, isLog, err := proxy.PlanOfSession([]byte(tc.data), tc.session)
			if isLog != tc.isLog || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("isLog %v, err %v; want %v, %q", isLog, err, tc.isLog, tc.err)
			}
			if tc.seed != 0 && (p == nil || p.Seed != tc.seed) {
				t.Fatalf("plan %+v, want seed %d", p, tc.seed)
			}
		})
	}
}

// TestOpenLogAppends: a log is appended to, and a torn last line is ended
// before the new session starts.
func TestOpenLogAppends(t *testing.T) {
	for _, tc := range []struct{ before, want string }{
		{"", "new\n"},
		{"old\n", "old\nnew\n"},
		{"old\n{\"torn", "old\n{\"torn\nnew\n"},
	} {
		path := filepath.Join(t.TempDir(), "events.jsonl")
		if tc.before != "" {
			if err := os.WriteFile(path, []byte(tc.before), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		f, err := openLog(path)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("new\n")
		f.Close()
		if got, _ := os.ReadFile(path); string(got) != tc.want {
			t.Errorf("after %q: %q, want %q", tc.before, got, tc.want)
		}
	}
}

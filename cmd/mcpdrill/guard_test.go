package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/testutil"
)

// wrapSession runs one client session through `mcpdrill wrap --guard`
// around the drifting testbed: initialize, tools/list, tools/call echo. It
// returns the number of tools listed and the call's error code (0: ok).
func wrapSession(t *testing.T, bin, dir string, testbedArgs ...string) (tools, callErr int) {
	t.Helper()
	args := append([]string{"wrap", "--guard", dir, "--server-id", "weather", "--", bin, "testbed", "--profile", "drifting"}, testbedArgs...)
	cmd := exec.Command(bin, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if testing.Verbose() {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	replies := make(chan map[string]json.RawMessage, 16)
	go func() {
		defer close(replies)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &m) == nil && m["id"] != nil {
				replies <- m
			}
		}
	}()
	next := func(id int) map[string]json.RawMessage {
		t.Helper()
		select {
		case m := <-replies:
			if string(m["id"]) != fmt.Sprint(id) {
				t.Fatalf("reply id %s, want %d", m["id"], id)
			}
			return m
		case <-time.After(20 * time.Second):
			t.Fatalf("no reply %d", id)
		}
		return nil
	}
	send := func(s string) {
		if _, err := io.WriteString(in, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	next(1)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	var res struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(next(2)["result"], &res); err != nil {
		t.Fatal(err)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	var e struct {
		Code int `json:"code"`
	}
	if raw := next(3)["error"]; raw != nil {
		_ = json.Unmarshal(raw, &e)
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("wrap: %v", err)
	}
	return len(res.Tools), e.Code
}

func TestGuardCLI(t *testing.T) {
	bin := testutil.Binary(t)
	dir := filepath.Join(t.TempDir(), "pins")

	if code, _, _ := runCLI(t, "wrap", "--posture", "strict", "--", "true"); code != exitUsage {
		t.Errorf("--posture without --guard: exit %d", code)
	}
	if n, c := wrapSession(t, bin, dir, "--drift-after", "-1"); n != 5 || c != 0 {
		t.Fatalf("first use: %d tools, call error %d", n, c)
	}
	if code, out, _ := runCLI(t, "guard", "status", "--dir", dir); code != exitOK || !strings.Contains(out, "verified") {
		t.Fatalf("status: %d\n%s", code, out)
	}
	// Tool set 2: drift, withheld, refused.
	if n, c := wrapSession(t, bin, dir, "--version", "2", "--drift-after", "-1"); n != 0 || c != -31001 {
		t.Fatalf("drifted: %d tools, call error %d", n, c)
	}
	code, out, _ := runCLI(t, "guard", "status", "--dir", dir, "--json")
	var st struct {
		Servers []guardStatusRow `json:"servers"`
	}
	if code != exitFindings || json.Unmarshal([]byte(out), &st) != nil || len(st.Servers) != 1 || st.Servers[0].Status != "changed" || st.Servers[0].DriftAt == nil {
		t.Fatalf("status after drift: %d\n%s", code, out)
	}
	if code, out, _ := runCLI(t, "guard", "diff", "--dir", dir, "weather"); code != exitFindings || !strings.Contains(out, "CHG-TOOL-REMOVED") || !strings.Contains(out, "--fingerprint "+st.Servers[0].LastSeen+" weather") {
		t.Fatalf("diff: %d\n%s", code, out)
	}
	if code, _, errOut := runCLI(t, "guard", "approve", "--dir", dir, "weather", "--fingerprint", st.Servers[0].LastSeen); code != exitUsage || !strings.Contains(errOut, "flags go before SERVER") {
		t.Fatalf("flag after SERVER: %d %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, "guard", "approve", "--dir", dir, "--fingerprint", st.Servers[0].Baseline, "weather"); code != exitUsage || !strings.Contains(errOut, "not the one") {
		t.Fatalf("approve with a stale fingerprint: %d %s", code, errOut)
	}
	if code, out, errOut := runCLI(t, "guard", "approve", "--dir", dir, "--actor", "alice", "--fingerprint", st.Servers[0].LastSeen, "weather"); code != exitOK {
		t.Fatalf("approve: %d %s %s", code, out, errOut)
	}
	if n, c := wrapSession(t, bin, dir, "--version", "2", "--drift-after", "-1"); n != 5 || c != 0 {
		t.Fatalf("after approve: %d tools, call error %d", n, c)
	}
	if code, _, _ := runCLI(t, "guard", "diff", "--dir", dir, "weather"); code != exitOK {
		t.Fatalf("diff after approve: exit %d", code)
	}
	// Quarantine and release.
	if code, _, _ := runCLI(t, "guard", "quarantine", "--dir", dir, "--actor", "bob", "--note", "hold", "weather"); code != exitOK {
		t.Fatal("quarantine failed")
	}
	if n, c := wrapSession(t, bin, dir, "--version", "2", "--drift-after", "-1"); n != 0 || c != -31001 {
		t.Fatalf("quarantined: %d tools, call error %d", n, c)
	}
	if code, _, _ := runCLI(t, "guard", "release", "--dir", dir, "weather"); code != exitOK {
		t.Fatal("release failed")
	}
	if code, _, _ := runCLI(t, "guard", "release", "--dir", dir, "weather"); code != exitUsage {
		t.Fatal("second release accepted")
	}
	code, out, _ = runCLI(t, "guard", "audit", "--dir", dir, "--json")
	var au struct {
		Events []struct {
			Actor, Action, From, To        string
			OldFingerprint, NewFingerprint string `json:"-"`
		} `json:"events"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &au) != nil {
		t.Fatalf("audit: %d\n%s", code, out)
	}
	var acts []string
	for _, e := range au.Events {
		acts = append(acts, e.Action+"/"+e.Actor)
	}
	want := []string{"first-use/mcpdrill-proxy", "drift/mcpdrill-proxy", "approve/alice", "quarantine/bob", "release/" + guardActorDefault()}
	if !slices.Equal(acts, want) {
		t.Fatalf("audit %v, want %v", acts, want)
	}
	// A corrupt record: every command says so, wrap refuses to start.
	if err := os.WriteFile(filepath.Join(dir, "weather.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "guard", "status", "--dir", dir); code != exitUsage || !strings.Contains(errOut, "corrupt") {
		t.Fatalf("status on a corrupt store: %d %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, "wrap", "--guard", dir, "--server-id", "weather", "--", bin, "testbed"); code != exitUsage || !strings.Contains(errOut, "corrupt") {
		t.Fatalf("wrap on a corrupt store: %d %s", code, errOut)
	}
}

func guardActorDefault() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "unknown"
}

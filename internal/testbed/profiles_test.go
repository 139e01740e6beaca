package testbed

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestProfilesCatalogue(t *testing.T) {
	ps := Profiles()
	if !slices.IsSortedFunc(ps, func(a, b Profile) int { return strings.Compare(a.Name, b.Name) }) {
		t.Fatal("Profiles not sorted")
	}
	wantNames := []string{"bad-schema", "content", "crash", "cursor-loop", "deep-schema", "drifting", "flood", "good", "hang",
		"hugeline", "json-preamble", "legacy", "linger", "modern", "noisy-stdout", "partial", "ref-cycle", "sloppy-content", "sloppy-errors",
		"slow-start", "synth-bomb", "typical", "vacuous"}
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
		if p.Summary == "" || strings.Contains(p.Summary, "\n") {
			t.Errorf("%s: summary must be one line", p.Name)
		}
		if got, ok := Lookup(p.Name); !ok || got.Name != p.Name {
			t.Errorf("Lookup(%s) failed", p.Name)
		}
	}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("profiles %v", names)
	}
	if _, ok := Lookup("nope"); ok {
		t.Fatal("Lookup(nope) succeeded")
	}
	ps[0].Revisions[0] = "mutated"
	if p, _ := Lookup(ps[0].Name); p.Revisions[0] == "mutated" {
		t.Fatal("Profiles shares its slices")
	}
	if p, _ := Lookup("modern"); !p.Modern() || p.Legacy() {
		t.Fatal("modern profile eras")
	}
	if p, _ := Lookup("legacy"); p.Modern() || !p.Legacy() {
		t.Fatal("legacy profile eras")
	}
}

func TestOptionsResolve(t *testing.T) {
	bad := []Options{{Profile: "nope"}, {Revisions: []string{}}, {Revisions: []string{"2020-01-01"}}, {Reply: "xml"}}
	for _, o := range bad {
		if _, err := NewHandler(o); err == nil {
			t.Errorf("NewHandler(%+v) accepted", o)
		}
	}
	_, o, err := Options{Revisions: []string{Rev20241105, Rev20260728}}.resolve()
	if err != nil || !slices.Equal(o.Revisions, []string{Rev20260728, Rev20241105}) {
		t.Fatalf("revisions %v, %v", o.Revisions, err)
	}
	if o.HugeBytes != DefaultHugeBytes || o.SchemaDepth != DefaultSchemaDepth || o.DriftAfter != DefaultDriftAfter || o.Reply != "json" {
		t.Fatalf("defaults %+v", o)
	}
}

func TestChildProcess(t *testing.T) {
	t.Run("good", func(t *testing.T) {
		cmd, err := ChildCommand(t.Context(), Options{Profile: "good"})
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdin = strings.NewReader(mreq(1, "server/discover", nil) + "\n")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("child: %v", err)
		}
		want{id: 1, eq: map[string]any{"result.resultType": "complete"}}.check(t, decode(t, bytes.TrimSpace(out)))
	})
	t.Run("crash exits 1", func(t *testing.T) {
		cmd, err := ChildCommand(t.Context(), Options{Profile: "crash"})
		if err != nil {
			t.Fatal(err)
		}
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		io.WriteString(stdin, mreq(1, "tools/list", nil)+"\n")
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		err = cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || json.Valid([]byte(line)) || line == "" {
			t.Fatalf("wait = %v, line %.80q", err, line)
		}
	})
	if code, ok := serveChild("", nil, nil, nil); ok || code != 0 {
		t.Fatal("serveChild without env served")
	}
	if code, ok := serveChild("{bad", nil, io.Discard, io.Discard); !ok || code != 4 {
		t.Fatalf("bad env: %d %v", code, ok)
	}
}

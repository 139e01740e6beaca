//go:build linux

package reap

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/reap/reaptest"
)

func TestMain(m *testing.M) {
	reaptest.Run()
	if err := Subreaper(); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// session runs a spawner to its end: it leaves a setsid grandchild behind,
// re-parented to this process. It returns the command and the orphan's pid.
func session(t *testing.T, env ...string) (*exec.Cmd, int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(append(os.Environ(), reaptest.Env(file)...), env...)
	Mark(cmd)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := reaptest.Pid(t, file)
	reaptest.Alive(t, pid)
	if p, ok := stat(pid); !ok || p.ppid != os.Getpid() {
		t.Fatalf("orphan %d has parent %d, want this subreaper %d", pid, p.ppid, os.Getpid())
	}
	return cmd, pid
}

// F13 (issue 21): the setsid grandchild is ended and reaped, even when it
// ignores SIGTERM.
func TestEndKillsSetsidGrandchild(t *testing.T) {
	cmd, pid := session(t, reaptest.Stubborn)
	End(cmd, 100*time.Millisecond)
	reaptest.WaitGone(t, pid)
}

// Sessions run side by side (a study): ending one leaves the other's
// orphans alone.
func TestEndSparesOtherSessions(t *testing.T) {
	a, pa := session(t)
	b, pb := session(t)
	End(a, time.Second)
	reaptest.WaitGone(t, pa)
	reaptest.Alive(t, pb)
	End(b, time.Second)
	reaptest.WaitGone(t, pb)
}

// A command Mark never tagged is left alone, and so is one End already ended.
func TestEndWithoutMark(t *testing.T) {
	End(exec.Command("true"), time.Second)
	cmd, pid := session(t)
	End(cmd, time.Second)
	reaptest.WaitGone(t, pid)
	End(cmd, time.Second)
}

func TestParseStat(t *testing.T) {
	p, ok := parseStat(7, []byte("7 (a) b (c) Z 1 7 7 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 12345 0 0"))
	if !ok || p.ppid != 1 || !p.zombie || p.start != 12345 {
		t.Fatalf("got %+v %v", p, ok)
	}
	if _, ok := parseStat(7, []byte("7 (a) S 1")); ok {
		t.Fatal("a short line parsed")
	}
}

// A mark inherited from an mcpdrill this one runs under is not this
// command's: End must not end that outer session (and this process).
func TestInheritedMarkIsNotOurs(t *testing.T) {
	outer := markPrefix + "outer=1"
	t.Setenv(markPrefix+"outer", "1")
	cmd := exec.Command("true")
	cmd.Env = os.Environ()
	if got := markOf(cmd); got != "" {
		t.Fatalf("inherited mark taken as ours: %q", got)
	}
	Mark(cmd)
	if got := markOf(cmd); got == "" || got == outer || !slices.Contains(cmd.Env, outer) {
		t.Fatalf("mark %q, env keeps the outer one: %v", got, slices.Contains(cmd.Env, outer))
	}
}

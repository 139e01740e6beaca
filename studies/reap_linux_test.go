//go:build linux

package studies

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/reap"
	"github.com/mcpdrill/mcpdrill/internal/reap/reaptest"
)

func TestMain(m *testing.M) {
	reaptest.Run()
	// As the CLI does: orphans re-parent here, and must be reaped here.
	if err := reap.Subreaper(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// F13 (issue 21): a launch command's grandchild that called setsid
// outlived the study row, out of reach of the process-group kill.
func TestLaunchStopEndsSetsidGrandchild(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "pid")
	l, err := startLaunch([]string{exe, "-test.run=^$"}, reaptest.Env(file), "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pid := reaptest.Pid(t, file)
	reaptest.Alive(t, pid)
	l.stop(time.Second)
	reaptest.WaitGone(t, pid)
}

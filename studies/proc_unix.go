//go:build unix

package studies

import (
	"os/exec"
	"syscall"

	"github.com/mcpdrill/mcpdrill/internal/reap"
)

// ownGroup puts a launch process in its own process group so that stop
// reaches everything it spawned (npm bins often start node through a shell),
// and marks it so that kill also reaches what left the group (package reap).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	reap.Mark(cmd)
}

func terminate(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
}

func kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	reap.End(cmd, 0)
}

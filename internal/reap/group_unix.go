//go:build unix

package reap

import (
	"os/exec"
	"syscall"
)

// OwnGroup puts cmd in a process group of its own, so that TerminateGroup
// and KillGroup reach everything it spawns (npm bins often start node
// through a shell), and marks it (Mark) so that End also reaches what
// leaves the group. Call it after cmd.Env is set and before cmd.Start.
func OwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	Mark(cmd)
}

// TerminateGroup asks cmd's process group to stop: SIGTERM to the group.
// It does nothing for a command that did not start.
func TerminateGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
}

// KillGroup kills cmd's process group and cmd's own process: SIGKILL.
// It does nothing for a command that did not start.
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Process.Kill()
	}
}

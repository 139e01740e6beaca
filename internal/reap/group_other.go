//go:build !unix

package reap

import (
	"os"
	"os/exec"
)

// OwnGroup marks cmd (Mark); there are no process groups to join here.
func OwnGroup(cmd *exec.Cmd) { Mark(cmd) }

// TerminateGroup asks cmd's process to stop: an interrupt, or a kill where
// the system cannot deliver one (Windows). It does nothing for a command
// that did not start.
func TerminateGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		if cmd.Process.Signal(os.Interrupt) != nil {
			_ = cmd.Process.Kill()
		}
	}
}

// KillGroup kills cmd's process. It does nothing for a command that did not
// start.
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

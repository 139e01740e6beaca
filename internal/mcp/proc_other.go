//go:build !unix

package mcp

import (
	"os"
	"os/exec"
)

func ownProcessGroup(*exec.Cmd) {}

func terminateGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Signal(os.Interrupt)
	}
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

// signalOf names the signal that ended a process: not known here.
func signalOf(*os.ProcessState) string { return "" }

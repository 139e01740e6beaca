//go:build unix

package mcp

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// signalOf names the signal that ended a process ("" when it exited).
func signalOf(ps *os.ProcessState) string {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return unix.SignalName(ws.Signal())
	}
	return ""
}

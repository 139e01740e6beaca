//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// terminalWidth is the number of columns of the terminal f, from its window
// size.
func terminalWidth(f *os.File) (int, bool) {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return 0, false
	}
	return int(ws.Col), true
}

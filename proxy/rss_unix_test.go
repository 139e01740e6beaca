//go:build unix

package proxy

import (
	"os"
	"syscall"
)

// maxRSS is an exited process's peak resident set as the system reports
// it (KiB on Linux, bytes on macOS; 0 when unknown).
func maxRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss)
	}
	return 0
}

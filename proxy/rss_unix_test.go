//go:build unix

package proxy

import (
	"os"
	"runtime"
	"syscall"
)

// maxRSS is an exited process's peak resident set in KiB (0 when
// unknown). The system reports it in KiB on Linux and in bytes on macOS
// and iOS.
func maxRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
			return int64(ru.Maxrss) / 1024
		}
		return int64(ru.Maxrss)
	}
	return 0
}

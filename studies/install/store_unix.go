//go:build unix

package install

import (
	"io/fs"
	"syscall"
)

// linkCount is how many names the file has (1 where it cannot be told).
func linkCount(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

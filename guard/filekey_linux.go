//go:build linux

package guard

import (
	"io/fs"
	"strconv"
	"syscall"
)

// sysKey adds the device, inode and change time to a file's identity.
func sysKey(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return strconv.FormatUint(uint64(st.Dev), 10) + ":" + strconv.FormatUint(st.Ino, 10) + ":" +
		strconv.FormatInt(st.Ctim.Nano(), 10)
}

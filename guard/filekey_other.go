//go:build !linux

package guard

import "io/fs"

// sysKey has nothing beyond size and modification time to add here.
func sysKey(fs.FileInfo) string { return "" }

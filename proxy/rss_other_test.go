//go:build !unix

package proxy

import "os"

// maxRSS is 0: this system reports no peak resident set.
func maxRSS(*os.ProcessState) int64 { return 0 }

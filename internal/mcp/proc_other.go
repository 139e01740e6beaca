//go:build !unix

package mcp

import "os"

// signalOf names the signal that ended a process: not known here.
func signalOf(*os.ProcessState) string { return "" }

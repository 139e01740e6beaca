//go:build !linux

package pipes

import "os"

// Pollable returns f unchanged where it is not implemented.
func Pollable(f *os.File) (*os.File, func()) { return f, func() {} }

//go:build !linux

package pipes

// Grow does nothing where pipe buffers cannot be sized; it returns 0.
func Grow(f any, size int) int { return 0 }

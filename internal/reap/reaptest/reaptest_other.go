//go:build !linux

package reaptest

// Run does nothing here: the fixture needs Linux's /proc.
func Run() {}

// SpawnFromEnv does nothing here: the fixture needs Linux's /proc.
func SpawnFromEnv() error { return nil }

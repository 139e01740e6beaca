//go:build !linux

package reap

import "time"

// supported reports whether End can find marked processes here.
const supported = false

// Subreaper does nothing here: only Linux has child subreapers.
func Subreaper() error { return nil }

func end(string, int, time.Duration) {}

//go:build linux

package mcp

import (
	"path/filepath"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/reap/reaptest"
)

// F13 (issue 21): a grandchild that called setsid outlived Close, out of
// reach of the process-group kill. Close now ends it (scan and drift close
// their sessions this way).
func TestStdioCloseEndsSetsidGrandchild(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pid")
	c := connectFake(t, "orphan", func(cfg *Config) { cfg.Env = append(cfg.Env, reaptest.FileEnv(file)) })
	pid := reaptest.Pid(t, file)
	reaptest.Alive(t, pid)
	c.Close()
	reaptest.WaitGone(t, pid)
}

package proc

import (
	"context"
	"os/exec"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/reap"
)

// Run runs cmd in its own process group and waits for it. When ctx ends
// first, the group gets SIGTERM and, after grace, SIGKILL. Either way the
// group and every process cmd left behind (reap.End) are gone when Run
// returns.
func Run(ctx context.Context, cmd *exec.Cmd, grace time.Duration) error {
	reap.OwnGroup(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		Kill(cmd)
		return err
	case <-ctx.Done():
		reap.TerminateGroup(cmd)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case err := <-done:
			Kill(cmd)
			return err
		case <-t.C:
			Kill(cmd)
			return <-done
		}
	}
}

// Kill kills cmd's process group and ends what it left (package reap).
func Kill(cmd *exec.Cmd) {
	reap.KillGroup(cmd)
	reap.End(cmd, 0)
}

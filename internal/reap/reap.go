package reap

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// markPrefix starts the name of every mark. Each session's mark has a name
// of its own, so that a nested mcpdrill's child keeps its parent's mark too
// (os/exec keeps only the last value of a repeated name).
const markPrefix = "MCPDRILL_SESSION_"

// Mark tags cmd's environment with a fresh mark before it starts, so that
// End can find every process cmd leaves behind. Call it after cmd.Env is
// set and before cmd.Start; a nil cmd.Env is taken as the inherited
// environment. It does nothing where End cannot read marks.
func Mark(cmd *exec.Cmd) {
	if !supported {
		return
	}
	var b [12]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(slices.Clip(env), markPrefix+hex.EncodeToString(b[:])+"=1")
}

// End ends every process that carries cmd's mark, and their descendants:
// SIGTERM, up to grace for them to exit (0: none), then SIGKILL; it
// reaps the ones that were re-parented to this process and waits, within
// a bound, for the others to go. Call it when the session is over, after
// the server itself has exited or been killed; cmd's own process is left
// for cmd.Wait to reap. It does nothing for a command that did not start
// or that Mark did not tag.
func End(cmd *exec.Cmd, grace time.Duration) {
	if m := markOf(cmd); m != "" && cmd.Process != nil {
		end(m, cmd.Process.Pid, grace)
	}
}

// markOf returns the mark Mark gave cmd: the last one in its environment,
// unless that one is inherited (a mark of an mcpdrill this one runs under).
func markOf(cmd *exec.Cmd) string {
	for _, e := range slices.Backward(cmd.Env) {
		if strings.HasPrefix(e, markPrefix) {
			if slices.Contains(os.Environ(), e) {
				return ""
			}
			return e
		}
	}
	return ""
}

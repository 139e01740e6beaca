package studies

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/reap"
	"github.com/mcpdrill/mcpdrill/internal/redact"
)

// launched is a running launch process of an HTTP entry.
type launched struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	tail *tailBuffer
}

// startLaunch starts argv in its own process group with os.Environ() plus env.
func startLaunch(argv, env []string, dir string) (*launched, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	tail := &tailBuffer{max: 20}
	cmd.Stdout = tail
	cmd.Stderr = tail
	reap.OwnGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the launch command: %w", err)
	}
	l := &launched{cmd: cmd, done: make(chan struct{}), tail: tail}
	go func() {
		l.err = cmd.Wait()
		close(l.done)
	}()
	return l, nil
}

// waitReady polls addr until it accepts a TCP connection, the process exits,
// or timeout passes.
func (l *launched) waitReady(ctx context.Context, addr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	d := net.Dialer{Timeout: 250 * time.Millisecond}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			_ = c.Close()
			return nil
		}
		select {
		case <-l.done:
			return fmt.Errorf("the launch process exited (%v) before listening", exitText(l.err))
		case <-ctx.Done():
			return fmt.Errorf("the launch process did not listen within %s", timeout)
		case <-tick.C:
		}
	}
}

func exitText(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ProcessState.String()
	}
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// kill kills cmd's process group and ends what left it (package reap).
func kill(cmd *exec.Cmd) {
	reap.KillGroup(cmd)
	reap.End(cmd, 0)
}

// stop terminates the process group, escalating to SIGKILL after grace.
func (l *launched) stop(grace time.Duration) {
	reap.TerminateGroup(l.cmd)
	select {
	case <-l.done:
		// Children may outlive the leader; make sure the group is gone.
		kill(l.cmd)
	case <-time.After(grace):
		kill(l.cmd)
		<-l.done
	}
}

// addrOf returns host:port for a URL, with the scheme's default port.
func addrOf(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("url: %w", redact.URLError(err))
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}

// freePort asks the kernel for an unused loopback port.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), nil
}

// tailBuffer keeps the last max lines written to it.
type tailBuffer struct {
	mu      sync.Mutex
	max     int
	partial string
	lines   []string
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.partial + string(p)
	parts := strings.Split(s, "\n")
	t.partial = parts[len(parts)-1]
	if len(t.partial) > 4096 {
		t.partial = t.partial[:4096]
	}
	for _, line := range parts[:len(parts)-1] {
		if len(line) > 1000 {
			line = line[:1000]
		}
		t.lines = append(t.lines, line)
		if len(t.lines) > t.max {
			t.lines = t.lines[len(t.lines)-t.max:]
		}
	}
	return len(p), nil
}

func (t *tailBuffer) Lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]string(nil), t.lines...)
	if t.partial != "" {
		out = append(out, t.partial)
	}
	return out
}

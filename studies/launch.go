package studies

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"strconv"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/reap"
	"github.com/mcpdrill/mcpdrill/internal/redact"
	"github.com/mcpdrill/mcpdrill/studies/proc"
)

// launched is a running launch process of an HTTP entry.
type launched struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	tail *proc.Tail
}

// startLaunch starts argv in its own process group, in dir, with the
// environment of every program the study starts (proc.Env: scratch HOME
// work, the allow-list, then env).
func startLaunch(argv, env []string, dir, work string) (*launched, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = proc.Env(work, nil, env...)
	cmd.Dir = dir
	tail := &proc.Tail{Max: 20}
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

// stop terminates the process group, escalating to SIGKILL after grace.
func (l *launched) stop(grace time.Duration) {
	reap.TerminateGroup(l.cmd)
	select {
	case <-l.done:
		// Children may outlive the leader; make sure the group is gone.
		proc.Kill(l.cmd)
	case <-time.After(grace):
		proc.Kill(l.cmd)
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

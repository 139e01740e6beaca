// Package relay is the benchmark's yardstick: a process that spawns a
// child and copies bytes both ways without looking at them. Whatever a
// fault proxy costs beyond this is the proxy's own overhead.
package relay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"

	"github.com/mcpdrill/mcpdrill/internal/pipes"
)

// Run spawns argv (with environment env; nil inherits) using plain os.Pipe
// pipes and copies in → child stdin and child stdout → out until the child
// exits. It returns the child's status.
func Run(ctx context.Context, argv, env []string, in io.Reader, out io.Writer, errOut io.Writer) (int, error) {
	return RunPipes(ctx, argv, env, in, out, errOut, 0)
}

// RunPipes is Run with every pipe it touches (the child's, and in and out
// when they are pipes) grown to pipeSize bytes where the kernel allows; 0
// leaves them at the system's default.
func RunPipes(ctx context.Context, argv, env []string, in io.Reader, out io.Writer, errOut io.Writer, pipeSize int) (int, error) {
	if len(argv) == 0 {
		return 0, errors.New("relay: no command")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env, cmd.Stderr = env, errOut
	// Blocking on both sides of the client→server copy, as the proxy is:
	// a relay that reads its stdin blocking but writes its child's through
	// the poller waits up to 10 ms on a large request (pipes.BlockingStdin).
	child, err := pipes.Start(cmd, pipes.BlockingStdin)
	if err != nil {
		return 0, fmt.Errorf("relay: start: %w", err)
	}
	toChild, fromChild := child.Stdin, child.Stdout
	if pipeSize > 0 {
		for _, f := range []any{toChild, fromChild, in, out} {
			pipes.Grow(f, pipeSize)
		}
	}
	go func() {
		// onlyWriter: *os.File's ReadFrom would copy through a 32 KiB
		// buffer of its own instead of this one.
		_, _ = io.CopyBuffer(onlyWriter{toChild}, onlyReader{in}, make([]byte, 256<<10))
		toChild.Close()
	}()
	done := make(chan struct{})
	go func() {
		_, _ = io.CopyBuffer(onlyWriter{out}, onlyReader{fromChild}, make([]byte, 256<<10))
		close(done)
	}()
	werr := cmd.Wait()
	<-done
	fromChild.Close()
	return pipes.ExitStatus(cmd, werr), nil
}

type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

type onlyWriter struct{ w io.Writer }

func (o onlyWriter) Write(p []byte) (int, error) { return o.w.Write(p) }

// ServeTCP accepts connections on ln and copies bytes both ways between
// each one and a new connection to upstream, until ln is closed.
func ServeTCP(ln net.Listener, upstream string) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				return
			}
			defer u.Close()
			done := make(chan struct{})
			go func() {
				_, _ = io.Copy(u, c)
				if tc, ok := u.(*net.TCPConn); ok {
					_ = tc.CloseWrite()
				}
				close(done)
			}()
			_, _ = io.Copy(c, u)
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
			<-done
		}()
	}
}

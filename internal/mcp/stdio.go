package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/pipes"
	"github.com/mcpdrill/mcpdrill/internal/reap"
)

// Shutdown timing for stdio children (variables so tests can shorten them).
var (
	closeGrace = 2 * time.Second // after closing stdin
	termGrace  = 2 * time.Second // after SIGTERM
	exitDrain  = 250 * time.Millisecond
)

// maxStderrLine bounds one kept stderr line.
const maxStderrLine = 1024

// startExitWait bounds the wait, after a server's stdout closed during the
// handshake, for its exit status and the rest of its stderr.
const startExitWait = time.Second

// How a stdio server ended when the client closed the session (Shutdown.How).
const (
	// ShutdownStdinClosed: it exited within the grace after its stdin closed.
	ShutdownStdinClosed = "stdin_closed"
	// ShutdownTerminated: it ignored stdin closing; SIGTERM ended it.
	ShutdownTerminated = "sigterm"
	// ShutdownKilled: it ignored SIGTERM too; SIGKILL ended it.
	ShutdownKilled = "sigkill"
	// ShutdownExitedBefore: it had already exited when the session closed.
	ShutdownExitedBefore = "exited_before"
)

// Shutdown is how a stdio server ended when its session was closed.
type Shutdown struct {
	// How is one of the Shutdown* constants.
	How string
	// Elapsed runs from closing the server's stdin to its exit (0 for
	// ShutdownExitedBefore).
	Elapsed time.Duration
}

// StartError is a stdio server's failure to complete the handshake, with
// what became of its process and what it last wrote to stderr. It wraps
// the handshake's error (errors.Is(err, ErrServerExited), ErrTimeout, …).
type StartError struct {
	Err error
	// Exited is set when the process ended by itself before mcpdrill gave
	// up on it; ExitCode is then its status (-1 when a signal ended it) and
	// Signal the signal's name ("" when it exited).
	Exited   bool
	ExitCode int
	Signal   string
	// Stderr holds the last lines it wrote to stderr (at most
	// Config.StderrTail lines of at most 1 KiB each), as written: they may
	// hold anything, secrets included, and are for the caller to redact.
	Stderr []string
}

// Error implements error; it never includes the server's stderr.
func (e *StartError) Error() string {
	switch {
	case e.Exited && e.Signal != "":
		return fmt.Sprintf("mcp: the server was killed by %s during the handshake: %v", e.Signal, e.Err)
	case e.Exited:
		return fmt.Sprintf("mcp: the server exited with status %d during the handshake: %v", e.ExitCode, e.Err)
	}
	return fmt.Sprintf("mcp: the server did not complete the handshake: %v", e.Err)
}

// Unwrap returns the handshake's error.
func (e *StartError) Unwrap() error { return e.Err }

// stdioConn is a child process speaking NDJSON.
type stdioConn struct {
	cmd   *exec.Cmd
	stdin *os.File
	out   *os.File
	errR  *os.File
	mux   *mux
	obs   *observer

	// wsem serialises writes to stdin (a channel so waiting honours ctx).
	wsem chan struct{}

	replies chan []byte
	stop    chan struct{}

	readDone   chan struct{}
	waitDone   chan struct{}
	stderrDone chan struct{}

	// started is when the process was started; spoke is closed when it
	// first wrote a line to stdout (the end of its start-up).
	started   time.Time
	spoke     chan struct{}
	spokeOnce sync.Once

	mu         sync.Mutex
	exitCode   int
	exitSignal string
	exited     bool
	// shutdown is how close ended the server (set once close has).
	shutdown Shutdown
	ring     []string
	ringNext int
	ringFull bool

	closeOnce sync.Once
}

func startStdio(cfg Config, obs *observer) (*stdioConn, error) {
	if len(cfg.Command) == 0 || cfg.Command[0] == "" {
		return nil, fmt.Errorf("mcp: empty command")
	}
	cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
	cmd.Env = append(os.Environ(), cfg.Env...)
	if cfg.CleanEnv {
		cmd.Env = slices.Clone(cfg.Env)
	}
	cmd.Dir = cfg.Dir
	reap.OwnGroup(cmd)
	child, err := pipes.Start(cmd, pipes.Stderr)
	if errors.Is(err, pipes.ErrPipe) {
		return nil, fmt.Errorf("mcp: %w", err)
	}
	if err != nil {
		// Only argv[0] is named: later arguments may carry secrets.
		return nil, fmt.Errorf("%w: start %q: %w", ErrUnreachable, cfg.Command[0], unwrapExecErr(err))
	}
	s := &stdioConn{
		cmd: cmd, stdin: child.Stdin, out: child.Stdout, errR: child.Stderr, obs: obs,
		mux:        newMux(obs),
		wsem:       make(chan struct{}, 1),
		replies:    make(chan []byte, 64),
		stop:       make(chan struct{}),
		readDone:   make(chan struct{}),
		waitDone:   make(chan struct{}),
		stderrDone: make(chan struct{}),
		started:    time.Now(),
		spoke:      make(chan struct{}),
		ring:       make([]string, cfg.StderrTail),
	}
	s.mux.answer = s.queueReply
	go s.readLoop(cfg.MaxFrame)
	go s.stderrLoop()
	go s.replyLoop()
	go s.waitLoop()
	return s, nil
}

func unwrapExecErr(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (s *stdioConn) readLoop(max int) {
	defer close(s.readDone)
	lr := jsonrpc.NewLineReader(s.out, max)
	lr.KeepEdges(jsonrpc.OversizeEdge)
	for {
		line, err := lr.ReadLine()
		if err == nil || errors.Is(err, jsonrpc.ErrFrameTooLarge) {
			s.spokeOnce.Do(func() { close(s.spoke) })
		}
		switch {
		case err == nil:
			s.mux.dispatchFrame(line)
		case errors.Is(err, jsonrpc.ErrFrameTooLarge):
			n, head, tail := lr.Oversize()
			s.obs.count("oversize-frame", fmt.Sprintf("line of %d bytes exceeds the %d-byte cap", n, max))
			lost := fmt.Errorf("%w: reply of %d bytes discarded", ErrFrameTooLarge, n)
			switch id, reply := jsonrpc.OversizeID(head, tail); {
			case !reply: // a request or notification of the server's: it answers nothing
			case id == nil || !s.mux.failKey(idKey(id), lost):
				s.mux.failSole(lost)
			}
		default:
			if s.isClosing() {
				s.mux.fail(ErrClosed)
			} else {
				s.mux.fail(fmt.Errorf("%w: stdout closed", ErrServerExited))
			}
			return
		}
	}
}

// hasSpoken reports whether the server has written a line to stdout.
func (s *stdioConn) hasSpoken() bool {
	select {
	case <-s.spoke:
		return true
	default:
		return false
	}
}

func (s *stdioConn) isClosing() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

func (s *stdioConn) stderrLoop() {
	defer close(s.stderrDone)
	lr := jsonrpc.NewLineReader(s.errR, maxStderrLine)
	lr.KeepEdges(maxStderrLine)
	for {
		line, err := lr.ReadLine()
		if errors.Is(err, jsonrpc.ErrFrameTooLarge) {
			_, line, _ = lr.Oversize() // keep the start of a long line
			err = nil
		}
		if err != nil {
			return
		}
		s.addStderr(string(line))
	}
}

func (s *stdioConn) addStderr(line string) {
	s.obs.count("stderr", "server wrote to stderr (lines counted)")
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ring) == 0 {
		return
	}
	s.ring[s.ringNext] = line
	s.ringNext = (s.ringNext + 1) % len(s.ring)
	if s.ringNext == 0 {
		s.ringFull = true
	}
}

func (s *stdioConn) stderrTail() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ringFull {
		return append([]string(nil), s.ring[:s.ringNext]...)
	}
	out := append([]string(nil), s.ring[s.ringNext:]...)
	return append(out, s.ring[:s.ringNext]...)
}

func (s *stdioConn) waitLoop() {
	err := s.cmd.Wait()
	s.mu.Lock()
	s.exited = true
	s.exitCode = s.cmd.ProcessState.ExitCode()
	s.exitSignal = signalOf(s.cmd.ProcessState)
	code := s.exitCode
	s.mu.Unlock()
	close(s.waitDone)
	// Replies already in the pipe still count: give the reader a moment to
	// reach EOF before failing what is pending (a grandchild may hold stdout).
	select {
	case <-s.readDone:
	case <-time.After(exitDrain):
		if s.isClosing() {
			s.mux.fail(ErrClosed)
		} else {
			s.mux.fail(fmt.Errorf("%w: exit status %d (%v)", ErrServerExited, code, err))
		}
	}
}

func (s *stdioConn) exitStatus() (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exitCode, s.exited
}

// startError describes a server that failed the handshake with err, then
// stops it. A server whose stdout closed is given a moment to exit, and its
// stderr a moment to drain, so that its status and last words are known.
func (s *stdioConn) startError(err error) *StartError {
	if errors.Is(err, ErrServerExited) {
		t := time.NewTimer(startExitWait)
		select {
		case <-s.waitDone:
			select {
			case <-s.stderrDone:
			case <-t.C:
			}
		case <-t.C:
		}
		t.Stop()
	}
	s.mu.Lock()
	e := &StartError{Err: err, Exited: s.exited, ExitCode: s.exitCode, Signal: s.exitSignal}
	s.mu.Unlock()
	_ = s.close()
	e.Stderr = s.stderrTail()
	return e
}

func (s *stdioConn) queueReply(frame []byte) {
	select {
	case s.replies <- frame:
	default:
		s.obs.count("dropped-reply", "too many server requests queued; reply dropped")
	}
}

func (s *stdioConn) replyLoop() {
	for {
		select {
		case <-s.stop:
			return
		case f := <-s.replies:
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = s.write(ctx, f)
			cancel()
		}
	}
}

// write sends one frame plus newline, bounded by ctx's deadline.
func (s *stdioConn) write(ctx context.Context, frame []byte) error {
	if s.isClosing() {
		return ErrClosed
	}
	buf := frame
	if len(buf) == 0 || buf[len(buf)-1] != '\n' {
		buf = make([]byte, len(frame)+1)
		copy(buf, frame)
		buf[len(frame)] = '\n'
	}
	select {
	case s.wsem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("%w: server is not reading stdin", ErrTimeout)
	}
	dl, _ := ctx.Deadline()
	_ = s.stdin.SetWriteDeadline(dl)
	n, err := s.stdin.Write(buf)
	if err == nil {
		<-s.wsem
		return nil
	}
	if errors.Is(err, os.ErrDeadlineExceeded) && n > 0 {
		// Half a frame is in the pipe: finish it in the background so the
		// framing stays intact; later writes wait their turn (or time out),
		// and Close unblocks this by closing stdin.
		s.obs.count("stdin-blocked", "server stopped reading stdin mid-frame")
		rest := buf[n:]
		go func() {
			_ = s.stdin.SetWriteDeadline(time.Time{})
			_, _ = s.stdin.Write(rest)
			<-s.wsem
		}()
	} else {
		<-s.wsem
	}
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("%w: server is not reading stdin", ErrTimeout)
	case s.isClosing():
		return ErrClosed
	default:
		return fmt.Errorf("%w: write to stdin: %w", ErrServerExited, err)
	}
}

// roundTrip implements transport.
func (s *stdioConn) roundTrip(ctx context.Context, r outgoing) (*reply, error) {
	ch, err := s.mux.register(r.key, r.rawNull)
	if err != nil {
		return nil, err
	}
	if err := s.write(ctx, r.frame); err != nil {
		s.mux.done(r.key, ch, false)
		return nil, err
	}
	d, err := s.mux.waitDelivery(ctx, r.key, ch)
	if err != nil {
		return nil, err
	}
	return &reply{msg: d.msg, seq: d.seq}, nil
}

func (s *stdioConn) notify(ctx context.Context, frame []byte, _ http.Header) (*reply, error) {
	return nil, s.write(ctx, frame)
}

func (s *stdioConn) inFlight() int { return s.mux.inFlight() }

// close: close stdin, wait, SIGTERM the group, wait, SIGKILL the group;
// then end what left the group (a setsid grandchild: see package reap).
// How the server ended, and when, is kept (Client.Shutdown).
func (s *stdioConn) close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		how := ShutdownStdinClosed
		select {
		case <-s.waitDone:
			how = ShutdownExitedBefore
		default:
		}
		start := time.Now()
		s.stdin.Close() // also unblocks a pending write
		select {
		case <-s.waitDone:
			// The server left on its own; stop anything it left behind.
			reap.TerminateGroup(s.cmd)
		case <-time.After(closeGrace):
			s.obs.note("shutdown", "server ignored stdin EOF; sent SIGTERM")
			how = ShutdownTerminated
			reap.TerminateGroup(s.cmd)
			select {
			case <-s.waitDone:
			case <-time.After(termGrace):
				s.obs.note("shutdown", "server ignored SIGTERM; sent SIGKILL")
				how = ShutdownKilled
				reap.KillGroup(s.cmd)
				<-s.waitDone
			}
		}
		s.mu.Lock()
		s.shutdown = Shutdown{How: how, Elapsed: time.Since(start)}
		if how == ShutdownExitedBefore {
			s.shutdown.Elapsed = 0
		}
		s.mu.Unlock()
		reap.End(s.cmd, closeGrace)
		// The child is gone; a grandchild may still hold stdout/stderr open.
		s.out.Close()
		s.errR.Close()
		<-s.readDone
		s.mux.fail(ErrClosed)
	})
	return nil
}

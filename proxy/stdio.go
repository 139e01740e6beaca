package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/mcpdrill/mcpdrill/faults"
	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/pipes"
	"github.com/mcpdrill/mcpdrill/internal/reap"
)

// StdioOptions configures a stdio relay.
//
//	client stdin ──► pump c2s ──► child stdin
//	client stdout ◄── pump s2c ◄── child stdout
//	client stderr ◄────────────── child stderr (passed straight through)
type StdioOptions struct {
	Config
	// Command is the server's argv.
	Command []string
	// Env is the child's environment (nil: inherit).
	Env []string
	// Dir is the child's working directory ("" : inherit).
	Dir string
	// Stdin and Stdout are the client side. Stderr receives the child's
	// stderr (give an *os.File to let the child write to it directly).
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Signals are forwarded to the child (SIGINT, SIGTERM …).
	Signals <-chan os.Signal
	// Grace is how long the child gets to exit after its stdin closes
	// before SIGTERM, and again before SIGKILL (0: 5s).
	Grace time.Duration
}

// pipeSize is the buffer the stdio proxy asks for on its pipes. 256 KiB
// keeps most of what larger pipes save on megabyte frames while charging
// the user's pipe-buffer budget (pipe-user-pages-soft, 64 MiB by default;
// past it Linux gives every new pipe of the user a single page) about
// 0.75 MiB per proxy beyond the default pipes.
const pipeSize = 256 << 10

// RunStdio spawns the server and relays until the server exits. It returns
// the server's exit status (128+signal when it was killed by a signal).
// The error is for the relay's own failures (the server could not start).
// Stdin is read as given; a process's inherited stdin is read blocking,
// and nothing interrupts such a read. So the client→server pump may still
// be reading when RunStdio returns: it ends at Stdin's EOF or error, and
// discards what it reads once the server is gone.
func RunStdio(ctx context.Context, o StdioOptions) (int, error) {
	if len(o.Command) == 0 {
		return 0, errors.New("proxy: no server command")
	}
	if o.Grace <= 0 {
		o.Grace = 5 * time.Second
	}
	cmd := exec.Command(o.Command[0], o.Command[1:]...)
	cmd.Env, cmd.Dir = o.Env, o.Dir
	cmd.Stderr = o.Stderr
	reap.Mark(cmd)
	// The client→server pump blocks in its reads of stdin, so it writes
	// the server's stdin blocking too (pipes.BlockingStdin).
	child, err := pipes.Start(cmd, pipes.BlockingStdin)
	if err != nil {
		return 0, fmt.Errorf("proxy: start %s: %w", o.Command[0], err)
	}
	toChild, fromChild := child.Stdin, child.Stdout
	// Large frames cross a pipe in fewer hand-offs when it holds more:
	// the child's pipes, and the client's when they are pipes, are grown
	// to pipeSize (where the kernel allows; nothing else changes).
	for _, f := range []any{toChild, fromChild, o.Stdin, o.Stdout} {
		pipes.Grow(f, pipeSize)
	}

	s := &stdioSession{
		eng:    newEngine(o.Config),
		cmd:    cmd,
		client: &sink{w: o.Stdout},
		server: &sink{w: toChild, c: toChild},
	}
	if c, ok := o.Stdout.(io.Closer); ok {
		s.client.c = c
	}
	if o.Guard != nil {
		o.Guard.Attach(func(b []byte) { s.server.write(b, newline) }, nil, func(b []byte) { s.client.write(b, newline) })
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()

	s2cDone := make(chan struct{})
	go func() {
		defer close(s2cDone)
		s.pump(faults.ToClient, fromChild, s.client, s.server)
		s.delays.Wait()
		s.client.close()
	}()
	go func() {
		s.pump(faults.ToServer, o.Stdin, s.server, s.client)
		s.delays.Wait()
		s.server.close()
		// The client is gone: give the server time to exit on EOF.
		select {
		case <-exited:
			return
		case <-time.After(o.Grace):
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(o.Grace):
			_ = cmd.Process.Kill()
		}
	}()

	for done := false; !done; {
		select {
		case sig := <-o.Signals:
			_ = cmd.Process.Signal(sig)
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			<-exited
			done = true
		case <-exited:
			done = true
		}
	}
	// End what the server left behind, a grandchild in a session of its
	// own included (see package reap). One that still holds the server's
	// stdout and survived: do not wait forever for its EOF.
	reap.End(cmd, o.Grace)
	select {
	case <-s2cDone:
	case <-time.After(o.Grace):
		fromChild.Close()
		<-s2cDone
	}
	fromChild.Close()
	return pipes.ExitStatus(cmd, waitErr), nil
}

// sink is one destination; writes are serialised so frames never interleave.
// After a write error or close it discards everything.
type sink struct {
	mu   sync.Mutex
	w    io.Writer
	c    io.Closer
	dead bool
}

// write writes parts in order; it reports whether the sink is still
// alive afterwards.
func (s *sink) write(parts ...[]byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writeLocked(parts...)
	return !s.dead
}

func (s *sink) writeLocked(parts ...[]byte) {
	if s.dead {
		return
	}
	for _, p := range parts {
		if len(p) == 0 {
			continue
		}
		if _, err := s.w.Write(p); err != nil {
			s.dead = true
			return
		}
	}
}

// slow writes b in chunks with gaps, holding the sink so the frame is not
// interleaved with others: the stream is as busy as a slow link would be.
func (s *sink) slow(b []byte, chunk int, gap time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(b) > 0 && !s.dead {
		n := min(chunk, len(b))
		s.writeLocked(b[:n])
		b = b[n:]
		if len(b) > 0 {
			time.Sleep(gap)
		}
	}
}

func (s *sink) isDead() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dead
}

func (s *sink) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dead = true
	if s.c != nil {
		_ = s.c.Close()
		s.c = nil
	}
}

type stdioSession struct {
	eng            *engine
	cmd            *exec.Cmd
	client, server *sink
	delays         sync.WaitGroup
}

// disconnect closes both streams (the disconnect fault, mode close); a
// sink closes once, so it may run more than once.
func (s *stdioSession) disconnect() {
	s.client.close()
	s.server.close()
}

// pump relays one direction. dst is where frames go; back is the sender's
// side, for replies the proxy makes on the server's behalf.
//
// Three modes, from cheapest:
//   - copy: nothing can change in either direction ([engine.inert]: no
//     plan, or no rule can fire any more, and no guard): a plain
//     byte copy, like the relay;
//   - stream (cut-through): nothing can change in this direction
//     ([passAll]): bytes are forwarded as they arrive and
//     every complete line is accounted for (index, peek, correlation, rule
//     counts) before the write that ends it;
//   - store (store-and-forward): a rule may fire on this line, so it is
//     read whole, decided, then written.
//
// Between stream and store the choice is made per line, before its first
// byte: a line on which no rule can fire ([passLine]: the
// counts and the roll at the index the line will get) is forwarded as it
// arrives (streamLine) and accounted for before its last byte is written;
// the others are stored. A pump moves to the stream mode for good once its
// direction can no longer change (a rule's limit or nth is behind it).
func (s *stdioSession) pump(dir faults.Direction, src io.Reader, dst, back *sink) {
	if s.eng.inert() {
		copyBytes(src, dst)
		return
	}
	max := s.eng.cfg.MaxFrame
	if max <= 0 {
		max = jsonrpc.DefaultMaxFrame
	}
	keep := keepCap(max)
	lb := jsonrpc.NewLineBuf(src)
	defer func() {
		if !errors.Is(lb.Err, io.EOF) {
			_, _ = io.Copy(io.Discard, src)
		}
	}()
	for {
		lb.Begin()
		// The choice is made once the line's first byte is here: a reply
		// can only answer a request recorded by then (the other pump
		// records a request before its last byte goes out).
		lb.Wait()
		switch l, seq := s.eng.choose(dir); l {
		case passAll:
			s.stream(dir, lb, dst, keep)
			return
		case passLine:
			if !s.streamLine(dir, lb, dst, keep, seq) {
				return
			}
			continue
		}
		if !s.storeLine(dir, lb, dst, back, keep) {
			return
		}
	}
}

// readBuf is the line buffer's first size: a line that fits is examined
// whatever MaxFrame says; a longer one is examined up to MaxFrame.
const readBuf = jsonrpc.LineBufSize

// keepCap is the longest line (terminator included) the proxy examines:
// one that fits the first buffer, or one within the frame cap. Every mode
// keeps the same rule, so all account for the same frames.
func keepCap(maxFrame int) int { return max(readBuf, maxFrame+2) }

// copyBytes relays src to dst unexamined.
func copyBytes(src io.Reader, dst *sink) {
	buf := make([]byte, 256<<10)
	_, _ = io.CopyBuffer(writerFunc(func(p []byte) (int, error) {
		if !dst.write(p) {
			return 0, io.ErrClosedPipe
		}
		return len(p), nil
	}), onlyReader{src}, buf)
	if dst.isDead() {
		_, _ = io.Copy(io.Discard, src)
	}
}

// storeLine is the store mode for one line: the line is read whole, then
// frame decides and writes. A line past keep is passed through as it
// arrives, unexamined. It reports whether input may follow.
func (s *stdioSession) storeLine(dir faults.Direction, lb *jsonrpc.LineBuf, dst, back *sink, keep int) bool {
	long := false // past keep: written as it comes
	guarded := s.eng.cfg.Guard != nil
	var head []byte // guarded: the start of a line past keep, which is never forwarded
	for {
		if end, ok := lb.LineEnd(); ok {
			switch {
			case guarded && (long || end-lb.Start > keep):
				if head == nil {
					head = bytes.Clone(lb.Buf[lb.Start:min(end, lb.Start+jsonrpc.MaxHead)])
				}
				f, a := s.eng.unexamined(dir, head, false)
				s.execute(dir, f, a, head, dst, back)
			case long || end-lb.Start > keep:
				dst.write(lb.Buf[lb.Start:end])
			default:
				s.frame(dir, lb.Buf[lb.Start:end], dst, back)
			}
			return true
		}
		if long || lb.End-lb.Start > keep {
			long = true
			if !guarded {
				dst.write(lb.Buf[lb.Start:lb.End])
			} else if head == nil {
				head = bytes.Clone(lb.Buf[lb.Start:min(lb.End, lb.Start+jsonrpc.MaxHead)])
			}
			lb.Drop()
		}
		if !lb.Fill() {
			switch {
			case long && guarded:
				f, a := s.eng.unexamined(dir, head, false)
				s.execute(dir, f, a, head, dst, back)
			case !long && lb.End > lb.Start:
				s.frame(dir, lb.Buf[lb.Start:lb.End], dst, back) // a last line with no terminator
				lb.Scanned = lb.End
			}
			return false
		}
	}
}

// stream is the cut-through mode for good: each read is written at once,
// as the relay does, after every line it completes has been accounted for.
// A line that spans reads stays in the buffer (up to keep) until its end
// arrives, so the peek sees the whole frame and the counts are exactly the
// store mode's; a line's last non-blank byte is written only after the
// line has been accounted for ([heldFrom]), so a reply to it cannot
// overtake its correlation, even from a receiver that does not wait for
// the newline.
func (s *stdioSession) stream(dir faults.Direction, lb *jsonrpc.LineBuf, dst *sink, keep int) {
	out := lb.Start // the first byte not yet written
	long := false
	for {
		for {
			end, ok := lb.LineEnd()
			if !ok {
				break
			}
			if !long && end-lb.Start <= keep {
				s.account(dir, lb.Buf[lb.Start:end], allSeq)
			}
			lb.Start, long = end, false
		}
		out, long = passOn(lb, dst, out, long, keep)
		if lb.Start == lb.End {
			lb.Begin() // nothing pending: start over at the front
			out = lb.Start
		}
		var more bool
		if out, more = s.readOn(dir, lb, dst, out, long, allSeq); !more {
			return
		}
	}
}

// passOn writes the current line's bytes from out on, but for its last
// non-blank byte and the blanks after it (see [heldFrom]), and forgets
// them once the line is past keep (long): a long line is never accounted
// for, so it is written whole. It returns the new out and long.
func passOn(lb *jsonrpc.LineBuf, dst *sink, out int, long bool, keep int) (int, bool) {
	if long || lb.End-lb.Start > keep {
		dst.write(lb.Buf[out:lb.End])
		lb.Drop()
		return lb.Start, true
	}
	to := max(out, heldFrom(lb))
	dst.write(lb.Buf[out:to])
	return to, false
}

// heldFrom returns where the bytes of the current, unfinished line that
// must wait for its end begin: at its last non-blank byte. A receiver that
// decodes JSON as it arrives, rather than line by line (the Go SDK's stdio
// transport does), acts on a frame once its closing brace is in, before
// the newline; until the line is accounted for (its request recorded, so
// the reply is correlated with it) the frame must not be complete at the
// receiver. A line of blanks alone holds nothing back.
func heldFrom(lb *jsonrpc.LineBuf) int {
	i := lb.End
	for i > lb.Start && isBlank(lb.Buf[i-1]) {
		i--
	}
	if i == lb.Start {
		return lb.End
	}
	return i - 1
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// readOn reads more of a line whose bytes before out are written (the
// rest held back by passOn). At the end of input a last line with no
// terminator is accounted for (unless long), then what was held back is
// written. It returns out moved with the line, and whether input may
// follow.
func (s *stdioSession) readOn(dir faults.Direction, lb *jsonrpc.LineBuf, dst *sink, out int, long bool, seq uint64) (int, bool) {
	ls := lb.Start
	more := lb.Fill()
	out -= ls - lb.Start // the line may have moved to the front
	if !more {
		if !long && lb.End > lb.Start {
			s.account(dir, lb.Buf[lb.Start:lb.End], seq)
			lb.Scanned = lb.End
		}
		dst.write(lb.Buf[out:lb.End])
		return lb.End, false
	}
	return out, true
}

// streamLine forwards one line (the next in dir, on which no rule can fire)
// as it arrives: each read's part of it is written at once but for the
// last non-blank byte ([heldFrom]), which is written with the line's end
// after the whole line has been accounted for, so a reply to it cannot
// overtake its correlation. The lines it examines are
// those the store mode examines. It reports whether input may follow.
func (s *stdioSession) streamLine(dir faults.Direction, lb *jsonrpc.LineBuf, dst *sink, keep int, seq uint64) bool {
	out := lb.Start // the first byte not yet written
	long := false
	for {
		if end, ok := lb.LineEnd(); ok {
			if !long && end-lb.Start <= keep {
				s.account(dir, lb.Buf[lb.Start:end], seq)
			}
			dst.write(lb.Buf[out:end])
			return true
		}
		out, long = passOn(lb, dst, out, long, keep)
		var more bool
		if out, more = s.readOn(dir, lb, dst, out, long, seq); !more {
			return false
		}
	}
}

// account runs a line the stream mode already forwards through the engine
// for its index, correlation and counts; no fault can fire on it.
func (s *stdioSession) account(dir faults.Direction, line []byte, seq uint64) {
	body := bytes.TrimRight(line, "\r\n")
	if len(bytes.TrimSpace(body)) == 0 {
		return
	}
	s.eng.account(dir, body, seq)
}

// frame handles one line (with its terminator, if any).
func (s *stdioSession) frame(dir faults.Direction, line []byte, dst, back *sink) {
	body := bytes.TrimRight(line, "\r\n")
	if len(bytes.TrimSpace(body)) == 0 {
		dst.write(line)
		return
	}
	f, a := s.eng.process(dir, body)
	s.execute(dir, f, a, line, dst, back)
}

// execute carries out the action a decided for frame f, read as line
// (with its terminator, if any).
func (s *stdioSession) execute(dir faults.Direction, f faults.Frame, a faults.Action, line []byte, dst, back *sink) {
	body := bytes.TrimRight(line, "\r\n")
	term := line[len(body):] // the line's own terminator, else a newline
	if len(term) == 0 {
		term = newline
	}
	execute(&f, a, &linePort{s: s, line: line, term: term, dst: dst, back: back})
}

// linePort is a stdio line's port: dst is where it goes, back its sender.
type linePort struct {
	s         *stdioSession
	line      []byte
	term      []byte
	dst, back *sink
}

func (p *linePort) forward()            { p.dst.write(p.line) }
func (p *linePort) deliver(b []byte)    { p.dst.write(b, p.term) }
func (p *linePort) deliverCut(b []byte) { p.dst.write(b, p.term) } // the newline ends the cut frame
func (p *linePort) extra(b []byte)      { p.dst.write(b, newline) }
func (p *linePort) replyBack(b []byte)  { p.back.write(b, newline) }
func (p *linePort) drop()               {}
func (p *linePort) withhold()           {}
func (p *linePort) disconnect()         { p.s.disconnect() }
func (p *linePort) dribble(b []byte, chunk int, gap time.Duration) {
	p.dst.slow(append(append([]byte(nil), b...), p.term...), chunk, gap)
}

// delay writes the frame after d, from a copy: the line buffer moves on.
// The copy lies in a pooled buffer when it is large (heldBody), so that a
// stream of delayed large frames does not page in fresh memory for each.
func (p *linePort) delay(b []byte, d time.Duration) {
	out := newHeldBody(int64(len(b) + len(p.term)))
	copy(out.b[copy(out.b, b):], p.term)
	p.s.delays.Add(1)
	time.AfterFunc(d, func() {
		defer p.s.delays.Done()
		p.dst.write(out.b)
		out.release()
	})
}

// kill ends the server here: nothing it wrote after this frame arrives.
func (p *linePort) kill() {
	_ = p.s.cmd.Process.Kill()
	p.s.disconnect()
}

// newline ends a frame the proxy writes; sinks never modify what they write.
var newline = []byte("\n")

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// onlyReader hides WriterTo/ReaderFrom so CopyBuffer uses the buffer.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

package testbed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// maxInFrame caps one incoming line.
const maxInFrame = 16 << 20

// ServeStdio serves one client over newline-delimited JSON: requests are
// read from in, frames written to stdout, and a start-up line and problems go
// to errOut. It returns nil at the end of in, ctx.Err() when ctx ends, and
// ErrCrashed when a `crash` profile dies on purpose. The read from in is not
// interruptible: after a cancellation the reading goroutine ends only when in
// does. A `flood` profile returns once its noise writer has stopped, which
// needs out to accept or fail a write.
func ServeStdio(ctx context.Context, o Options, in io.Reader, stdout, errOut io.Writer) error {
	e, err := newEngine(o)
	if err != nil {
		return err
	}
	if errOut == nil {
		errOut = io.Discard
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &stdioWriter{w: stdout, noisy: e.p.b.noisy}
	send := func(f []byte) { _ = w.frame(f) }
	c := e.newConn(send)
	c.listenF = func(s *sink) int {
		s.send = send
		return e.addSink(s)
	}
	defer c.close()
	fmt.Fprintf(errOut, "mcpdrill testbed: profile %s, revisions %s, serving on stdio\n",
		e.p.Name, strings.Join(e.o.Revisions, " "))
	if e.p.b.noisy {
		if err := w.log("Starting " + serverName + " (profile " + e.p.Name + ") on stdio..."); err != nil {
			return fmt.Errorf("testbed: write: %w", err)
		}
	}
	if e.p.b.preamble != "" {
		if _, err := io.WriteString(stdout, e.p.b.preamble+"\n"); err != nil {
			return fmt.Errorf("testbed: write: %w", err)
		}
	}
	if e.p.b.flood {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.flood(ctx, e.o)
		}()
		defer wg.Wait()
		defer cancel()
	}

	type item struct {
		line   []byte
		tooBig bool
		err    error
	}
	items := make(chan item)
	done := make(chan struct{})
	defer close(done)
	go func() {
		lr := jsonrpc.NewLineReader(in, maxInFrame)
		for {
			line, err := lr.ReadLine()
			it := item{line: append([]byte(nil), line...), err: err}
			if errors.Is(err, jsonrpc.ErrFrameTooLarge) {
				it = item{tooBig: true}
			}
			select {
			case items <- it:
			case <-done:
				return
			}
			if it.err != nil {
				return
			}
		}
	}()
	if e.p.b.slowStart {
		// Starting up: what the client writes meanwhile waits, in order.
		t := time.NewTimer(e.o.StartDelay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case it := <-items:
			if it.err != nil {
				if errors.Is(it.err, io.EOF) {
					if e.p.b.linger {
						// Stays up after its client left, until stopped.
						<-ctx.Done()
						return ctx.Err()
					}
					return nil
				}
				return fmt.Errorf("testbed: read: %w", it.err)
			}
			var o *out
			if it.tooBig {
				fmt.Fprintf(errOut, "mcpdrill testbed: dropped a line over %d bytes\n", maxInFrame)
				o = c.fail(nil, ekInvalidRequest, "the message is too large", nil)
			} else {
				o = c.handle(ctx, it.line, nil)
			}
			if err := w.write(o); err != nil {
				if errors.Is(err, ErrCrashed) {
					fmt.Fprintln(errOut, "mcpdrill testbed: crashing on purpose")
					return err
				}
				return fmt.Errorf("testbed: write: %w", err)
			}
		}
	}
}

// stdioWriter serializes frames, log lines and noise on stdout.
type stdioWriter struct {
	mu    sync.Mutex
	w     io.Writer
	noisy bool
}

func (s *stdioWriter) frame(f []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frameLocked(f)
}

func (s *stdioWriter) frameLocked(f []byte) error {
	if s.noisy {
		if _, err := fmt.Fprintf(s.w, "[testbed] INFO sending a %d-byte frame\n", len(f)); err != nil {
			return err
		}
	}
	buf := make([]byte, 0, len(f)+1)
	buf = append(append(buf, f...), '\n')
	_, err := s.w.Write(buf)
	return err
}

func (s *stdioWriter) log(line string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := io.WriteString(s.w, "[testbed] INFO "+line+"\n")
	return err
}

// write sends everything o asks for.
func (s *stdioWriter) write(o *out) error {
	if o == nil || o.hang {
		return nil
	}
	s.mu.Lock()
	if o.stream != nil {
		if s.noisy {
			if _, err := io.WriteString(s.w, "[testbed] INFO sending a huge frame\n"); err != nil {
				s.mu.Unlock()
				return err
			}
		}
		err := o.stream(s.w)
		if err == nil {
			_, err = s.w.Write([]byte{'\n'})
		}
		if err != nil {
			s.mu.Unlock()
			return err
		}
	}
	for i, f := range o.frames {
		if o.crash && i == len(o.frames)-1 {
			_, err := s.w.Write(f[:len(f)/2])
			s.mu.Unlock()
			if err != nil {
				return err
			}
			return ErrCrashed
		}
		if err := s.frameLocked(f); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	s.mu.Unlock()
	if o.after != nil {
		o.after()
	}
	return nil
}

// flood writes noise until ctx ends or a write fails: a plain-text line and
// a large notifications/message, alternately.
func (s *stdioWriter) flood(ctx context.Context, o Options) {
	noise := noiseText(o.Seed, o.NoiseBytes)
	note, _ := jsonrpc.NewNotification("notifications/message", map[string]any{
		"level": "debug", "logger": "flood", "data": string(noise),
	})
	line := append(append([]byte("flood "), noise...), '\n')
	note = append(note, '\n')
	for i := 0; ctx.Err() == nil; i++ {
		b := line
		if i%2 == 1 {
			b = note
		}
		s.mu.Lock()
		_, err := s.w.Write(b)
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// noiseText is n printable bytes derived from seed.
func noiseText(seed uint64, n int) []byte {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 "
	r := newRNG(seed, "noise")
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.intn(len(alphabet))]
	}
	return b
}

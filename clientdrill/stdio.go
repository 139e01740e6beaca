package clientdrill

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// stdioServer serves a scenario to stdio server processes the client
// starts: each runs `mcpdrill client-server --socket PATH` (Relay), which
// connects its standard input and output to the socket here.
type stdioServer struct {
	w    *world
	dir  string
	path string
	ln   net.Listener
	ctx  context.Context
	wg   sync.WaitGroup

	mu    sync.Mutex
	conns []net.Conn
}

// listenStdio makes the private directory and the socket.
func listenStdio(ctx context.Context, w *world) (*stdioServer, error) {
	dir, err := os.MkdirTemp("", "mcpdrill-client-")
	if err != nil {
		return nil, fmt.Errorf("clientdrill: socket directory: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("clientdrill: socket directory: %w", err)
	}
	path := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", path)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("clientdrill: listen: %w", err)
	}
	s := &stdioServer{w: w, dir: dir, path: path, ln: ln, ctx: ctx}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

func (s *stdioServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		id := s.w.openConn()
		if id == 0 {
			c.Close()
			continue
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serve(id, c)
		}()
	}
}

// close stops the listener, ends every connection and removes the socket.
func (s *stdioServer) close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	os.RemoveAll(s.dir)
}

// stdioConn is one server process's connection.
type stdioConn struct {
	mu     sync.Mutex
	c      net.Conn
	exited bool
}

func (sc *stdioConn) write(frames ...[]byte) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, f := range frames {
		if _, err := sc.c.Write(append(append([]byte(nil), f...), '\n')); err != nil {
			return
		}
	}
}

func (s *stdioServer) serve(id int, c net.Conn) {
	sc := &stdioConn{c: c}
	defer c.Close()
	lr := jsonrpc.NewLineReader(c, maxFrame)
	var pending sync.WaitGroup
	defer pending.Wait()
	for {
		line, err := lr.ReadLine()
		if errors.Is(err, jsonrpc.ErrFrameTooLarge) {
			continue // skipped: the reader held at most the cap of it
		}
		if err != nil {
			sc.mu.Lock()
			exited := sc.exited
			sc.mu.Unlock()
			if !exited && errors.Is(err, io.EOF) {
				s.w.closeConn(id)
			}
			return
		}
		p := s.w.handle(id, append([]byte(nil), line...))
		if p == nil || p.accepted {
			continue
		}
		if p.hold || p.ask != nil {
			pending.Add(1)
			go func() {
				defer pending.Done()
				s.async(sc, p)
			}()
			continue
		}
		if p.exit {
			sc.mu.Lock()
			sc.exited = true
			sc.mu.Unlock()
			c.Close()
			return
		}
		s.w.waitLate(s.ctx, p)
		if p.delay > 0 {
			pending.Add(1)
			go func() {
				defer pending.Done()
				t := time.NewTimer(p.delay)
				defer t.Stop()
				select {
				case <-t.C:
					sc.write(p.frames...)
				case <-s.ctx.Done():
				}
			}()
			continue
		}
		if p.raw != nil {
			sc.mu.Lock()
			_, _ = c.Write(append(append([]byte(nil), p.raw...), '\n'))
			sc.mu.Unlock()
			continue
		}
		sc.write(p.frames...)
	}
}

// async answers a held or asking plan without blocking the reader.
func (s *stdioServer) async(sc *stdioConn, p *plan) {
	if p.ask != nil {
		sc.write(p.ask)
		t := time.NewTimer(askWait)
		select {
		case <-p.answered:
		case <-t.C:
		case <-s.ctx.Done():
		}
		t.Stop()
		sc.write(p.frames...)
		return
	}
	if p.written != nil {
		defer close(p.written)
	}
	if p.release == nil {
		<-s.ctx.Done()
		return
	}
	select {
	case <-p.release:
		sc.write(p.frames...)
	case <-s.ctx.Done():
	}
}

// Relay is the stdio server process of a client drill (`mcpdrill
// client-server --socket PATH`): it connects its standard input and output
// to the drill's socket. It returns when the drill ends the connection, or
// when stdin ends and the drill has finished writing.
func Relay(ctx context.Context, socket string, stdin io.Reader, stdout io.Writer) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return fmt.Errorf("clientdrill: relay: %w", err)
	}
	defer c.Close()
	down := make(chan struct{})
	go func() {
		defer close(down)
		_, _ = io.Copy(stdout, c)
	}()
	up := make(chan struct{})
	go func() {
		defer close(up)
		_, _ = io.Copy(c, stdin)
		if uc, ok := c.(*net.UnixConn); ok {
			_ = uc.CloseWrite()
		}
	}()
	select {
	case <-down:
	case <-ctx.Done():
	}
	return nil
}

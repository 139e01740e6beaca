package proxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/rawconn"
)

// h1Pool makes HTTP/1.1 requests to a plain-http upstream over keep-alive
// connections, entirely in the calling goroutine. http.Transport hands every
// request to a writer goroutine and every response back from a reader
// goroutine; on a small, busy machine those two hand-offs were most of the
// proxy's added latency for small replies. The request and response bytes
// are net/http's own (Request.Write, ReadResponse); only the connection
// handling is ours, with the Transport's rules: idle connections the server
// has closed are never reused, a request is retried only when writing it to
// a reused connection failed, and the request's context aborts the exchange.
type h1Pool struct {
	addr string
	dial func(ctx context.Context, network, addr string) (net.Conn, error)

	mu   sync.Mutex
	idle []*h1Conn // most recently used last
}

// h1Conn is one upstream connection with its buffers.
type h1Conn struct {
	c    net.Conn
	br   *bufio.Reader
	bw   *bufio.Writer
	used time.Time // when it went idle
}

const (
	h1MaxIdle     = 64
	h1IdleTimeout = 90 * time.Second
)

// newH1Pool returns a pool for addr (host:port), or nil where idle
// connections cannot be checked for liveness.
func newH1Pool(addr string, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *h1Pool {
	if !rawconn.CanPeek {
		return nil
	}
	return &h1Pool{addr: addr, dial: dial}
}

// get returns a live idle connection, or nil.
func (p *h1Pool) get() *h1Conn {
	for {
		p.mu.Lock()
		n := len(p.idle)
		if n == 0 {
			p.mu.Unlock()
			return nil
		}
		pc := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		if time.Since(pc.used) < h1IdleTimeout && pc.br.Buffered() == 0 && rawconn.IdleAlive(pc.c) {
			return pc
		}
		pc.c.Close()
	}
}

func (p *h1Pool) put(pc *h1Conn) {
	pc.used = time.Now()
	p.mu.Lock()
	if len(p.idle) < h1MaxIdle {
		p.idle = append(p.idle, pc)
		pc = nil
	}
	p.mu.Unlock()
	if pc != nil {
		pc.c.Close()
	}
}

func (p *h1Pool) fresh(ctx context.Context) (*h1Conn, error) {
	c, err := p.dial(ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	c = rawconn.Wrap(c)
	return &h1Conn{c: c, br: bufio.NewReaderSize(c, 4<<10), bw: bufio.NewWriterSize(c, 4<<10)}, nil
}

// do sends req (its Body must be rewindable through GetBody when non-nil)
// and reads the response head. The response body returns the connection
// to the pool when read to its end and closed.
func (p *h1Pool) do(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	pc, reused := p.get(), true
	for {
		if pc == nil {
			var err error
			if pc, err = p.fresh(ctx); err != nil {
				return nil, err
			}
			reused = false
		}
		resp, wrote, err := p.exchange(ctx, pc, req)
		if err == nil {
			return resp, nil
		}
		pc.c.Close()
		if !reused || wrote || req.GetBody == nil || ctx.Err() != nil {
			return nil, err
		}
		// Writing to a reused connection failed: send it on a new one.
		if req.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
		pc = nil
	}
}

// exchange writes req on pc and reads the response head; wrote reports
// whether the request reached the connection.
func (p *h1Pool) exchange(ctx context.Context, pc *h1Conn, req *http.Request) (*http.Response, bool, error) {
	stop := context.AfterFunc(ctx, func() { pc.c.Close() })
	if err := req.Write(pc.bw); err != nil {
		stop()
		return nil, false, err
	}
	if err := pc.bw.Flush(); err != nil {
		stop()
		return nil, false, err
	}
	for range 6 {
		resp, err := http.ReadResponse(pc.br, req)
		if err != nil {
			stop()
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			return nil, true, err
		}
		if resp.StatusCode >= 100 && resp.StatusCode <= 199 && resp.StatusCode != http.StatusSwitchingProtocols {
			continue // interim responses are skipped, as the Transport does
		}
		resp.Body = &h1Body{rc: resp.Body, pc: pc, pool: p, stop: stop, keep: !resp.Close && resp.StatusCode != http.StatusSwitchingProtocols}
		return resp, true, nil
	}
	stop()
	return nil, true, errors.New("proxy: too many 1xx responses from upstream")
}

// h1Body is a response body on a pooled connection.
type h1Body struct {
	rc   io.ReadCloser
	pc   *h1Conn
	pool *h1Pool
	stop func() bool
	keep bool
	eof  bool
	done bool
}

func (b *h1Body) Read(p []byte) (int, error) {
	if b.done {
		return 0, errors.New("proxy: read on closed response body")
	}
	n, err := b.rc.Read(p)
	if errors.Is(err, io.EOF) {
		b.eof = true
	}
	return n, err
}

func (b *h1Body) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	err := b.rc.Close()
	// The connection is reused only when the body was read to its end and
	// the context did not close it meanwhile.
	if b.stop() && b.eof && b.keep && err == nil {
		b.pool.put(b.pc)
	} else {
		b.pc.c.Close()
	}
	return err
}

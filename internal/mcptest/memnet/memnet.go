// Package memnet is an in-memory network for tests that run HTTP servers
// and clients inside a testing/synctest bubble. Its connections are
// net.Pipe pairs: a goroutine blocked on one is durably blocked, so the
// bubble's clock advances while a server waits (on a loopback socket the
// clock would stand still), and every delay, timeout and deadline of the
// exchange happens in virtual time, exactly.
package memnet

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
)

// Server is an HTTP server on an in-memory listener.
type Server struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
	srv    *http.Server
	served chan struct{}
	tr     *http.Transport
}

// Serve serves h until Close. Start it inside the bubble that uses it.
func Serve(h http.Handler) *Server {
	s := &Server{conns: make(chan net.Conn), closed: make(chan struct{}), served: make(chan struct{})}
	s.srv = &http.Server{Handler: h}
	s.tr = &http.Transport{DialContext: s.DialContext, DisableCompression: true}
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(listener{s})
	}()
	return s
}

// Client returns an HTTP client whose every connection, whatever the URL's
// host, goes to the server.
func (s *Server) Client() *http.Client { return &http.Client{Transport: s.tr} }

// DialContext returns a new connection to the server, whatever the address.
func (s *Server) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	c, srv := net.Pipe()
	select {
	case s.conns <- srv:
		return c, nil
	case <-s.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close ends the server and its connections, and the client's idle ones,
// so that none of its goroutines outlives the bubble.
func (s *Server) Close() error {
	s.tr.CloseIdleConnections()
	s.once.Do(func() { close(s.closed) })
	err := s.srv.Close()
	<-s.served
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// listener is the server's side of the network.
type listener struct{ s *Server }

func (l listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.s.conns:
		return c, nil
	case <-l.s.closed:
		return nil, net.ErrClosed
	}
}

func (l listener) Close() error {
	l.s.once.Do(func() { close(l.s.closed) })
	return nil
}

func (l listener) Addr() net.Addr { return addr{} }

type addr struct{}

func (addr) Network() string { return "memnet" }
func (addr) String() string  { return "127.0.0.1:80" }

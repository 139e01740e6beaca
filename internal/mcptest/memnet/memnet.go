// Package memnet is an in-memory network for tests that run HTTP servers
// and clients inside a testing/synctest bubble. Its connections are
// net.Pipe pairs: a goroutine blocked on one is durably blocked, so the
// bubble's clock advances while a server waits (on a loopback socket the
// clock would stand still), and every delay, timeout and deadline of the
// exchange happens in virtual time, exactly. Create a network inside the
// bubble that uses it, and close it before the bubble ends.
package memnet

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
)

// Network is one listener and the clients that dial it.
type Network struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
	tr     *http.Transport
}

// Listen returns a new network.
func Listen() *Network {
	n := &Network{conns: make(chan net.Conn), closed: make(chan struct{})}
	n.tr = &http.Transport{DialContext: n.DialContext, DisableCompression: true}
	return n
}

// Listener returns the server's side of the network.
func (n *Network) Listener() net.Listener { return listener{n} }

// Client returns an HTTP client whose every connection, whatever the URL's
// host, goes to the network's listener.
func (n *Network) Client() *http.Client { return &http.Client{Transport: n.tr} }

// DialContext returns a new connection to the listener, whatever the
// address.
func (n *Network) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	c, srv := net.Pipe()
	select {
	case n.conns <- srv:
		return c, nil
	case <-n.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close closes the listener and the client's idle connections.
func (n *Network) Close() error {
	n.tr.CloseIdleConnections()
	n.once.Do(func() { close(n.closed) })
	return nil
}

// Server is an HTTP server on a network of its own.
type Server struct {
	*Network
	srv    *http.Server
	served chan struct{}
}

// Serve serves h on a new network until Close.
func Serve(h http.Handler) *Server {
	s := &Server{Network: Listen(), srv: &http.Server{Handler: h}, served: make(chan struct{})}
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(s.Listener())
	}()
	return s
}

// Close ends the server and its connections, and the client's idle ones,
// so that none of their goroutines outlives the bubble.
func (s *Server) Close() error {
	s.Network.Close()
	err := s.srv.Close()
	<-s.served
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

type listener struct{ n *Network }

func (l listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.n.conns:
		return c, nil
	case <-l.n.closed:
		return nil, net.ErrClosed
	}
}

func (l listener) Close() error {
	l.n.once.Do(func() { close(l.n.closed) })
	return nil
}

func (l listener) Addr() net.Addr { return addr{} }

type addr struct{}

func (addr) Network() string { return "memnet" }
func (addr) String() string  { return "127.0.0.1:80" }

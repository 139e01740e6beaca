package target

import (
	"errors"
	"fmt"
	"net"
	"net/url"
)

// ErrNotLoopback is returned by CheckListenAddr for an address that is not
// on a loopback interface.
var ErrNotLoopback = errors.New("address is not loopback")

// CheckListenAddr returns an error unless addr (host:port) names a loopback
// host ("localhost" or a loopback IP). mcpdrill's listeners (the testbed, a
// deliberately misbehaving server, and the fault proxy, which relays a
// server's answers and its callers' credentials) should not be reachable
// from the network by accident: an empty host, which listens on every
// interface, is refused too.
func CheckListenAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%w: %q", ErrNotLoopback, addr)
	}
	return nil
}

// LoopbackOrigin reports whether an Origin header value names a loopback
// host ("localhost" or a loopback IP, any scheme and port): the one origin
// check of mcpdrill's listeners against DNS rebinding and cross-origin
// requests from a browser.
func LoopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	name := u.Hostname()
	if name == "localhost" {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package proxy

import "net"

// canPeek is false: idle connections cannot be checked here, so the proxy
// keeps http.Transport.
const canPeek = false

func idleAlive(net.Conn) bool { return false }

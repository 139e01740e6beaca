package faults

import (
	"fmt"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// Direction is the way a frame travels through the proxy.
type Direction uint8

// Directions. The zero value means "either" in a matcher.
const (
	AnyDirection Direction = iota
	// ToServer is client→server ("c2s").
	ToServer
	// ToClient is server→client ("s2c").
	ToClient
)

// String returns "c2s", "s2c" or "any".
func (d Direction) String() string {
	switch d {
	case ToServer:
		return "c2s"
	case ToClient:
		return "s2c"
	}
	return "any"
}

// ParseDirection accepts c2s|client-to-server|up, s2c|server-to-client|down,
// and any|both|"".
func ParseDirection(s string) (Direction, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "c2s", "client-to-server", "up", "upstream":
		return ToServer, nil
	case "s2c", "server-to-client", "down", "downstream":
		return ToClient, nil
	case "", "any", "both":
		return AnyDirection, nil
	}
	return AnyDirection, fmt.Errorf("faults: unknown direction %q (want c2s, s2c or any)", s)
}

// Kind classifies a frame for matching.
type Kind uint8

// Frame kinds.
const (
	KindInvalid Kind = iota
	KindRequest
	KindNotification
	KindResponse // a success response (has "result")
	KindError    // an error response (has "error")
	KindBatch
)

var kindNames = [...]string{"invalid", "request", "notification", "response", "error", "batch"}

// String returns the kind's name as written in plans.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}

// KindOf is the frame kind of a JSON-RPC peek's kind.
func KindOf(k jsonrpc.Kind) Kind {
	switch k {
	case jsonrpc.KindRequest:
		return KindRequest
	case jsonrpc.KindNotification:
		return KindNotification
	case jsonrpc.KindResponse:
		return KindResponse
	case jsonrpc.KindError:
		return KindError
	case jsonrpc.KindBatch:
		return KindBatch
	}
	return KindInvalid
}

// ParseKind reads a kind name.
func ParseKind(s string) (Kind, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	for i, n := range kindNames {
		if n == s {
			return Kind(i), nil
		}
	}
	return KindInvalid, fmt.Errorf("faults: unknown kind %q (want request, notification, response, error, batch or invalid)", s)
}

// Frame is one JSON-RPC frame as the proxy sees it. Method and Tool of a
// response are those of the request it answers, correlated by id by the
// proxy, so that a rule on "tools/call" with a tool glob also targets the
// call's response.
type Frame struct {
	Dir Direction
	// Index is the frame's 0-based position among all frames in its direction.
	Index uint64
	Kind  Kind
	// Method is the request's method (for a response: its request's).
	Method string
	// Tool is params.name of a tools/call (for a response: its request's).
	Tool string
	// ID is the raw JSON id, nil when absent.
	ID []byte
	// Raw is the frame's bytes without any line terminator.
	Raw []byte
}

package mcp

import (
	"context"
	"fmt"
	"net/http"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// RoundTripper sends one request frame over a session someone else holds
// and returns the frame that answers it.
type RoundTripper func(ctx context.Context, frame []byte) ([]byte, error)

// NewClientOver returns a Client whose requests go through rt, on a
// session that is already open (a proxy's own requests on its client's
// session): there is no handshake, and the era is legacy, so params go out
// as given. Set cfg.IDPrefix so that its ids cannot be taken for the
// session owner's. A reply must answer the request it is given for, read
// the way every receiver reads it: an ambiguous reply
// ([jsonrpc.Peek.Ambiguous]), a batch or another id fails the call.
// Notifications (a timed-out request's cancellation) are not sent.
func NewClientOver(rt RoundTripper, cfg Config) *Client {
	return &Client{cfg: cfg.withDefaults(), obs: newObserver(), t: overConn{rt: rt}}
}

// overConn is the transport of NewClientOver.
type overConn struct{ rt RoundTripper }

func (o overConn) roundTrip(ctx context.Context, r outgoing) (*reply, error) {
	b, err := o.rt(ctx, r.frame)
	if err != nil {
		return nil, err
	}
	pk, err := jsonrpc.PeekFrameStrict(b)
	switch {
	case err != nil:
		return nil, fmt.Errorf("mcp: %s: the reply is not a JSON-RPC message: %w", r.method, err)
	case pk.Ambiguous:
		return nil, fmt.Errorf("mcp: %s: the reply repeats a member name, or spells one in another case, so parsers could read it differently", r.method)
	case pk.Kind == jsonrpc.KindBatch || idKey(pk.ID) != r.key:
		return nil, fmt.Errorf("mcp: %s: the reply is not the answer to the request", r.method)
	}
	m, err := jsonrpc.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("mcp: %s: %w", r.method, err)
	}
	return &reply{msg: m}, nil
}

func (overConn) notify(context.Context, []byte, http.Header) (*reply, error) { return nil, nil }
func (overConn) inFlight() int                                               { return 0 }
func (overConn) close() error                                                { return nil }

// PostRoundTripper returns a RoundTripper that POSTs each frame to url
// through hc (its redirect policy kept) with exactly hdr (a session's headers, credentials included)
// and reads the reply from a JSON or an SSE body, as the client's HTTP
// transport does, frames capped at maxFrame bytes (0: the default). A
// session whose headers carry Mcp-Method has it name each frame's method.
func PostRoundTripper(hc *http.Client, url string, hdr http.Header, maxFrame int) (RoundTripper, error) {
	cfg := Config{URL: url, Headers: hdr, HTTPClient: hc, MaxFrame: maxFrame}.withDefaults()
	h, err := newHTTPConn(cfg, newObserver())
	if err != nil {
		return nil, err
	}
	h.client = cfg.HTTPClient // as given: its owner's redirect policy stands
	return func(ctx context.Context, frame []byte) ([]byte, error) {
		pk, _ := jsonrpc.PeekFrame(frame)
		o := outgoing{key: idKey(pk.ID), method: pk.Method, frame: frame}
		if hdr.Get(HeaderMethod) != "" {
			// A modern session's request names its own method.
			o.header = http.Header{HeaderMethod: {pk.Method}}
		}
		r, err := h.roundTrip(ctx, o)
		if err != nil {
			return nil, err
		}
		if _, err := classifyReply(r); err != nil {
			return nil, err
		}
		return r.msg.Raw, nil
	}, nil
}

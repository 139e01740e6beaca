package mcp

import (
	"context"
	"net/http"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// Observer is told of each frame the client sends to a stdio server — its
// own requests and notifications and the frames of SendRaw — just before
// the frame is written; replies the client writes to server requests are
// not observed. revision is the protocol revision the frame travels under
// ("" while none is known); raw is set for a SendRaw frame, which must be
// sent byte for byte. The observer returns the frame to write (nil: frame
// unchanged; it may add to params._meta of the client's own requests) and
// done, called exactly once with the reply (nil for a notification) or the
// error that ended the exchange.
type Observer func(ctx context.Context, frame []byte, revision string, raw bool) (send []byte, done func(reply *jsonrpc.Message, err error))

func noDone(*jsonrpc.Message, error) {}

// Tracing is what a tracer gives a client configuration: a wrapper of the
// HTTP client, and an Observer of stdio frames.
type Tracing interface {
	Client(base *http.Client) *http.Client
	Observer() func(ctx context.Context, frame []byte, revision string, raw bool) ([]byte, func(*jsonrpc.Message, error))
}

// Traced returns c with every call observed by t: through the HTTP client
// for an HTTP target, through Observer for a stdio one.
func (c Config) Traced(t Tracing) Config {
	if c.URL != "" {
		c.HTTPClient = t.Client(c.HTTPClient)
	} else {
		c.Observer = t.Observer()
	}
	return c
}

// observe hands one outgoing stdio frame to cfg.Observer.
func (c *Client) observe(ctx context.Context, frame []byte, hdr http.Header, raw bool) ([]byte, func(*jsonrpc.Message, error)) {
	if c.cfg.Observer == nil || c.stdio == nil {
		return frame, noDone
	}
	rev := hdr.Get(HeaderProtocolVersion)
	if rev == "" {
		rev, _ = c.session()
	}
	send, done := c.cfg.Observer(ctx, frame, rev, raw)
	if send == nil {
		send = frame
	}
	if done == nil {
		done = noDone
	}
	return send, done
}

// observedStdio is the stdio transport with every frame the client sends
// handed to the Client's Observer.
type observedStdio struct {
	*stdioConn
	c *Client
}

func (t observedStdio) roundTrip(ctx context.Context, o outgoing) (*reply, error) {
	var done func(*jsonrpc.Message, error)
	o.frame, done = t.c.observe(ctx, o.frame, o.header, o.rawNull)
	r, err := t.stdioConn.roundTrip(ctx, o)
	var msg *jsonrpc.Message
	if r != nil {
		msg = r.msg
	}
	done(msg, err)
	return r, err
}

func (t observedStdio) notify(ctx context.Context, frame []byte, hdr http.Header) (*reply, error) {
	frame, done := t.c.observe(ctx, frame, hdr, false)
	r, err := t.stdioConn.notify(ctx, frame, hdr)
	done(nil, err)
	return r, err
}

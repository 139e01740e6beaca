package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// ErrNotStreamable: the exchange needs the Streamable HTTP transport and the
// session runs over another one.
var ErrNotStreamable = errors.New("mcp: not a Streamable HTTP session")

// HTTPExchange is what one raw HTTP request to the endpoint showed.
type HTTPExchange struct {
	Status int
	// Header is the response header. Callers never report its values.
	Header http.Header
	// Body is the start of the body, at most the limit asked for.
	Body []byte
	// More is set when the body went on past that limit, or was still open
	// when the wait ended (an event stream).
	More bool
}

// ProbeHTTP sends one request to the session's Streamable HTTP endpoint:
// method (GET, POST, DELETE) with body (nil for none), carrying what every
// request of the session carries (the configured headers, the session id,
// MCP-Protocol-Version), with hdr overriding it; a key of hdr given with no
// values is left out of the request. It reads at most limit bytes of the
// body (0: none), so an event stream left open is never held. ctx bounds the
// whole exchange. Nothing of it is parsed or recorded as the session's.
func (c *Client) ProbeHTTP(ctx context.Context, method string, body []byte, hdr http.Header, limit int) (HTTPExchange, error) {
	c.mu.Lock()
	h, t := c.hconn, c.t
	c.mu.Unlock()
	if h == nil || t != transport(h) {
		return HTTPExchange{}, ErrNotStreamable
	}
	req, err := h.newRequest(ctx, method, h.url, body, nil)
	if err != nil {
		return HTTPExchange{}, err
	}
	for k, v := range hdr {
		if len(v) == 0 {
			req.Header.Del(k)
			continue
		}
		req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), v...)
	}
	resp, err := h.send(req)
	if err != nil {
		return HTTPExchange{}, err
	}
	defer resp.Body.Close()
	x := HTTPExchange{Status: resp.StatusCode, Header: resp.Header.Clone()}
	if limit <= 0 {
		return x, nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	switch {
	case len(b) > limit:
		x.Body, x.More = b[:limit], true
	case err != nil && ctx.Err() != nil:
		x.Body, x.More = b, true
	case err != nil:
		return x, fmt.Errorf("mcp: reading the %s reply: %w", method, err)
	default:
		x.Body = b
	}
	return x, nil
}

// SessionIDShape reports whether the server issued an Mcp-Session-Id on
// this session, and whether it is made of visible ASCII only (0x21 to
// 0x7E), as the transport requires. The id itself is never handed out.
func (c *Client) SessionIDShape() (issued, visible bool) {
	c.mu.Lock()
	h := c.hconn
	c.mu.Unlock()
	if h == nil {
		return false, false
	}
	sid, _, _ := h.state()
	if sid == "" {
		return false, false
	}
	for i := 0; i < len(sid); i++ {
		if sid[i] < 0x21 || sid[i] > 0x7e {
			return true, false
		}
	}
	return true, true
}

// IsEventStream reports whether a response header names text/event-stream.
func IsEventStream(h http.Header) bool { return isEventStream(h) }

// ObsContentType is the Observation kind of a reply to a request whose
// Content-Type is neither application/json nor text/event-stream.
const ObsContentType = "http-content-type"

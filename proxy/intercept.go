package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpdrill/mcpdrill/faults"
	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

// Interceptor sees every frame of a relay before faults do, and may
// answer, replace or swallow it: guard mode (package guard/intercept) is
// one. While one is set the relay examines every frame whole, with the
// strict peek ([jsonrpc.PeekFrameStrict]), and never forwards a frame it
// cannot examine whole.
type Interceptor interface {
	// Attach gives the interceptor the relay's peers; the relay calls it
	// once, as it starts. send writes a frame of the interceptor's own to
	// the server (stdio; nil over HTTP): its answer comes back through
	// Screen, as any frame from the server does. roundTrip sends a request
	// of its own and returns the answer (HTTP, POSTed with the headers of
	// the latest client request: its session and credentials; nil on
	// stdio). toClient writes a frame to the client (stdio: its stdout;
	// HTTP: every open GET stream). The function types are spelled out,
	// not named, so that an interceptor implements this without importing
	// the package that would name them.
	Attach(send func(frame []byte), roundTrip func(ctx context.Context, frame []byte) ([]byte, error), toClient func(frame []byte))
	// Screen judges frame f, in the order frames arrive in its direction:
	// pk (and perr) is the strict peek of f.Raw, and f is correlated when
	// perr is nil. It returns replacement bytes (the frame still goes
	// through faults), or a final action with done set (faults are
	// skipped). correlate enters a frame Screen reads out of f (a batch
	// element, an answer it decides) in the relay's correlation table.
	Screen(f *faults.Frame, pk jsonrpc.Peek, perr error, correlate func(*faults.Frame)) (out []byte, a faults.Action, done bool)
	// Unexaminable decides a frame the relay could not examine whole (over
	// the frame cap, or cut short): f holds its head, id what could be read
	// of its id (nil: none), why says what is wrong with it.
	Unexaminable(f *faults.Frame, id json.RawMessage, why string, correlate func(*faults.Frame)) faults.Action
}

// unexamined is step for a frame the interceptor cannot examine whole (over
// the frame cap, or cut short): head is its start (at most
// jsonrpc.MaxHead bytes), all the proxy kept of it; cut says it was cut
// short.
func (e *engine) unexamined(dir faults.Direction, head []byte, cut bool) (faults.Frame, faults.Action) {
	e.mu[dir].Lock()
	defer e.mu[dir].Unlock()
	f := faults.Frame{Dir: dir, Index: e.next[dir], Raw: head}
	e.next[dir]++
	pk, _ := jsonrpc.PeekFrame(head)
	f.Kind, f.Method, f.Tool = faults.KindOf(pk.Kind), pk.Method, pk.Tool
	max := e.cfg.MaxFrame
	if max <= 0 {
		max = jsonrpc.DefaultMaxFrame
	}
	why := fmt.Sprintf("it is longer than the frame cap of %d bytes", max)
	if cut {
		why = "it was cut short"
	}
	return f, e.cfg.Guard.Unexaminable(&f, pk.ID, why, e.correlateAll)
}

// correlateAll is correlate with every pending request.
func (e *engine) correlateAll(f *faults.Frame) { e.correlate(f, allSeq) }

// noteSession remembers the latest client POST's headers and target, so
// the interceptor's own requests join the same session with the same
// credentials.
func (h *HTTP) noteSession(r *http.Request) {
	hdr := r.Header.Clone()
	for k := range hdr {
		if strings.HasPrefix(strings.ToLower(k), "mcp-param-") || strings.EqualFold(k, "Mcp-Name") {
			hdr.Del(k)
		}
	}
	for k := range hopHeaders {
		hdr.Del(k)
	}
	hdr.Del("Content-Length")
	hdr.Del("Accept-Encoding")
	target := h.target(r).String()
	h.sessMu.Lock()
	h.sessHdr, h.sessURL = hdr, target
	h.sessMu.Unlock()
}

// ownRequest POSTs a request of the interceptor's own upstream with the
// noted session's headers and returns its answer (internal/mcp reads the
// JSON or SSE body).
func (h *HTTP) ownRequest(ctx context.Context, frame []byte) ([]byte, error) {
	h.sessMu.Lock()
	hdr, target := h.sessHdr, h.sessURL
	h.sessMu.Unlock()
	if hdr == nil {
		return nil, errors.New("no client request seen yet to join its session")
	}
	rt, err := mcp.PostRoundTripper(h.client, target, hdr, h.maxFrame())
	if err != nil {
		return nil, err
	}
	return rt(ctx, frame)
}

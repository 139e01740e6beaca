package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// sseConn is the 2024-11-05 HTTP+SSE transport: a long-lived GET stream
// carrying server messages, and a POST endpoint named by its first event.
type sseConn struct {
	h        *httpConn // headers, client, observations
	endpoint string
	mux      *mux
	cancel   context.CancelFunc
	done     chan struct{}
	once     sync.Once
}

// dialSSE opens the GET stream and waits (bounded by ctx) for the endpoint
// event. The endpoint must share the origin of the configured URL: the
// user's headers (credentials) are never sent elsewhere.
func dialSSE(ctx context.Context, h *httpConn) (*sseConn, *reply, error) {
	sctx, cancel := context.WithCancel(context.Background())
	hdr := http.Header{}
	hdr.Set("Accept", "text/event-stream")
	type res struct {
		resp *http.Response
		err  error
	}
	ch := make(chan res, 1)
	go func() {
		resp, err := h.do(sctx, http.MethodGet, h.url, nil, hdr)
		ch <- res{resp, err}
	}()
	var resp *http.Response
	select {
	case r := <-ch:
		if r.err != nil {
			cancel()
			return nil, nil, r.err
		}
		resp = r.resp
	case <-ctx.Done():
		cancel()
		return nil, nil, ctx.Err()
	}
	if resp.StatusCode != http.StatusOK || !isEventStream(resp.Header) {
		rep := &reply{status: resp.StatusCode, header: resp.Header.Clone()}
		resp.Body.Close()
		cancel()
		return nil, rep, fmt.Errorf("mcp: HTTP+SSE GET answered HTTP %d (%s)", resp.StatusCode, shortText(resp.Header.Get("Content-Type"), 40))
	}
	sr := jsonrpc.NewSSEReader(resp.Body, h.cfg.MaxFrame)
	evCh := make(chan error, 1)
	var endpoint string
	go func() {
		for {
			ev, err := sr.Next()
			if err != nil {
				evCh <- err
				return
			}
			if ev.Event == "endpoint" {
				endpoint = strings.TrimSpace(string(ev.Data))
				evCh <- nil
				return
			}
			h.obs.note("sse-event", "event before endpoint: "+shortText(ev.Event, 32))
		}
	}()
	select {
	case err := <-evCh:
		if err != nil {
			resp.Body.Close()
			cancel()
			return nil, nil, fmt.Errorf("mcp: HTTP+SSE stream ended before the endpoint event: %w", err)
		}
	case <-ctx.Done():
		resp.Body.Close()
		cancel()
		return nil, nil, ctx.Err()
	}
	base, _ := url.Parse(h.url)
	ep, err := base.Parse(endpoint)
	if err != nil || !sameOrigin(base, ep) {
		resp.Body.Close()
		cancel()
		return nil, nil, fmt.Errorf("mcp: HTTP+SSE endpoint event names an invalid or cross-origin URI; refusing to send credentials there")
	}
	s := &sseConn{h: h, endpoint: ep.String(), mux: newMux(h.obs), cancel: cancel, done: make(chan struct{})}
	s.mux.answer = func(frame []byte) { h.replyAsync(s.notify, frame) }
	go s.readLoop(resp.Body, sr)
	return s, nil, nil
}

func (s *sseConn) readLoop(body io.ReadCloser, sr *jsonrpc.SSEReader) {
	defer close(s.done)
	defer body.Close()
	for {
		ev, err := sr.Next()
		if err != nil {
			if errors.Is(err, jsonrpc.ErrFrameTooLarge) {
				s.h.obs.count("oversize-frame", fmt.Sprintf("SSE event exceeds the %d-byte cap", s.h.cfg.MaxFrame))
				s.mux.fail(fmt.Errorf("%w: SSE event over %d bytes; stream abandoned", ErrFrameTooLarge, s.h.cfg.MaxFrame))
				return
			}
			s.mux.fail(fmt.Errorf("%w: HTTP+SSE stream closed", ErrServerExited))
			return
		}
		if len(bytes.TrimSpace(ev.Data)) == 0 {
			continue
		}
		if ev.Event != "" && ev.Event != "message" {
			s.h.obs.note("sse-event", "event type "+shortText(ev.Event, 32))
			continue
		}
		s.mux.dispatchFrame(ev.Data)
	}
}

func (s *sseConn) post(ctx context.Context, frame []byte, hdr http.Header) (*reply, error) {
	resp, err := s.h.do(ctx, http.MethodPost, s.endpoint, frame, hdr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	r := &reply{status: resp.StatusCode, header: resp.Header.Clone()}
	r.msg = readJSONRPCBody(resp.Body, maxErrorBody)
	return r, nil
}

func (s *sseConn) roundTrip(ctx context.Context, o outgoing) (*reply, error) {
	ch, err := s.mux.register(o.key, o.rawNull)
	if err != nil {
		return nil, err
	}
	r, err := s.post(ctx, o.frame, o.header)
	if err != nil {
		s.mux.done(o.key, ch, false)
		return nil, err
	}
	if r.status >= 300 {
		s.mux.done(o.key, ch, false)
		s.h.obs.note("http-status", fmt.Sprintf("%s → HTTP %d", shortText(o.method, 48), r.status))
		return r, nil
	}
	if r.msg != nil && matches(r.msg, o) { // some servers answer inline too
		s.mux.done(o.key, ch, false)
		return r, nil
	}
	msg, err := s.mux.wait(ctx, o.key, ch)
	if err != nil {
		return nil, err
	}
	return &reply{msg: msg, status: http.StatusOK}, nil
}

func (s *sseConn) notify(ctx context.Context, frame []byte, hdr http.Header) (*reply, error) {
	return s.post(ctx, frame, hdr)
}

func (s *sseConn) inFlight() int { return s.mux.inFlight() }

func (s *sseConn) close() error {
	s.once.Do(func() {
		s.cancel()
		<-s.done
		s.mux.fail(ErrClosed)
	})
	return nil
}

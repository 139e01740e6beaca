package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// maxErrorBody bounds how much of an HTTP error body is read.
const maxErrorBody = 1 << 20

// maxResumes bounds SSE stream resumptions (GET + Last-Event-ID) per request.
const maxResumes = 3

// httpConn is a Streamable HTTP endpoint.
type httpConn struct {
	cfg    Config
	client *http.Client
	url    string
	obs    *observer

	replySem chan struct{} // bounds concurrent replies to server requests

	mu        sync.Mutex
	sessionID string
	protoHdr  string // MCP-Protocol-Version sent on every request once known
	modern    bool
}

func newHTTPConn(cfg Config, obs *observer) (*httpConn, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("mcp: invalid server URL (want http:// or https://)")
	}
	h := &httpConn{cfg: cfg, url: cfg.URL, obs: obs, replySem: make(chan struct{}, 8)}
	h.client = GuardRedirects(cfg.HTTPClient, h.noteRedirect)
	return h, nil
}

// noteRedirect records a redirect as an observation of its Kind.
func (h *httpConn) noteRedirect(r Redirect) {
	h.obs.note(r.Kind(), r.String())
}

func (h *httpConn) setSession(id, proto string, modern bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if id != "" {
		h.sessionID = id
	}
	h.protoHdr = proto
	h.modern = modern
}

func (h *httpConn) state() (sid, proto string, modern bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessionID, h.protoHdr, h.modern
}

// newRequest builds a request with the user's headers, then the protocol
// headers, then extra (which wins).
func (h *httpConn) newRequest(ctx context.Context, method, target string, body []byte, extra http.Header) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, fmt.Errorf("mcp: build HTTP request: %w", err)
	}
	for k, v := range h.cfg.Headers {
		req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), v...)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	sid, proto, modern := h.state()
	if sid != "" && !modern {
		req.Header.Set(HeaderSessionID, sid)
	}
	if proto != "" {
		req.Header.Set(HeaderProtocolVersion, proto)
	}
	for k, v := range extra {
		req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), v...)
	}
	return req, nil
}

// send performs req and maps transport failures onto ErrUnreachable.
func (h *httpConn) send(req *http.Request) (*http.Response, error) {
	resp, err := h.client.Do(req)
	if err != nil {
		if ctxErr := req.Context().Err(); ctxErr != nil {
			return nil, ctxErr
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // drop the URL: it may carry a token
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrUnreachable, req.Method, err)
	}
	return resp, nil
}

// do builds a request (see newRequest) and performs it (see send).
func (h *httpConn) do(ctx context.Context, method, target string, body []byte, extra http.Header) (*http.Response, error) {
	req, err := h.newRequest(ctx, method, target, body, extra)
	if err != nil {
		return nil, err
	}
	return h.send(req)
}

// roundTrip POSTs one request and reads a JSON or SSE reply.
func (h *httpConn) roundTrip(ctx context.Context, o outgoing) (*reply, error) {
	resp, err := h.do(ctx, http.MethodPost, h.url, o.frame, o.header)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	r := &reply{status: resp.StatusCode, header: resp.Header.Clone()}
	if resp.StatusCode >= 300 {
		h.obs.note("http-status", fmt.Sprintf("%s → HTTP %d", shortText(o.method, 48), resp.StatusCode))
		r.msg = readJSONRPCBody(resp.Body, maxErrorBody)
		return r, nil
	}
	if resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent {
		return r, nil
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" && mt != "text/event-stream" {
		h.obs.count(ObsContentType, "a reply to a request is neither application/json nor text/event-stream")
	}
	if isEventStream(resp.Header) {
		msg, err := h.readSSE(ctx, resp.Body, o, 0)
		if err != nil {
			return nil, err
		}
		r.msg = msg
		return r, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(h.cfg.MaxFrame)+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: reading reply: %w", ErrServerExited, err)
	}
	if len(body) > h.cfg.MaxFrame {
		h.obs.count("oversize-frame", fmt.Sprintf("HTTP body exceeds the %d-byte cap", h.cfg.MaxFrame))
		return nil, fmt.Errorf("%w: HTTP reply over %d bytes", ErrFrameTooLarge, h.cfg.MaxFrame)
	}
	r.msg = pickReply(body, o, h.obs)
	if r.msg == nil && len(bytes.TrimSpace(body)) > 0 {
		h.obs.count("invalid-body", "HTTP 2xx body is not a JSON-RPC reply")
	}
	return r, nil
}

func isEventStream(h http.Header) bool {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == "text/event-stream"
}

// matches reports whether msg answers o (same id, or null id for raw probes).
func matches(msg *jsonrpc.Message, o outgoing) bool {
	k := msg.Kind()
	if k != jsonrpc.KindResponse && k != jsonrpc.KindError {
		return false
	}
	key := idKey(msg.ID)
	return (o.key != "" && key == o.key) || (key == "" && (o.rawNull || o.key == ""))
}

// pickReply parses a JSON body: a single message, or a batch whose member
// answers o (falling back to the first response in it).
func pickReply(body []byte, o outgoing, obs *observer) *jsonrpc.Message {
	t := bytes.TrimSpace(body)
	if len(t) == 0 {
		return nil
	}
	if t[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(t, &batch) != nil {
			return nil
		}
		obs.note("batch", "HTTP reply is a JSON array")
		for _, b := range batch {
			if m, err := jsonrpc.Decode(b); err == nil && matches(m, o) {
				return m
			}
		}
		return nil
	}
	m, err := jsonrpc.Decode(bytes.Clone(t))
	if err != nil {
		return nil
	}
	if !matches(m, o) && (m.Kind() == jsonrpc.KindResponse || m.Kind() == jsonrpc.KindError) {
		obs.note("id-mismatch", "HTTP reply carries a different id than its request")
	}
	return m
}

// readJSONRPCBody parses an error-status body when it is a JSON-RPC message.
func readJSONRPCBody(r io.Reader, max int64) *jsonrpc.Message {
	b, err := io.ReadAll(io.LimitReader(r, max))
	if err != nil {
		return nil
	}
	m, err := jsonrpc.Decode(bytes.TrimSpace(b))
	if err != nil || m.Kind() == jsonrpc.KindInvalid {
		return nil
	}
	return m
}

// readSSE reads events until the one answering o. Server requests on a
// legacy stream are answered by POST; notifications are counted. When a
// legacy stream ends early after carrying event ids, it is resumed by GET
// with Last-Event-ID (2025-11-25 polling).
func (h *httpConn) readSSE(ctx context.Context, body io.Reader, o outgoing, resumes int) (*jsonrpc.Message, error) {
	sr := jsonrpc.NewSSEReader(body, h.cfg.MaxFrame)
	lastID, retry := "", -1
	for {
		ev, err := sr.Next()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if errors.Is(err, jsonrpc.ErrFrameTooLarge) {
				h.obs.count("oversize-frame", fmt.Sprintf("SSE event exceeds the %d-byte cap", h.cfg.MaxFrame))
				return nil, fmt.Errorf("%w: SSE event over %d bytes", ErrFrameTooLarge, h.cfg.MaxFrame)
			}
			_, _, modern := h.state()
			if lastID != "" && !modern && resumes < maxResumes {
				return h.resume(ctx, o, lastID, retry, resumes+1)
			}
			return nil, fmt.Errorf("%w: SSE stream ended before the reply to %s", ErrNoResponse, shortText(o.method, 48))
		}
		if ev.HasID {
			lastID = ev.ID
		}
		if ev.Retry >= 0 {
			retry = ev.Retry
		}
		if len(bytes.TrimSpace(ev.Data)) == 0 {
			continue // priming event or keep-alive
		}
		if ev.Event != "" && ev.Event != "message" {
			h.obs.note("sse-event", "event type "+shortText(ev.Event, 32))
			continue
		}
		if t := bytes.TrimSpace(ev.Data); t[0] == '[' {
			// A batch in one event: its element that answers o, as in
			// a JSON body.
			if m := pickReply(t, o, h.obs); m != nil {
				return m, nil
			}
			continue
		}
		msg, err := jsonrpc.Decode(bytes.Clone(ev.Data))
		if err != nil {
			h.obs.count("invalid-body", "SSE event data is not JSON-RPC")
			continue
		}
		switch msg.Kind() {
		case jsonrpc.KindRequest:
			h.obs.note("server-request", shortText(msg.Method, 64))
			if _, _, modern := h.state(); !modern {
				h.replyAsync(h.notify, answerServerRequest(msg))
			}
		case jsonrpc.KindNotification:
			h.obs.note("notification", shortText(msg.Method, 64))
		case jsonrpc.KindResponse, jsonrpc.KindError:
			if matches(msg, o) {
				return msg, nil
			}
			h.obs.note("unsolicited", "SSE response to another id")
		default:
			h.obs.count("invalid-message", "JSON object that is not a JSON-RPC message")
		}
	}
}

func (h *httpConn) resume(ctx context.Context, o outgoing, lastID string, retry, resumes int) (*jsonrpc.Message, error) {
	h.obs.note("sse-resume", "stream closed before the reply; resumed with Last-Event-ID")
	if retry > 0 {
		wait := min(time.Duration(retry)*time.Millisecond, 5*time.Second)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	hdr := http.Header{}
	hdr.Set("Accept", "text/event-stream")
	hdr.Set("Last-Event-ID", lastID)
	resp, err := h.do(ctx, http.MethodGet, h.url, nil, hdr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !isEventStream(resp.Header) {
		h.obs.note("http-status", fmt.Sprintf("resume GET → HTTP %d", resp.StatusCode))
		return nil, fmt.Errorf("%w: SSE stream ended and could not be resumed (HTTP %d)", ErrNoResponse, resp.StatusCode)
	}
	return h.readSSE(ctx, resp.Body, o, resumes)
}

// replyAsync POSTs a reply to a server→client request without blocking the
// reader; at most cap(replySem) are in flight, the rest are dropped.
func (h *httpConn) replyAsync(post func(context.Context, []byte, http.Header) (*reply, error), frame []byte) {
	select {
	case h.replySem <- struct{}{}:
	default:
		h.obs.count("dropped-reply", "too many server requests in flight; reply dropped")
		return
	}
	go func() {
		defer func() { <-h.replySem }()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, _ = post(ctx, frame, nil)
	}()
}

// notify POSTs a notification (or a response); 202 is the expected status.
func (h *httpConn) notify(ctx context.Context, frame []byte, hdr http.Header) (*reply, error) {
	resp, err := h.do(ctx, http.MethodPost, h.url, frame, hdr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	r := &reply{status: resp.StatusCode, header: resp.Header.Clone()}
	if resp.StatusCode >= 300 {
		r.msg = readJSONRPCBody(resp.Body, maxErrorBody)
	} else {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	}
	if resp.StatusCode != http.StatusAccepted {
		h.obs.note("http-status", fmt.Sprintf("notification → HTTP %d (202 expected)", resp.StatusCode))
	}
	return r, nil
}

func (h *httpConn) inFlight() int { return 0 }

// close DELETEs the session if the server issued one.
func (h *httpConn) close() error {
	sid, _, modern := h.state()
	if sid == "" || modern {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	resp, err := h.do(ctx, http.MethodDelete, h.url, nil, nil)
	if err != nil {
		return nil // the session ends with us either way
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode != http.StatusMethodNotAllowed {
		h.obs.note("http-status", fmt.Sprintf("DELETE session → HTTP %d", resp.StatusCode))
	}
	return nil
}

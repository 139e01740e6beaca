package proxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// BridgeOptions configures a Streamable HTTP front for a stdio server.
type BridgeOptions struct {
	// Config applies to every session as it does over stdio: the plan's
	// faults, its recorder, the frame cap. A guard is not supported (it
	// pins one server process; a bridge runs one per session). The frame
	// cap bounds POST bodies (413 past it) and the server's frames: one
	// over it cannot be held to route, so it is dropped, and the POST
	// waiting for it is answered 502.
	Config
	// Command, Env, Dir and Stderr start the server, once per session.
	Command []string
	Env     []string
	Dir     string
	Stderr  io.Writer
	// AllowOrigins are browser origins accepted besides loopback ones.
	AllowOrigins []string
	// MaxSessions bounds the servers running at once (default 16). A new
	// session past it ends the one used least recently that has nothing
	// in flight (clients seldom end their sessions); when every session is
	// busy, it is refused with 503.
	MaxSessions int
	// ReplyTimeout bounds the wait for a server's answer to one POST
	// (default 5 minutes); past it the POST is answered 504.
	ReplyTimeout time.Duration
	// MemoryBudget bounds the bytes the bridge holds at once across all
	// sessions (0: DefaultMemoryBudget): POST bodies, and the server's
	// frames on their way to a response. Past it a POST is answered 503,
	// an answer too (or with a JSON-RPC error on an event stream begun),
	// and a stream loses an unasked frame.
	MemoryBudget int64
	// OnError hears of failures Serve cannot return; nil drops them.
	OnError func(error)
}

// Bridge serves a stdio server as a Streamable HTTP endpoint: each session
// (an initialize without Mcp-Session-Id) starts the server, and its frames
// travel through the stdio proxy, so faults apply as they do over stdio.
// POSTed requests are answered with the server's reply, as JSON; what the
// server sends unasked (notifications, its own requests) goes to the
// session's GET event stream, or is dropped when none is open.
type Bridge struct {
	o      BridgeOptions
	allow  map[string]bool
	budget *byteBudget

	mu       sync.Mutex
	sessions map[string]*bridgeSession
	closed   bool
}

// NewBridge checks the options and returns the bridge.
func NewBridge(o BridgeOptions) (*Bridge, error) {
	if len(o.Command) == 0 {
		return nil, errors.New("proxy: bridge: no server command")
	}
	if o.Guard != nil {
		return nil, errors.New("proxy: bridge: guard mode needs one server process; the bridge runs one per session")
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = 16
	}
	if o.ReplyTimeout <= 0 {
		o.ReplyTimeout = 5 * time.Minute
	}
	if o.MaxFrame <= 0 {
		o.MaxFrame = jsonrpc.DefaultMaxFrame
	}
	b := &Bridge{o: o, allow: map[string]bool{}, budget: newByteBudget(o.MemoryBudget), sessions: map[string]*bridgeSession{}}
	for _, a := range o.AllowOrigins {
		b.allow[strings.TrimRight(a, "/")] = true
	}
	return b, nil
}

// Serve serves the bridge on ln until ctx is done, then ends every session.
func (b *Bridge) Serve(ctx context.Context, ln net.Listener) error {
	defer b.Close()
	return serve(ctx, ln, b, b.o.OnError)
}

// Close ends every session's server.
func (b *Bridge) Close() {
	b.mu.Lock()
	b.closed = true
	ss := make([]*bridgeSession, 0, len(b.sessions))
	for _, s := range b.sessions {
		ss = append(ss, s)
	}
	clear(b.sessions)
	b.mu.Unlock()
	for _, s := range ss {
		s.end()
	}
}

// sessionHeader names the session in Streamable HTTP.
const sessionHeader = "Mcp-Session-Id"

// ServeHTTP handles one request of the Streamable HTTP transport.
func (b *Bridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !originAllowed(b.allow, r) {
		http.Error(w, "mcpdrill: origin not allowed", http.StatusForbidden)
		return
	}
	if r.Method == http.MethodPost {
		b.post(w, r)
		return
	}
	s := b.session(r)
	switch {
	case r.Method != http.MethodGet && r.Method != http.MethodDelete:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "mcpdrill: method not allowed", http.StatusMethodNotAllowed)
	case s == nil:
		http.Error(w, "mcpdrill: unknown or missing session", sessionMissing(r))
	case r.Method == http.MethodDelete:
		b.mu.Lock()
		delete(b.sessions, s.id)
		b.mu.Unlock()
		s.end()
		w.WriteHeader(http.StatusOK)
	case !strings.Contains(r.Header.Get("Accept"), "text/event-stream"):
		http.Error(w, "mcpdrill: a GET stream needs Accept: text/event-stream", http.StatusNotAcceptable)
	default:
		s.stream(w, r)
	}
}

// sessionMissing is the status for a request naming no live session: 400
// without the header, 404 for one that ended or never was.
func sessionMissing(r *http.Request) int {
	if r.Header.Get(sessionHeader) == "" {
		return http.StatusBadRequest
	}
	return http.StatusNotFound
}

// session returns the session r names (nil for none: the shared
// stateless server is not addressed by id).
func (b *Bridge) session(r *http.Request) *bridgeSession {
	id := r.Header.Get(sessionHeader)
	if id == "" {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sessions[id]
}

func (b *Bridge) post(w http.ResponseWriter, r *http.Request) {
	max := int64(b.o.MaxFrame)
	if r.ContentLength > max {
		http.Error(w, "mcpdrill: request body over the frame cap", http.StatusRequestEntityTooLarge)
		return
	}
	// The body is let go once it is written to the server (free), not
	// when the answer comes: a long tool call keeps none of the budget.
	held, charged, err := readBudgeted(b.budget, r.Body, r.ContentLength, max+1)
	free := sync.OnceFunc(func() {
		held.release()
		b.budget.give(charged)
	})
	defer free()
	switch {
	case errors.Is(err, errBudget):
		http.Error(w, "mcpdrill: the bridge holds as many bodies as its memory budget allows; retry", http.StatusServiceUnavailable)
		return
	case err != nil:
		http.Error(w, "mcpdrill: reading request body failed", http.StatusBadRequest)
		return
	case int64(len(held.b)) > max:
		http.Error(w, "mcpdrill: request body over the frame cap", http.StatusRequestEntityTooLarge)
		return
	}
	frame := bytes.TrimSpace(held.b)
	// As a Streamable HTTP server's transport does, the bridge answers a
	// body that is not JSON (-32700) or not a JSON-RPC message (-32600)
	// itself, with 400: the stdio server never sees it.
	pk, err := jsonrpc.PeekFrame(frame)
	pk.ID = bytes.Clone(pk.ID) // it outlives the body (free)
	if err != nil || !jsonrpc.Valid(frame) {
		writeJSONStatus(w, http.StatusBadRequest, parseError())
		return
	}
	if pk.Kind == jsonrpc.KindInvalid || pk.Version != "2.0" && pk.Kind != jsonrpc.KindBatch {
		b, _ := jsonrpc.NewErrorResponse(pk.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request"})
		writeJSONStatus(w, http.StatusBadRequest, b)
		return
	}
	s := b.session(r)
	switch {
	case s != nil:
	case r.Header.Get(sessionHeader) != "":
		http.Error(w, "mcpdrill: unknown session", http.StatusNotFound)
		return
	case pk.Method == "initialize":
		if s, err = b.start(false); err != nil {
			http.Error(w, "mcpdrill: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set(sessionHeader, s.id)
	default:
		// No session: the stateless revision (2026-07-28) sends every
		// request so. They share one server process, started on demand.
		if s, err = b.stateless(); err != nil {
			http.Error(w, "mcpdrill: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
	}
	// One line to the server: a pretty-printed body is compacted.
	line := frame
	if bytes.IndexByte(line, '\n') >= 0 || bytes.IndexByte(line, '\r') >= 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, frame); err != nil {
			writeJSONStatus(w, http.StatusBadRequest, parseError())
			return
		}
		line = buf.Bytes()
	}
	switch {
	case pk.Kind == jsonrpc.KindRequest || pk.Kind == jsonrpc.KindBatch && batchHasRequest(frame):
		// A client that takes an event stream gets one: what the server
		// sends while it answers (progress, logging, its own requests)
		// travels on it, then the answer.
		var events chan frameMsg
		var written chan struct{}
		if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			events, written = make(chan frameMsg, 64), make(chan struct{})
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Cache-Control", "no-cache")
			w.WriteHeader(http.StatusOK)
			flush(w)
			go func() {
				defer close(written)
				for m := range events {
					writeData(w, nil, m.held.b)
					flush(w)
					m.release(b.budget)
				}
			}()
		}
		reply, err := s.call(r.Context(), line, pk, b.o.ReplyTimeout, events, free)
		lost := "" // why an answer that came is not relayed
		switch {
		case errors.Is(err, errReplyTooLarge):
			lost = "mcpdrill: the server's reply is over the frame cap"
		case errors.Is(err, errNoRoom):
			lost = "mcpdrill: no room in the bridge's memory budget for the server's reply; retry"
		}
		if events != nil {
			switch {
			case err == nil:
				events <- reply
			case lost != "":
				// The stream has begun: the status can no longer say it.
				events <- frameMsg{held: &heldBody{b: errorAnswer(pk.ID, lost)}}
			}
			close(events)
			<-written // nothing writes to w once the handler returns
			return
		}
		switch {
		case err == nil:
			writeJSONBody(w, reply.held.b)
			reply.release(b.budget)
		case errors.Is(err, errSessionEnded):
			http.Error(w, "mcpdrill: the server ended", http.StatusBadGateway)
		case errors.Is(err, errReplyTooLarge):
			http.Error(w, lost, http.StatusBadGateway)
		case errors.Is(err, errNoRoom):
			http.Error(w, lost, http.StatusServiceUnavailable)
		case r.Context().Err() != nil:
		default:
			http.Error(w, "mcpdrill: no reply from the server", http.StatusGatewayTimeout)
		}
	default: // notifications and responses: accepted
		if !s.send(line) {
			http.Error(w, "mcpdrill: the server ended", http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}
}

// stateless returns the server process that sessionless requests share,
// starting it if there is none.
func (b *Bridge) stateless() (*bridgeSession, error) {
	b.mu.Lock()
	s := b.sessions[""]
	b.mu.Unlock()
	if s != nil {
		return s, nil
	}
	return b.start(true)
}

// start starts a session's server behind the stdio proxy; the stateless
// one is filed under the empty id (and a concurrent start of it returns
// the first).
func (b *Bridge) start(stateless bool) (*bridgeSession, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.sessions[""]; stateless && s != nil {
		return s, nil
	}
	if b.closed {
		return nil, errors.New("the bridge is closing")
	}
	if len(b.sessions) >= b.o.MaxSessions {
		old := b.idlest()
		if old == nil {
			return nil, fmt.Errorf("%d sessions are busy, the most the bridge runs", b.o.MaxSessions)
		}
		delete(b.sessions, old.id)
		go old.end()
	}
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	s := &bridgeSession{id: hex.EncodeToString(raw[:]), waiters: map[string]waiter{}, done: make(chan struct{}), budget: b.budget, onError: b.o.OnError}
	if stateless {
		s.id = ""
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s.in = inW
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		_, err := RunStdio(ctx, StdioOptions{Config: b.o.Config, Command: b.o.Command, Env: b.o.Env, Dir: b.o.Dir,
			Stdin: inR, Stdout: outW, Stderr: b.o.Stderr, Grace: 2 * time.Second})
		if err != nil && b.o.OnError != nil {
			b.o.OnError(err)
		}
		outW.Close()
		inR.Close()
	}()
	go func() {
		s.dispatch(outR, b.o.MaxFrame)
		<-exited
		close(s.done)
		b.mu.Lock()
		if b.sessions[s.id] == s {
			delete(b.sessions, s.id)
		}
		b.mu.Unlock()
	}()
	b.sessions[s.id] = s
	return s, nil
}

// idlest returns the session used least recently with nothing in
// flight and no stream open (nil: none); b.mu is held.
func (b *Bridge) idlest() *bridgeSession {
	var out *bridgeSession
	var at time.Time
	for _, s := range b.sessions {
		s.mu.Lock()
		busy := len(s.waiters) > 0 || len(s.batches) > 0 || len(s.streams) > 0
		last := s.last
		s.mu.Unlock()
		if !busy && (out == nil || last.Before(at)) {
			out, at = s, last
		}
	}
	return out
}

// errSessionEnded reports a session whose server has gone.
var errSessionEnded = errors.New("proxy: bridge: the session's server ended")

// errReplyTooLarge reports an answer over the frame cap, dropped unread.
var errReplyTooLarge = errors.New("proxy: bridge: the server's reply is over the frame cap")

// errNoRoom reports an answer the memory budget had no room for.
var errNoRoom = errors.New("proxy: bridge: no room in the memory budget for the server's reply")

// frameMsg is a server frame on its way to an HTTP response, in a body
// held for it and charged to the memory budget, both let go once it is
// written or dropped (release); or, for an answer, why there is none
// (err, and no body).
type frameMsg struct {
	held    *heldBody
	charged int64
	err     error
}

// release gives the frame's bytes back to budget and lets go of its body.
func (m frameMsg) release(budget *byteBudget) {
	budget.give(m.charged)
	if m.held != nil {
		m.held.release()
	}
}

// waiter is a POST waiting for its answer: the answer goes to ch, with its
// id replaced by id when the request travelled under the bridge's own.
type waiter struct {
	ch chan frameMsg
	id json.RawMessage
}

// bridgeSession is one session: a server behind a stdio proxy, and the
// HTTP requests waiting for its frames.
type bridgeSession struct {
	id      string
	in      *io.PipeWriter
	cancel  context.CancelFunc
	done    chan struct{}
	budget  *byteBudget // the bridge's: every frame held for a response is charged to it
	onError func(error) // nil: dropped

	wmu sync.Mutex // serialises lines to the server

	mu      sync.Mutex
	last    time.Time         // the latest request's arrival
	seq     uint64            // the bridge's own request ids (stateless process)
	waiters map[string]waiter // request id → who waits for its answer
	batches []chan frameMsg   // batch POSTs, in order (nil: one whose POST has gone)
	posts   []chan frameMsg   // event streams of POSTs waiting for their answer
	streams []chan frameMsg   // open GET streams
}

// send writes one line, given in parts, to the server.
func (s *bridgeSession) send(parts ...[]byte) bool {
	s.mu.Lock()
	s.last = time.Now()
	s.mu.Unlock()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	for _, p := range append(parts, newline) {
		if _, err := s.in.Write(p); err != nil {
			return false
		}
	}
	return true
}

// call sends a request (or a batch holding requests), calls sent once
// line is no longer needed, and waits for its answer. While it waits, what
// the server sends unasked goes to events, when given (a POST's event
// stream).
func (s *bridgeSession) call(ctx context.Context, line []byte, pk jsonrpc.Peek, timeout time.Duration, events chan frameMsg, sent func()) (frameMsg, error) {
	wt := waiter{ch: make(chan frameMsg, 1)}
	key := jsonrpc.IDKey(pk.ID)
	parts := [][]byte{line}
	if s.id == "" && pk.Kind == jsonrpc.KindRequest {
		// The shared stateless process hears many clients, whose ids may
		// collide: the request travels under an id of the bridge's, and
		// its answer gets the client's back (route).
		start, end, ok := jsonrpc.IDSpan(line)
		if !ok {
			return frameMsg{}, errors.New("proxy: bridge: a request without an id cannot be given one")
		}
		s.mu.Lock()
		s.seq++
		own, _ := json.Marshal(fmt.Sprintf("mcpdrill-bridge-%d", s.seq))
		s.mu.Unlock()
		parts, key, wt.id = [][]byte{line[:start], own, line[end:]}, jsonrpc.IDKey(own), pk.ID
	}
	return s.await(ctx, parts, key, pk, timeout, events, wt, sent)
}

// await sends the line in parts, calls sent, and waits for the answer
// filed under key (or the next batch answer, for a batch). The answer is
// the caller's to release.
func (s *bridgeSession) await(ctx context.Context, parts [][]byte, key string, pk jsonrpc.Peek, timeout time.Duration, events chan frameMsg, wt waiter, sent func()) (frameMsg, error) {
	ch := wt.ch
	s.mu.Lock()
	if pk.Kind == jsonrpc.KindBatch {
		s.batches = append(s.batches, ch)
	} else {
		s.waiters[key] = wt
	}
	if events != nil {
		s.posts = append(s.posts, events)
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.waiters[key].ch == ch {
			delete(s.waiters, key)
		}
		if i := slices.Index(s.batches, ch); i >= 0 {
			s.batches[i] = nil // its answer keeps its place, and is dropped
		}
		s.posts = slices.DeleteFunc(s.posts, func(c chan frameMsg) bool { return c == events })
		s.mu.Unlock()
		// Nothing is sent to ch any more; an answer that came as the
		// wait ended is let go.
		select {
		case m := <-ch:
			m.release(s.budget)
		default:
		}
	}()
	ok := s.send(parts...)
	sent()
	if !ok {
		return frameMsg{}, errSessionEnded
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case m := <-ch:
		return m, m.err
	case <-s.done:
		return frameMsg{}, errSessionEnded
	case <-ctx.Done():
		return frameMsg{}, ctx.Err()
	case <-t.C:
		return frameMsg{}, context.DeadlineExceeded
	}
}

// dispatch routes the server's frames: an answer to the request waiting
// for it, anything else to the open GET streams. A frame over max is
// dropped unread, and the request it answers fails (tooLarge).
func (s *bridgeSession) dispatch(out io.Reader, max int) {
	lr := jsonrpc.NewLineReader(out, max)
	lr.KeepEdges(jsonrpc.OversizeEdge)
	for {
		line, err := lr.ReadLine()
		switch {
		case err == nil:
			if frame := bytes.TrimSpace(line); len(frame) > 0 {
				s.route(frame)
			}
		case errors.Is(err, jsonrpc.ErrFrameTooLarge):
			s.tooLarge(lr.Oversize())
		default:
			return
		}
	}
}

// tooLarge fails the request a frame over the frame cap answers: the one
// its id names (found in the frame's first or last bytes), or the oldest
// batch for an array. A frame that shows itself a request or notification
// fails nothing, nor does a reply whose id cannot be found: its request
// waits out the reply timeout.
func (s *bridgeSession) tooLarge(n int64, head, tail []byte) {
	if s.onError != nil {
		s.onError(fmt.Errorf("proxy: bridge: the server sent a frame of %d bytes, over the frame cap; dropped", n))
	}
	id, reply := jsonrpc.OversizeID(head, tail)
	head = bytes.TrimLeft(head, " \t")
	s.mu.Lock()
	defer s.mu.Unlock()
	var ch chan frameMsg
	switch {
	case !reply:
	case id != nil:
		ch = s.waiters[jsonrpc.IDKey(id)].ch
		delete(s.waiters, jsonrpc.IDKey(id))
	case len(head) > 0 && head[0] == '[' && len(s.batches) > 0:
		ch = s.batches[0]
		s.batches = s.batches[1:]
	}
	if ch != nil {
		ch <- frameMsg{err: errReplyTooLarge}
	}
}

// route hands a frame (valid until it returns) to the response it belongs
// in, copied into a held body charged to the memory budget: an answer
// fails with errNoRoom when the budget has no room for it, and a stream
// loses an unasked frame it has no room for, as it does one it does not
// keep up with.
func (s *bridgeSession) route(frame []byte) {
	pk, err := jsonrpc.PeekFrame(frame)
	s.mu.Lock()
	defer s.mu.Unlock()
	answer, wt := false, waiter{}
	switch {
	case err == nil && pk.Kind == jsonrpc.KindBatch && len(s.batches) > 0:
		answer, wt.ch = true, s.batches[0]
		s.batches = s.batches[1:]
	case err == nil && (pk.Kind == jsonrpc.KindResponse || pk.Kind == jsonrpc.KindError):
		key := jsonrpc.IDKey(pk.ID)
		if wt = s.waiters[key]; wt.ch != nil {
			answer = true
			delete(s.waiters, key)
		}
	}
	if answer {
		if wt.ch == nil {
			return // the batch's POST has gone
		}
		parts := [][]byte{frame}
		if wt.id != nil {
			if start, end, ok := jsonrpc.IDSpan(frame); ok {
				parts = [][]byte{frame[:start], wt.id, frame[end:]}
			}
		}
		wt.ch <- s.hold(parts...)
		return
	}
	// Unasked: on the latest POST stream still waiting for its answer,
	// else on every GET stream.
	targets := s.streams
	if n := len(s.posts); n > 0 {
		targets = s.posts[n-1:]
	}
	for _, st := range targets {
		m := s.hold(frame)
		if m.err != nil {
			continue
		}
		select {
		case st <- m:
		default: // a stream that does not keep up loses the frame
			m.release(s.budget)
		}
	}
}

// hold copies the frame given in parts into a held body charged to the
// budget, or returns errNoRoom.
func (s *bridgeSession) hold(parts ...[]byte) frameMsg {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if !s.budget.take(int64(n)) {
		return frameMsg{err: errNoRoom}
	}
	h := newHeldBody(int64(n))
	h.b = h.b[:0]
	for _, p := range parts {
		h.b = append(h.b, p...)
	}
	return frameMsg{held: h, charged: int64(n)}
}

// stream serves a GET event stream of what the server sends unasked.
func (s *bridgeSession) stream(w http.ResponseWriter, r *http.Request) {
	ch := make(chan frameMsg, 64)
	s.mu.Lock()
	s.streams = append(s.streams, ch)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.streams = slices.DeleteFunc(s.streams, func(c chan frameMsg) bool { return c == ch })
		s.mu.Unlock()
		for { // nothing is sent to ch any more: give back what it holds
			select {
			case m := <-ch:
				m.release(s.budget)
			default:
				return
			}
		}
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush(w)
	for {
		select {
		case m := <-ch:
			writeData(w, nil, m.held.b)
			flush(w)
			m.release(s.budget)
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
}

// end stops the session's server.
func (s *bridgeSession) end() {
	_ = s.in.Close()
	s.cancel()
	<-s.done
}

func batchHasRequest(frame []byte) bool {
	elems, err := jsonrpc.SplitArray(frame)
	if err != nil {
		return false
	}
	for _, e := range elems {
		if pk, err := jsonrpc.PeekFrame(e); err == nil && pk.Kind == jsonrpc.KindRequest {
			return true
		}
	}
	return false
}

// errorAnswer is the error answer to request id, whose reply is not
// relayed (why), for a POST whose event stream has begun.
func errorAnswer(id json.RawMessage, why string) []byte {
	b, _ := jsonrpc.NewErrorResponse(id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: why})
	return b
}

func parseError() []byte {
	b, _ := jsonrpc.NewErrorResponse(nil, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "Parse error"})
	return b
}

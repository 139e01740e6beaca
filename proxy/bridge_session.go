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
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// bridgeSession is one server process behind the stdio proxy, and the
// HTTP requests waiting for its frames: a session's (one client's), or the
// one sessionless clients share (shared).
type bridgeSession struct {
	id     string
	shared bool
	b      *Bridge
	in     *io.PipeWriter
	cancel context.CancelFunc
	done   chan struct{}

	wmu sync.Mutex // serialises lines to the server

	mu    sync.Mutex
	last  time.Time              // the latest request's arrival, or stream's end
	calls map[string]*bridgeCall // by the key of an id the server saw: a request's, a batch member's
	// tokens holds the calls by the key of each progress token the server
	// saw in one of their requests.
	tokens map[string]*bridgeCall
	// asks (shared process) holds the server's requests handed to a
	// client, by the key of the id the client was given; askedBy maps the
	// key of the server's own id to that key.
	asks    map[string]serverAsk
	askedBy map[string]string
	// live is every call in flight; on the shared process a call whose
	// POST has gone stays until it is answered or expires.
	live map[*bridgeCall]struct{}
	// alone (shared process) is the call that has been the only one in
	// flight since it was opened; nil when there is none.
	alone   *bridgeCall
	seq     uint64
	streams []chan frameMsg // open GET streams, oldest first
}

// bridgeCall is one POSTed request, or batch holding requests, waiting for
// its answer.
type bridgeCall struct {
	seq    uint64
	answer chan frameMsg // the answer: one message, ever
	// events carries what the server sends for the call before its
	// answer; nil when the client takes JSON only.
	events chan frameMsg
	// own is the id the request travels under when the bridge gave it one
	// (shared process), else nil.
	own json.RawMessage
	// ids maps the key of each id the server saw for the call to the
	// client's id (nil: the same); tokens does the same for progress
	// tokens.
	ids, tokens map[string]json.RawMessage
	asks        []string // keys of the server requests handed over for it
	batch       bool
	want        int        // batch: member answers still to come
	parts       []frameMsg // batch: member answers so far
	answered    bool       // an answer (or failure) is in answer
	gone        bool       // shared process: its POST has ended unanswered
	until       time.Time  // gone: forgotten from then on
}

// serverAsk is a server request handed to a client under an id of the
// bridge's.
type serverAsk struct {
	server json.RawMessage // the id the server sent it under
	given  json.RawMessage // the id the client was given
	call   *bridgeCall
}

func newBridgeSession(b *Bridge, id string) *bridgeSession {
	return &bridgeSession{id: id, shared: id == "", b: b, done: make(chan struct{}),
		calls: map[string]*bridgeCall{}, tokens: map[string]*bridgeCall{}, asks: map[string]serverAsk{},
		askedBy: map[string]string{}, live: map[*bridgeCall]struct{}{}}
}

// newID returns a fresh id of the bridge's, as a JSON string: 128 bits from
// crypto/rand, so no client can predict one, nor send one that is live.
func newID() json.RawMessage {
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	return json.RawMessage(`"mcpdrill-` + hex.EncodeToString(raw[:]) + `"`)
}

// Metadata keys the bridge reads in 2026-07-28 frames.
const (
	metaProgressToken  = "progressToken"
	metaSubscriptionID = "io.modelcontextprotocol/subscriptionId"
)

// errors the opening of a call fails with.
var (
	errIDInUse   = errors.New("proxy: bridge: a request of this session with that id is in flight")
	errTooMany   = errors.New("proxy: bridge: as many requests are in flight as the bridge holds for one server")
	errAmbiguous = errors.New("proxy: bridge: the body names its id or progress token more than once, or in two cases")
)

// use reports when the session was last used and whether it is in use
// now: a request in flight or a stream open.
func (s *bridgeSession) use() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last, len(s.live) > 0 || len(s.streams) > 0
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

// replacement is a span of a frame to write as with instead.
type replacement struct {
	start, end int
	with       []byte
}

// splice returns frame in parts with the replacements (in any order, not
// overlapping) made.
func splice(frame []byte, reps ...replacement) [][]byte {
	slices.SortFunc(reps, func(a, b replacement) int { return a.start - b.start })
	parts := make([][]byte, 0, 2*len(reps)+1)
	at := 0
	for _, r := range reps {
		parts = append(parts, frame[at:r.start], r.with)
		at = r.end
	}
	return append(parts, frame[at:])
}

// open registers a call for the request or batch in line and returns the
// line to send, in parts. On the shared process a request travels under
// an id of the bridge's, and so does its progress token, if any; a
// session's frames travel as they are. events makes the call carry what
// the server sends for it before its answer.
func (s *bridgeSession) open(line []byte, pk jsonrpc.Peek, events bool) (*bridgeCall, [][]byte, error) {
	c := &bridgeCall{answer: make(chan frameMsg, 1), ids: map[string]json.RawMessage{}, tokens: map[string]json.RawMessage{}}
	if events {
		c.events = make(chan frameMsg, 64)
	}
	parts := [][]byte{line}
	switch {
	case pk.Kind == jsonrpc.KindBatch && s.shared:
		return nil, nil, errors.New("proxy: bridge: a batch needs a session")
	case pk.Kind == jsonrpc.KindBatch:
		elems, err := jsonrpc.SplitArray(line)
		if err != nil {
			return nil, nil, err
		}
		c.batch = true
		for _, e := range elems {
			epk, err := jsonrpc.PeekFrame(e)
			if err != nil || epk.Kind != jsonrpc.KindRequest {
				continue
			}
			key := jsonrpc.IDKey(epk.ID)
			if _, dup := c.ids[key]; dup {
				return nil, nil, errIDInUse
			}
			c.ids[key] = nil
			c.want++
			if sp, ok := jsonrpc.MemberSpan(e, "params", "_meta", metaProgressToken); ok {
				c.tokens[jsonrpc.IDKey(e[sp.Start:sp.End])] = nil
			}
		}
	case s.shared:
		if pk.Ambiguous {
			return nil, nil, errAmbiguous
		}
		idSpan, ok := jsonrpc.MemberSpan(line, "id")
		if !ok {
			return nil, nil, errors.New("proxy: bridge: a request without an id cannot be given one")
		}
		c.own = newID()
		c.ids[jsonrpc.IDKey(c.own)] = bytes.Clone(pk.ID)
		reps := []replacement{{idSpan.Start, idSpan.End, c.own}}
		tok, ok := jsonrpc.MemberSpan(line, "params", "_meta", metaProgressToken)
		if tok.Ambiguous {
			return nil, nil, errAmbiguous
		}
		if ok {
			own := newID()
			c.tokens[jsonrpc.IDKey(own)] = bytes.Clone(line[tok.Start:tok.End])
			reps = append(reps, replacement{tok.Start, tok.End, own})
		}
		parts = splice(line, reps...)
	default:
		c.ids[jsonrpc.IDKey(pk.ID)] = nil
		if sp, ok := jsonrpc.MemberSpan(line, "params", "_meta", metaProgressToken); ok {
			c.tokens[jsonrpc.IDKey(line[sp.Start:sp.End])] = nil
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(time.Now())
	if len(s.live) >= s.b.callLimit {
		return nil, nil, errTooMany
	}
	for k := range c.ids {
		if s.calls[k] != nil {
			return nil, nil, errIDInUse
		}
	}
	for k := range c.ids {
		s.calls[k] = c
	}
	for k := range c.tokens {
		if s.tokens[k] == nil { // a token in use stays its first call's
			s.tokens[k] = c
		}
	}
	s.seq++
	c.seq = s.seq
	s.alone = nil
	if len(s.live) == 0 && s.shared {
		s.alone = c
	}
	s.live[c] = struct{}{}
	return c, parts, nil
}

// forget drops a call from the session's tables; s.mu is held.
func (s *bridgeSession) forget(c *bridgeCall) {
	for k := range c.ids {
		if s.calls[k] == c {
			delete(s.calls, k)
		}
	}
	for k := range c.tokens {
		if s.tokens[k] == c {
			delete(s.tokens, k)
		}
	}
	for _, k := range c.asks {
		if a, ok := s.asks[k]; ok && a.call == c {
			delete(s.askedBy, jsonrpc.IDKey(a.server))
			delete(s.asks, k)
		}
	}
	for _, m := range c.parts {
		m.release(s.b.budget)
	}
	c.parts = nil
	delete(s.live, c)
	if s.alone == c {
		s.alone = nil
	}
}

// expire forgets the abandoned calls whose time is up; s.mu is held.
func (s *bridgeSession) expire(now time.Time) {
	for c := range s.live {
		if c.gone && now.After(c.until) {
			s.forget(c)
		}
	}
}

// abandon ends the wait of a call whose POST has gone or given up. On the
// shared process an unanswered call is kept, gone, until the server
// answers it or the reply timeout passes again, so that nothing the server
// still sends for it goes to another client, and the server is told to
// cancel it (a 2026-07-28 client cancels by closing its stream).
func (s *bridgeSession) abandon(c *bridgeCall) {
	s.mu.Lock()
	cancel := s.shared && !c.answered && !c.gone && c.own != nil
	switch {
	case c.answered:
		s.forget(c)
	case s.shared:
		c.gone, c.until = true, time.Now().Add(s.b.o.ReplyTimeout)
	default:
		s.forget(c)
	}
	s.mu.Unlock()
	for more := true; more; { // nothing is sent to the call any more: give back what it holds
		select {
		case m := <-c.answer:
			m.release(s.b.budget)
		case m := <-c.events:
			m.release(s.b.budget)
		default:
			more = false
		}
	}
	if cancel {
		note, _ := jsonrpc.NewNotification("notifications/cancelled", map[string]any{"requestId": c.own, "reason": "mcpdrill bridge: the client's request ended"})
		go s.send(note) // a server that reads nothing does not hold the handler
	}
}

// deliver gives a call its answer (or failure) and forgets it; s.mu is
// held.
func (s *bridgeSession) deliver(c *bridgeCall, m frameMsg) {
	s.forget(c)
	if c.gone || c.answered {
		m.release(s.b.budget)
		return
	}
	c.answered = true
	c.answer <- m // the one answer: the channel holds it
}

// toCall puts a message on a call's event stream; it reports false (and
// lets the message go) when the call takes none, has gone, or does not
// keep up. s.mu is held.
func (s *bridgeSession) toCall(c *bridgeCall, m frameMsg) bool {
	if m.err != nil {
		return false
	}
	if !c.takesEvents() {
		m.release(s.b.budget)
		return false
	}
	select {
	case c.events <- m:
		return true
	default:
		m.release(s.b.budget)
		return false
	}
}

// takesEvents reports whether the call's client takes what the server
// sends for it: it accepts an event stream, and still waits.
func (c *bridgeCall) takesEvents() bool { return c.events != nil && !c.gone && !c.answered }

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

// hold copies the frame given in parts into a held body charged to the
// budget, or returns errNoRoom.
func (s *bridgeSession) hold(parts ...[]byte) frameMsg {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if !s.b.budget.take(int64(n)) {
		return frameMsg{err: errNoRoom}
	}
	h := newHeldBody(int64(n))
	h.b = h.b[:0]
	for _, p := range parts {
		h.b = append(h.b, p...)
	}
	return frameMsg{held: h, charged: int64(n)}
}

// dispatch routes the server's frames until its output ends. A frame over
// max is dropped unread, and the request it answers fails (tooLarge).
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

// tooLarge fails the call a frame over the frame cap answers: the one its
// id names (found in the frame's first or last bytes; for an array, its
// first member's), or, for an array, the only batch in flight. A frame
// that shows itself a request or notification fails nothing, nor does a
// reply whose call cannot be found: it waits out the reply timeout.
func (s *bridgeSession) tooLarge(n int64, head, tail []byte) {
	if s.b.o.OnError != nil {
		s.b.o.OnError(fmt.Errorf("proxy: bridge: the server sent a frame of %d bytes, over the frame cap; dropped", n))
	}
	head = bytes.TrimLeft(head, " \t")
	array := len(head) > 0 && head[0] == '['
	if array {
		head, tail = bytes.TrimLeft(head[1:], " \t"), nil
	}
	id, reply := jsonrpc.OversizeID(head, tail)
	s.mu.Lock()
	defer s.mu.Unlock()
	var c *bridgeCall
	switch {
	case id != nil && reply:
		c = s.calls[jsonrpc.IDKey(id)]
	case array:
		c = s.onlyBatch()
	}
	if c != nil && (!array || c.batch) {
		s.deliver(c, frameMsg{err: errReplyTooLarge})
	}
}

// onlyBatch returns the batch in flight when it is the only call in
// flight; s.mu is held.
func (s *bridgeSession) onlyBatch() *bridgeCall {
	if len(s.live) != 1 {
		return nil
	}
	for c := range s.live {
		if c.batch && !c.gone {
			return c
		}
	}
	return nil
}

// route hands a server frame (valid until it returns) to the response it
// belongs in, copied into a held body charged to the memory budget: an
// answer fails with errNoRoom when the budget has no room for it, and a
// stream loses a frame it has no room for, as it does one it does not
// keep up with.
func (s *bridgeSession) route(frame []byte) {
	pk, err := jsonrpc.PeekFrame(frame)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err != nil:
		s.unasked(frame, jsonrpc.Peek{})
	case pk.Kind == jsonrpc.KindBatch:
		s.routeArray(frame)
	case pk.Kind == jsonrpc.KindResponse || pk.Kind == jsonrpc.KindError:
		if !s.routeAnswer(frame, pk) {
			s.unasked(frame, pk)
		}
	default:
		s.unasked(frame, pk)
	}
}

// routeAnswer gives an answer to the call its id names, with the client's
// id back in it; for a batch, the batch's answer is complete with its
// last member's. It reports false when no call is waiting for it. s.mu
// is held.
func (s *bridgeSession) routeAnswer(frame []byte, pk jsonrpc.Peek) bool {
	key := jsonrpc.IDKey(pk.ID)
	c := s.calls[key]
	if c == nil {
		if c = s.onlyBatch(); pk.ID == nil && c != nil && len(c.parts) == 0 {
			// A batch refused whole is answered with one error.
			s.deliver(c, s.hold(frame))
			return true
		}
		return false
	}
	delete(s.calls, key)
	m := s.hold(restore(frame, c.ids[key])...)
	if !c.batch {
		s.deliver(c, m)
		return true
	}
	if m.err != nil {
		s.deliver(c, m)
		return true
	}
	c.parts = append(c.parts, m)
	if c.want--; c.want <= 0 {
		s.finishBatch(c)
	}
	return true
}

// restore returns frame with its id replaced by client's (nil: as it is).
func restore(frame []byte, client json.RawMessage) [][]byte {
	if client == nil {
		return [][]byte{frame}
	}
	start, end, ok := jsonrpc.IDSpan(frame)
	if !ok {
		return [][]byte{frame}
	}
	return [][]byte{frame[:start], client, frame[end:]}
}

// finishBatch delivers a batch's answer: the member answers it has, as one
// array; s.mu is held.
func (s *bridgeSession) finishBatch(c *bridgeCall) {
	for _, m := range c.parts {
		if m.err != nil {
			s.deliver(c, frameMsg{err: m.err})
			return
		}
	}
	parts := make([][]byte, 0, 2*len(c.parts)+1)
	parts = append(parts, []byte("["))
	for i, m := range c.parts {
		if i > 0 {
			parts = append(parts, []byte(","))
		}
		parts = append(parts, m.held.b)
	}
	parts = append(parts, []byte("]"))
	m := s.hold(parts...)
	s.deliver(c, m) // forget releases the members
}

// routeArray routes a server array: its answers to their calls; a batch
// any of them belongs to is complete with it (with what the server sent
// for it apart before), and takes the array's answers that name no call
// (an invalid member's error) when it is the only batch the array names.
// Requests and notifications in it travel as if sent alone. s.mu is held.
func (s *bridgeSession) routeArray(frame []byte) {
	elems, err := jsonrpc.SplitArray(frame)
	if err != nil {
		s.unasked(frame, jsonrpc.Peek{Kind: jsonrpc.KindBatch})
		return
	}
	var batches []*bridgeCall
	var stray []json.RawMessage
	for _, e := range elems {
		epk, err := jsonrpc.PeekFrame(e)
		if err != nil || epk.Kind != jsonrpc.KindResponse && epk.Kind != jsonrpc.KindError {
			s.unasked(e, epk)
			continue
		}
		key := jsonrpc.IDKey(epk.ID)
		switch c := s.calls[key]; {
		case c == nil:
			stray = append(stray, e)
		case c.batch:
			delete(s.calls, key)
			c.parts = append(c.parts, s.hold(restore(e, c.ids[key])...))
			if !slices.Contains(batches, c) {
				batches = append(batches, c)
			}
		default:
			s.routeAnswer(e, epk)
		}
	}
	for _, e := range stray {
		if len(batches) == 1 {
			batches[0].parts = append(batches[0].parts, s.hold(e))
			continue
		}
		epk, _ := jsonrpc.PeekFrame(e)
		s.unasked(e, epk)
	}
	for _, c := range batches {
		s.finishBatch(c)
	}
}

// unasked routes a frame that answers no call: a server request, a
// notification, or an answer nobody waits for. On the shared process a
// request or notification goes to the call it is attributed to (see
// attribute), or is withheld, as is anything else; a server request
// withheld is answered with an error, so the server does not wait for
// ever. A session's goes to the call it is attributed
// to, else to its latest GET stream, else to its latest call taking
// events, else nowhere. s.mu is held.
func (s *bridgeSession) unasked(frame []byte, pk jsonrpc.Peek) {
	c, reps, ok := s.attribute(frame, pk)
	if !s.shared {
		if ok && c.takesEvents() {
			s.toCall(c, s.hold(splice(frame, reps...)...))
			return
		}
		if n := len(s.streams); n > 0 {
			s.toStream(s.streams[n-1], frame)
			return
		}
		var latest *bridgeCall
		for c := range s.live {
			if c.events != nil && (latest == nil || c.seq > latest.seq) {
				latest = c
			}
		}
		if latest != nil {
			s.toCall(latest, s.hold(frame))
		}
		return
	}
	request := pk.Kind == jsonrpc.KindRequest
	if !request && pk.Kind != jsonrpc.KindNotification {
		// An answer no call waits for (a duplicate, one to a call
		// forgotten), or a line that is no message: nobody's.
		ok = false
	}
	switch {
	case !ok && request:
		s.b.withhold("a request")
		s.decline(pk.ID)
		return
	case !ok && pk.Kind == jsonrpc.KindNotification:
		s.b.withhold("a notification")
		return
	case !ok:
		s.b.withhold("a message that answers no request in flight")
		return
	case request && !c.takesEvents():
		s.decline(pk.ID)
		return
	case request:
		// The client answers it under an id of the bridge's.
		start, end, found := jsonrpc.IDSpan(frame)
		if !found {
			return
		}
		own := newID()
		key := jsonrpc.IDKey(own)
		s.asks[key] = serverAsk{server: bytes.Clone(pk.ID), given: own, call: c}
		s.askedBy[jsonrpc.IDKey(pk.ID)] = key
		c.asks = append(c.asks, key)
		reps = append(reps, replacement{start, end, own})
	}
	if !s.toCall(c, s.hold(splice(frame, reps...)...)) && request {
		s.decline(pk.ID)
	}
}

// decline answers a server request no client will see, with an error, so
// that the server does not wait for an answer for ever (the line goes out
// on a goroutine of its own: s.mu is held).
func (s *bridgeSession) decline(id json.RawMessage) {
	if id == nil {
		return
	}
	b, err := jsonrpc.NewErrorResponse(id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "mcpdrill bridge: not delivered: the request belongs to no single client's request in flight"})
	if err == nil {
		go s.send(b)
	}
}

// attribute finds the call a frame the server sent unasked belongs to,
// and the replacements that give it the client's view (its token or id
// back). A frame that names a call (a progress notification's token, a
// cancellation's request id, a subscription id) belongs to the call it
// names, or to none when that call is not in flight; one that names none
// belongs, on the shared process, to the only call in flight when that
// call has been alone since it was opened, and in a session to the only
// call in flight. ok is false when it belongs to none. s.mu is held.
//
// A message the server sends about a request after answering it is not
// part of that exchange (its stream has ended with the answer), and may
// be attributed to the next call alone in flight; one about a call whose
// client went away is not, since that call stays in flight (abandon).
func (s *bridgeSession) attribute(frame []byte, pk jsonrpc.Peek) (*bridgeCall, []replacement, bool) {
	var c *bridgeCall
	var reps []replacement
	named, ok := false, true
	name := func(sp jsonrpc.Span, found bool, lookup func(key string) (*bridgeCall, json.RawMessage)) {
		if !found && !sp.Ambiguous {
			return
		}
		named = true
		if sp.Ambiguous {
			ok = false
			return
		}
		to, client := lookup(jsonrpc.IDKey(frame[sp.Start:sp.End]))
		if to == nil || c != nil && c != to {
			ok = false
			return
		}
		c = to
		if client != nil {
			reps = append(reps, replacement{sp.Start, sp.End, client})
		}
	}
	byID := func(key string) (*bridgeCall, json.RawMessage) {
		if to := s.calls[key]; to != nil {
			return to, to.ids[key]
		}
		if k, asked := s.askedBy[key]; asked {
			a := s.asks[k]
			return a.call, a.given
		}
		return nil, nil
	}
	switch pk.Method {
	case "notifications/progress":
		sp, found := jsonrpc.MemberSpan(frame, "params", metaProgressToken)
		name(sp, found, func(key string) (*bridgeCall, json.RawMessage) {
			if to := s.tokens[key]; to != nil {
				return to, to.tokens[key]
			}
			return nil, nil
		})
	case "notifications/cancelled":
		sp, found := jsonrpc.MemberSpan(frame, "params", "requestId")
		name(sp, found, byID)
	}
	sp, found := jsonrpc.MemberSpan(frame, "params", "_meta", metaSubscriptionID)
	name(sp, found, byID)
	switch {
	case named:
		return c, reps, ok && c != nil
	case len(s.live) != 1:
		return nil, nil, false
	case !s.shared:
		for c := range s.live {
			return c, nil, true
		}
	case s.alone != nil:
		return s.alone, nil, true
	}
	return nil, nil, false
}

// toStream puts a frame on a GET stream; a stream that does not keep up
// loses it. s.mu is held.
func (s *bridgeSession) toStream(st chan frameMsg, frame []byte) {
	m := s.hold(frame)
	if m.err != nil {
		return
	}
	select {
	case st <- m:
	default:
		m.release(s.b.budget)
	}
}

// stream serves a GET event stream of what the session's server sends
// for no request.
func (s *bridgeSession) stream(w http.ResponseWriter, r *http.Request) {
	ch := make(chan frameMsg, 64)
	s.mu.Lock()
	if len(s.streams) >= maxStreams {
		s.mu.Unlock()
		w.Header().Set("Retry-After", "1")
		http.Error(w, "mcpdrill: as many streams are open on this session as the bridge allows", http.StatusServiceUnavailable)
		return
	}
	s.streams = append(s.streams, ch)
	s.last = time.Now()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.streams = slices.DeleteFunc(s.streams, func(c chan frameMsg) bool { return c == ch })
		s.last = time.Now()
		s.mu.Unlock()
		for { // nothing is sent to ch any more: give back what it holds
			select {
			case m := <-ch:
				m.release(s.b.budget)
			default:
				return
			}
		}
	}()
	sseHeaders(w)
	for {
		select {
		case m := <-ch:
			writeData(w, nil, m.held.b)
			flush(w)
			m.release(s.b.budget)
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
}

// sseHeaders begins an event-stream response.
func sseHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flush(w)
}

// end stops the session's server.
func (s *bridgeSession) end() {
	_ = s.in.Close()
	s.cancel()
	<-s.done
}

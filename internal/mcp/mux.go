package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// maxAbandoned bounds the memory of timed-out request ids kept so that late
// replies are recognised as late rather than unsolicited.
const maxAbandoned = 1024

type delivery struct {
	msg *jsonrpc.Message
	err error
	// seq numbers the messages the mux delivered, in the order they were
	// read (0 for a failure): on stdio, the order the server wrote them.
	seq uint64
}

// mux correlates responses that arrive asynchronously (stdio, HTTP+SSE GET
// stream) with pending requests by jsonrpc.IDKey.
type mux struct {
	obs *observer

	mu        sync.Mutex
	pending   map[string]chan delivery
	raw       []chan delivery // waiters for a null-id response (SendRaw)
	abandoned map[string]struct{}
	abOrder   []string
	err       error  // set once the connection is gone
	delivered uint64 // messages delivered so far (delivery.seq)

	// answer sends a reply frame to a server→client request (best effort).
	answer func(frame []byte)
}

func newMux(obs *observer) *mux {
	return &mux{obs: obs, pending: map[string]chan delivery{}, abandoned: map[string]struct{}{}}
}

// register reserves key for a request; rawNull also waits for an id-less
// error response. The returned cancel must be called when done waiting.
func (m *mux) register(key string, rawNull bool) (chan delivery, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return nil, m.err
	}
	ch := make(chan delivery, 1)
	if key != "" {
		if _, dup := m.pending[key]; dup {
			return nil, fmt.Errorf("mcp: request id %s already in flight", key)
		}
		m.pending[key] = ch
	}
	if rawNull || key == "" {
		m.raw = append(m.raw, ch)
	}
	return ch, nil
}

// done releases key; abandon remembers it so a late reply is noted as such.
func (m *mux) done(key string, ch chan delivery, abandon bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if key != "" && m.pending[key] == ch {
		delete(m.pending, key)
		if abandon {
			if _, ok := m.abandoned[key]; !ok {
				if len(m.abOrder) >= maxAbandoned {
					delete(m.abandoned, m.abOrder[0])
					m.abOrder = m.abOrder[1:]
				}
				m.abandoned[key] = struct{}{}
				m.abOrder = append(m.abOrder, key)
			}
		}
	}
	m.dropRaw(ch)
}

// wait waits for the reply to the request registered as key on ch, and
// releases key; when ctx ends first, key is abandoned (see done).
func (m *mux) wait(ctx context.Context, key string, ch chan delivery) (*jsonrpc.Message, error) {
	d, err := m.waitDelivery(ctx, key, ch)
	return d.msg, err
}

// waitDelivery is wait, with the delivery's sequence number.
func (m *mux) waitDelivery(ctx context.Context, key string, ch chan delivery) (delivery, error) {
	select {
	case d := <-ch:
		m.done(key, ch, false)
		return d, d.err
	case <-ctx.Done():
		m.done(key, ch, true)
		return delivery{}, ctx.Err()
	}
}

// inFlight reports how many requests are waiting (tests check for leaks).
func (m *mux) inFlight() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.pending) + len(m.raw)
}

// fail ends every waiter with err and refuses new ones.
func (m *mux) fail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err == nil {
		m.err = err
	}
	for k, ch := range m.pending {
		select {
		case ch <- delivery{err: m.err}:
		default:
		}
		delete(m.pending, k)
	}
	for _, ch := range m.raw {
		select {
		case ch <- delivery{err: m.err}:
		default:
		}
	}
	m.raw = nil
}

// failKey ends one waiter with err (its reply was lost, e.g. oversize).
func (m *mux) failKey(key string, err error) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	ch, ok := m.pending[key]
	if !ok {
		return false
	}
	delete(m.pending, key)
	select {
	case ch <- delivery{err: err}:
	default:
	}
	return true
}

// failSole fails the only pending request, if exactly one is pending.
func (m *mux) failSole(err error) {
	m.mu.Lock()
	var key string
	n := len(m.pending)
	for k := range m.pending {
		key = k
	}
	m.mu.Unlock()
	if n == 1 {
		m.failKey(key, err)
	}
}

// dispatchFrame handles one received frame (a line or an SSE data payload).
func (m *mux) dispatchFrame(frame []byte) {
	t := bytes.TrimSpace(frame)
	if len(t) == 0 {
		m.obs.count("stdout-noise", "blank line")
		return
	}
	if t[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(t, &batch) != nil {
			m.noise(frame)
			return
		}
		m.obs.note("batch", fmt.Sprintf("%d messages", len(batch)))
		for _, b := range batch {
			m.dispatchFrame(b)
		}
		return
	}
	if t[0] != '{' {
		m.noise(frame)
		return
	}
	msg, err := jsonrpc.Decode(bytes.Clone(t))
	if err != nil {
		// A JSON-RPC response the decoder cannot take (nesting beyond its
		// limit, say) still answers its request: fail that request with the
		// reason instead of letting it time out as noise.
		if p, perr := jsonrpc.PeekFrame(t); perr == nil && p.ID != nil && (p.Kind == jsonrpc.KindResponse || p.Kind == jsonrpc.KindError) {
			m.obs.count("undecodable-frame", fmt.Sprintf("%d bytes", len(t)))
			if m.failKey(jsonrpc.IDKey(p.ID), fmt.Errorf("%w: %v", ErrUndecodable, err)) {
				return
			}
		}
		m.noise(frame)
		return
	}
	m.dispatch(msg)
}

func (m *mux) noise(frame []byte) {
	p := frame
	if len(p) > 80 {
		p = p[:80]
	}
	m.obs.count("stdout-noise", fmt.Sprintf("%d bytes, starts %q", len(frame), p))
}

// dispatch routes a decoded message. One without "jsonrpc": "2.0" is no
// JSON-RPC 2.0 message and is noted as such (on stdio it breaks stdout's
// purity), but still routed: what it answers is read as its answer.
func (m *mux) dispatch(msg *jsonrpc.Message) {
	if msg.JSONRPC != jsonrpc.Version && msg.Kind() != jsonrpc.KindInvalid {
		m.obs.count("invalid-message", `JSON-RPC message whose jsonrpc member is not "2.0"`)
	}
	switch msg.Kind() {
	case jsonrpc.KindRequest:
		m.obs.note("server-request", shortText(msg.Method, 64))
		if m.answer != nil {
			m.answer(answerServerRequest(msg))
		}
	case jsonrpc.KindNotification:
		m.obs.note("notification", shortText(msg.Method, 64))
	case jsonrpc.KindResponse, jsonrpc.KindError:
		m.deliver(msg)
	default:
		m.obs.count("invalid-message", "JSON object that is not a JSON-RPC message")
	}
}

func (m *mux) deliver(msg *jsonrpc.Message) {
	key := jsonrpc.IDKey(msg.ID)
	m.mu.Lock()
	var ch chan delivery
	if key != "" {
		if c, ok := m.pending[key]; ok {
			ch = c
			delete(m.pending, key)
			m.dropRaw(c)
		}
	} else if len(m.raw) > 0 {
		ch = m.raw[0]
		m.raw = m.raw[1:]
		for k, c := range m.pending {
			if c == ch {
				delete(m.pending, k)
			}
		}
	}
	_, late := m.abandoned[key]
	var seq uint64
	if ch != nil {
		m.delivered++
		seq = m.delivered
	}
	m.mu.Unlock()
	switch {
	case ch != nil:
		ch <- delivery{msg: msg, seq: seq}
	case key == "":
		m.obs.note("unsolicited", "response with null or missing id")
	case late:
		m.obs.note("late-response", "reply after the request timed out")
	default:
		m.obs.note("unsolicited", "response to an id never sent or already answered")
	}
}

func (m *mux) dropRaw(ch chan delivery) {
	for i, c := range m.raw {
		if c == ch {
			m.raw = append(m.raw[:i], m.raw[i+1:]...)
			return
		}
	}
}

// answerServerRequest builds the client's reply to a server→client request:
// ping → {}, roots/list → no roots, anything else → method not found.
func answerServerRequest(req *jsonrpc.Message) []byte {
	var b []byte
	switch req.Method {
	case "ping":
		b, _ = jsonrpc.NewResult(req.ID, struct{}{})
	case "roots/list":
		b, _ = jsonrpc.NewResult(req.ID, map[string]any{"roots": []any{}})
	default:
		b, _ = jsonrpc.NewErrorResponse(req.ID, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not supported by mcpdrill"})
	}
	return b
}

package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

// post handles a POST: the message is checked as a Streamable HTTP server's
// transport checks it, then goes to its server process: a 2026-07-28
// message (its _meta names the revision, or its MCP-Protocol-Version
// header names 2026-07-28 or later) to the process sessionless clients
// share, an initialize to a session of its own, anything else to the
// session its Mcp-Session-Id names.
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
		w.Header().Set("Retry-After", "1")
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
	if err != nil || !jsonrpc.Valid(frame) {
		writeJSONStatus(w, http.StatusBadRequest, parseError())
		return
	}
	if pk.Kind == jsonrpc.KindInvalid || pk.Version != "2.0" && pk.Kind != jsonrpc.KindBatch {
		refuse(w, http.StatusBadRequest, pk.ID, jsonrpc.CodeInvalidRequest, "Invalid Request")
		return
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
	pk.ID = bytes.Clone(pk.ID) // it outlives the body (free)
	p := postOf(r, line, pk)
	if p.refusal != "" {
		refuse(w, http.StatusBadRequest, pk.ID, p.code, p.refusal)
		return
	}
	if p.modern {
		b.postModern(w, r, line, p, free)
		return
	}
	var s *bridgeSession
	switch sid := r.Header.Get(sessionHeader); {
	case sid != "":
		if s = b.session(sid); s == nil {
			http.Error(w, "mcpdrill: unknown session", http.StatusNotFound)
			return
		}
	case pk.Kind == jsonrpc.KindRequest && pk.Method == "initialize":
		if s, err = b.newSession(); err != nil {
			refuseSession(w, err)
			return
		}
		w.Header().Set(sessionHeader, s.id)
	default:
		refuse(w, http.StatusBadRequest, pk.ID, jsonrpc.CodeInvalidRequest, "missing Mcp-Session-Id: send initialize first (a 2026-07-28 request carries its revision in _meta and MCP-Protocol-Version)")
		return
	}
	if pk.Kind == jsonrpc.KindRequest || pk.Kind == jsonrpc.KindBatch && batchHasRequest(line) {
		b.exchange(w, r, s, line, p, free)
		return
	}
	if !s.send(line) { // notifications and answers: accepted
		http.Error(w, "mcpdrill: the server ended", http.StatusBadGateway)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// postOf is what the transport makes of a POSTed message: whether it is
// a 2026-07-28 one, and why it is refused ("" for not), with which code.
type postMsg struct {
	pk      jsonrpc.Peek
	modern  bool
	noMeta  bool // a 2026-07-28 request whose _meta names no revision
	refusal string
	code    int
}

// postOf classifies a POST and applies the transport's header rules: the
// MCP-Protocol-Version header names a revision mcpdrill knows, on every
// request after initialize (2025-06-18 to 2025-11-25: 400 otherwise); and
// from 2026-07-28 it, Mcp-Method and Mcp-Name are present and agree with
// the body (400 with -32020 otherwise). A body the bridge and a server
// could read differently is refused.
func postOf(r *http.Request, line []byte, pk jsonrpc.Peek) postMsg {
	p := postMsg{pk: pk}
	version, vErr := oneHeader(r, mcp.HeaderProtocolVersion)
	var metaVersion string
	if pk.Kind == jsonrpc.KindRequest || pk.Kind == jsonrpc.KindNotification {
		sp, ok := jsonrpc.MemberSpan(line, "params", "_meta", mcp.MetaProtocolVersion)
		if sp.Ambiguous {
			return refusal(p, jsonrpc.CodeInvalidRequest, "the body names its protocol revision more than once")
		}
		if ok {
			metaVersion = stringValue(line[sp.Start:sp.End])
		}
	}
	p.modern = pk.Method != "initialize" && (metaVersion != "" || modernRevision(version))
	switch {
	case !p.modern && pk.Method == "initialize":
		return p
	case !p.modern && (vErr != nil || version != "" && !mcp.IsKnown(version)):
		return refusal(p, jsonrpc.CodeInvalidRequest, "unsupported MCP-Protocol-Version")
	case !p.modern:
		return p
	case pk.Kind == jsonrpc.KindBatch:
		return refusal(p, jsonrpc.CodeInvalidRequest, "a batch needs a session (2025-03-26); 2026-07-28 has none")
	case pk.Ambiguous:
		return refusal(p, jsonrpc.CodeInvalidRequest, "the body holds a member twice, or in two cases")
	}
	p.noMeta = metaVersion == "" && pk.Kind == jsonrpc.KindRequest
	// 2026-07-28: the headers must agree with the body.
	p.code = jsonrpc.CodeHeaderMismatch
	switch {
	case vErr != nil:
		p.refusal = "MCP-Protocol-Version header: " + vErr.Error()
	case version == "":
		p.refusal = "missing MCP-Protocol-Version header"
	case !headerSafe(version):
		p.refusal = "MCP-Protocol-Version header has invalid characters"
	case metaVersion != "" && version != metaVersion:
		p.refusal = "MCP-Protocol-Version header does not match the body"
	case pk.Kind == jsonrpc.KindRequest || pk.Kind == jsonrpc.KindNotification:
		p.refusal = headerAgrees(r, mcp.HeaderMethod, pk.Method, pk.Kind == jsonrpc.KindRequest)
		if p.refusal != "" || pk.Kind != jsonrpc.KindRequest {
			break
		}
		var key string
		switch pk.Method {
		case "tools/call", "prompts/get":
			key = "name"
		case "resources/read":
			key = "uri"
		default:
			return p
		}
		sp, ok := jsonrpc.MemberSpan(line, "params", key)
		if sp.Ambiguous {
			return refusal(p, jsonrpc.CodeInvalidRequest, "the body names params."+key+" more than once")
		}
		want := ""
		if ok {
			want = stringValue(line[sp.Start:sp.End])
		}
		p.refusal = headerAgrees(r, mcp.HeaderName, want, true)
	}
	return p
}

func refusal(p postMsg, code int, why string) postMsg {
	p.code, p.refusal = code, why
	return p
}

// oneHeader returns the value of header name ("" when absent); two
// different values are an error (an intermediary may read either).
func oneHeader(r *http.Request, name string) (string, error) {
	vs := r.Header.Values(name)
	for _, v := range vs[min(len(vs), 1):] {
		if v != vs[0] {
			return "", errors.New("more than one value")
		}
	}
	if len(vs) == 0 {
		return "", nil
	}
	return vs[0], nil
}

// headerAgrees checks a 2026-07-28 request header against the body's
// value want (required: it must be present); it returns the problem, or "".
func headerAgrees(r *http.Request, name, want string, required bool) string {
	v, err := oneHeader(r, name)
	switch {
	case err != nil:
		return name + " header: " + err.Error()
	case v == "" && len(r.Header.Values(name)) == 0:
		if required {
			return "missing " + name + " header"
		}
		return ""
	case !headerSafe(v):
		return name + " header has invalid characters"
	}
	got, err := mcp.DecodeHeaderValue(v)
	if err != nil {
		return name + " header has invalid base64"
	}
	if got != want {
		return name + " header does not match the body"
	}
	return ""
}

// headerSafe reports whether a header value holds only characters a
// 2026-07-28 header may: visible ASCII, space and tab.
func headerSafe(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return false
		}
	}
	return true
}

// modernRevision reports whether v names 2026-07-28 or a later revision
// (a date).
func modernRevision(v string) bool {
	if len(v) != len("2026-07-28") || v[4] != '-' || v[7] != '-' {
		return false
	}
	for i, c := range []byte(v) {
		if i != 4 && i != 7 && (c < '0' || c > '9') {
			return false
		}
	}
	return mcp.IsModern(v)
}

// stringValue returns a JSON string's value, or the raw bytes of any other
// value (which then equal no header).
func stringValue(raw []byte) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return string(raw)
	}
	return s
}

// postModern serves a 2026-07-28 message on the shared process: a request
// is answered; a notification is accepted and not forwarded (2026-07-28
// defines none a client sends over HTTP, a cancellation being the close
// of the request's stream, which the bridge tells the server itself);
// an answer is forwarded only to a server request the bridge handed this
// client, under the id it gave it.
func (b *Bridge) postModern(w http.ResponseWriter, r *http.Request, line []byte, p postMsg, free func()) {
	switch p.pk.Kind {
	case jsonrpc.KindNotification:
		w.WriteHeader(http.StatusAccepted)
		return
	case jsonrpc.KindRequest:
	default:
		b.answerAsk(w, line, p.pk, free)
		return
	}
	s, err := b.sharedSession()
	if err != nil {
		refuseSession(w, err)
		return
	}
	b.exchange(w, r, s, line, p, free)
}

// answerAsk forwards a sessionless client's answer to a server request
// the bridge handed it, with the server's id back.
func (b *Bridge) answerAsk(w http.ResponseWriter, line []byte, pk jsonrpc.Peek, free func()) {
	b.mu.Lock()
	s := b.shared
	b.mu.Unlock()
	var a serverAsk
	found := false
	if s != nil {
		s.mu.Lock()
		key := jsonrpc.IDKey(pk.ID)
		if a, found = s.asks[key]; found {
			delete(s.asks, key)
			delete(s.askedBy, jsonrpc.IDKey(a.server))
		}
		s.mu.Unlock()
	}
	start, end, ok := jsonrpc.IDSpan(line)
	if !found || !ok || pk.Ambiguous {
		refuse(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "no server request was handed to a client under that id")
		return
	}
	sent := s.send(line[:start], a.server, line[end:])
	free()
	if !sent {
		http.Error(w, "mcpdrill: the server ended", http.StatusBadGateway)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// exchange sends a request (or a batch holding one) and answers the POST
// with the reply: as JSON, or, when the client accepts an event stream, as
// an event stream of what the server sends for the request, ending with
// the reply; on 2026-07-28 only when the server sends something before
// the reply.
func (b *Bridge) exchange(w http.ResponseWriter, r *http.Request, s *bridgeSession, line []byte, p postMsg, free func()) {
	sse := strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	c, parts, err := s.open(line, p.pk, sse)
	switch {
	case errors.Is(err, errTooMany):
		w.Header().Set("Retry-After", "1")
		http.Error(w, "mcpdrill: "+err.Error()+"; retry", http.StatusServiceUnavailable)
		return
	case err != nil:
		refuse(w, http.StatusBadRequest, p.pk.ID, jsonrpc.CodeInvalidRequest, strings.TrimPrefix(err.Error(), "proxy: bridge: "))
		return
	}
	sent := s.send(parts...)
	free()
	if !sent {
		s.abandon(c)
		http.Error(w, "mcpdrill: the server ended", http.StatusBadGateway)
		return
	}
	// A session's reply to a client that takes an event stream is one
	// from the start, as SDK servers answer (the official suite counts on
	// it); a 2026-07-28 reply becomes one only when something comes
	// before it, so that an error can have the status the revision gives
	// it.
	streaming := false
	if c.events != nil && !p.modern {
		sseHeaders(w)
		streaming = true
	}
	event := func(m frameMsg) {
		if !streaming {
			sseHeaders(w)
			streaming = true
		}
		writeData(w, nil, m.held.b)
		flush(w)
		m.release(b.budget)
	}
	t := time.NewTimer(b.o.ReplyTimeout)
	defer t.Stop()
	for {
		select {
		case m := <-c.events:
			event(m)
			continue
		case m := <-c.answer:
			for more := true; more; { // what came before the answer goes first
				select {
				case e := <-c.events:
					event(e)
				default:
					more = false
				}
			}
			b.reply(w, m, p, streaming, event)
			return
		case <-s.done:
			s.abandon(c)
			if !streaming {
				http.Error(w, "mcpdrill: the server ended", http.StatusBadGateway)
			}
		case <-r.Context().Done():
			s.abandon(c)
		case <-t.C:
			s.abandon(c)
			if !streaming {
				http.Error(w, "mcpdrill: no reply from the server", http.StatusGatewayTimeout)
			}
		}
		return
	}
}

// reply writes a call's answer m: an event when the stream has begun (a
// JSON-RPC error when the answer could not be relayed, since the status
// can no longer say it), else a JSON body, whose status on 2026-07-28 is
// the one the revision gives its error (modernStatus).
func (b *Bridge) reply(w http.ResponseWriter, m frameMsg, p postMsg, streaming bool, event func(frameMsg)) {
	lost := ""
	switch {
	case errors.Is(m.err, errReplyTooLarge):
		lost = "mcpdrill: the server's reply is over the frame cap"
	case errors.Is(m.err, errNoRoom):
		lost = "mcpdrill: no room in the bridge's memory budget for the server's reply; retry"
	}
	switch {
	case streaming && m.err != nil:
		event(frameMsg{held: &heldBody{b: errorAnswer(p.pk.ID, lost)}})
	case streaming:
		event(m)
	case errors.Is(m.err, errReplyTooLarge):
		http.Error(w, lost, http.StatusBadGateway)
	case errors.Is(m.err, errNoRoom):
		w.Header().Set("Retry-After", "1")
		http.Error(w, lost, http.StatusServiceUnavailable)
	default:
		status := http.StatusOK
		if p.modern {
			status = modernStatus(m.held.b, p.noMeta)
		}
		writeJSONStatus(w, status, m.held.b)
		m.release(b.budget)
	}
}

// modernStatus is the HTTP status 2026-07-28 gives an answer: 404 for an
// unknown method (-32601), 400 for a header mismatch, a missing client
// capability or an unsupported revision (-32020 to -32022), and for
// invalid params when the request's _meta named no revision (the error
// is about it); 200 otherwise.
func modernStatus(answer []byte, noMeta bool) int {
	sp, ok := jsonrpc.MemberSpan(answer, "error", "code")
	if !ok {
		return http.StatusOK
	}
	code, err := strconv.Atoi(string(answer[sp.Start:sp.End]))
	switch {
	case err != nil:
	case code == jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case code == jsonrpc.CodeHeaderMismatch, code == jsonrpc.CodeMissingClientCapability, code == jsonrpc.CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	case code == jsonrpc.CodeInvalidParams && noMeta:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// refuse answers a POST with status and a JSON-RPC error (code, message
// why) for id.
func refuse(w http.ResponseWriter, status int, id json.RawMessage, code int, why string) {
	b, _ := jsonrpc.NewErrorResponse(id, &jsonrpc.Error{Code: code, Message: why})
	writeJSONStatus(w, status, b)
}

// refuseSession answers a POST for which no server process could be had.
func refuseSession(w http.ResponseWriter, err error) {
	w.Header().Set("Retry-After", "1")
	msg := "mcpdrill: the bridge is closing"
	if errors.Is(err, errFull) {
		msg = "mcpdrill: every session the bridge runs is in use; retry later"
	}
	http.Error(w, msg, http.StatusServiceUnavailable)
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

package scan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/report"
)

// Values the transport checks send (METHODOLOGY, Part I §4): a request id
// the scan never used, a cursor no server issued, and a revision no server
// speaks.
const (
	neverSentID    = "mcpdrill-never-sent"
	invalidCursor  = "mcpdrill-invalid-cursor"
	bogusRevision  = "1999-01-01"
	probeBodyLimit = 64 << 10
)

// httpRules are the checks only a Streamable HTTP session is graded on.
var httpRules = []string{RuleHTTPAccepted, RuleHTTPGet, RuleHTTPSessionID, RuleHTTPSessionRequired, RuleHTTPVersionHeader, RuleHTTPHeaderMismatch}

// transportChecks grades what the JSON-RPC base, the utilities and the
// transport ask of every server: ping, a notification's silence, an unknown
// request's cancellation, an invalid cursor, server/discover, and over
// Streamable HTTP the status codes, headers and sessions. Each is one
// request, answered or not; nothing here calls a tool.
func (s *scanner) transportChecks(ctx context.Context) {
	modern := mcp.IsModern(s.sess.Revision)
	s.pingCheck(ctx, modern)
	s.notificationCheck(ctx, modern)
	s.invalidCursorCheck(ctx)
	s.discoverCheck(modern)
	if s.sess.Transport != mcp.TransportStreamableHTTP {
		for _, id := range httpRules {
			s.check(id, CheckNotApplicable, "not Streamable HTTP")
		}
		return
	}
	s.httpGetCheck(ctx, modern)
	s.httpSessionChecks(ctx, modern)
	s.httpVersionHeaderCheck(ctx, modern)
	s.httpHeaderMismatchCheck(ctx, modern)
}

// pingCheck: before 2026-07-28 ping is answered promptly with an empty
// result.
func (s *scanner) pingCheck(ctx context.Context, modern bool) {
	if modern {
		s.check(RulePing, CheckNotApplicable, "2026-07-28 has no ping")
		return
	}
	a := s.ask(ctx, "ping", nil)
	if !s.wantResult(ctx, RulePing, a, "ping", "ping") {
		return
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(a.result, &m) != nil {
		s.find(RulePing, "", "/result", "ping was answered with a result that is not an object")
		s.check(RulePing, CheckFail, "")
		return
	}
	delete(m, "_meta")
	if len(m) > 0 {
		s.find(RulePing, "", "/result", fmt.Sprintf("ping's result carries %d member(s) besides _meta; it must be empty", len(m)))
		s.check(RulePing, CheckFail, "")
		return
	}
	s.check(RulePing, CheckPass, "")
}

// notificationCheck sends notifications/cancelled naming a request the
// scan never sent. Nothing may answer it (a notification gets no
// response), the server must go on serving (an unknown request's
// cancellation is ignored), and over Streamable HTTP the POST is answered
// 202 with no body, or an error status when the server does not accept it.
func (s *scanner) notificationCheck(ctx context.Context, modern bool) {
	frame, err := jsonrpc.NewNotification("notifications/cancelled", map[string]any{"requestId": neverSentID, "reason": "mcpdrill conformance check"})
	if err != nil {
		s.check(RuleNotificationSilent, CheckNotEstablished, err.Error())
		s.check(RuleCancelUnknown, CheckNotEstablished, err.Error())
		return
	}
	switch s.sess.Transport {
	case mcp.TransportStreamableHTTP:
		s.httpNotification(ctx, modern, frame)
		return
	case mcp.TransportSSE:
		// The reply of an HTTP+SSE POST comes on the stream, where no
		// barrier follows the notification: silence is not observable.
		s.check(RuleNotificationSilent, CheckNotApplicable, "not graded over HTTP+SSE")
		s.check(RuleCancelUnknown, CheckNotApplicable, "not graded over HTTP+SSE")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, RawProbeTimeout)
	defer cancel()
	msg, err := s.c.SendRawBarrier(ctx, frame, mcp.BarrierGrace)
	switch {
	case msg != nil:
		s.find(RuleNotificationSilent, "", "", "a notification (notifications/cancelled) was answered with a response")
		s.check(RuleNotificationSilent, CheckFail, "")
		s.check(RuleCancelUnknown, CheckFail, "answered with a response")
	case errors.Is(err, mcp.ErrIgnored):
		s.check(RuleNotificationSilent, CheckPass, "")
		s.check(RuleCancelUnknown, CheckPass, "ignored; the next request was answered")
	default:
		s.unanswered(ctx, RuleNotificationSilent, "the request after a notification", err)
		s.unanswered(ctx, RuleCancelUnknown, "the request after a cancellation", err)
	}
}

// httpNotification grades the POST of a notification.
func (s *scanner) httpNotification(ctx context.Context, modern bool, frame []byte) {
	hdr := http.Header{}
	if modern {
		hdr.Set(mcp.HeaderMethod, "notifications/cancelled")
	}
	x, err := s.probeHTTP(ctx, http.MethodPost, frame, hdr, probeBodyLimit)
	if err != nil {
		for _, id := range []string{RuleHTTPAccepted, RuleNotificationSilent, RuleCancelUnknown} {
			s.unanswered(ctx, id, "the POST of a notification", err)
		}
		return
	}
	body := len(bytes.TrimSpace(x.Body)) > 0 || x.More
	switch {
	case x.Status == http.StatusAccepted && !body:
		s.check(RuleHTTPAccepted, CheckPass, "")
	case x.Status >= 400:
		s.check(RuleHTTPAccepted, CheckPass, fmt.Sprintf("not accepted: HTTP %d", x.Status))
	case x.Status == http.StatusAccepted:
		s.find(RuleHTTPAccepted, "", "", "the POST of a notification was answered 202 with a body")
		s.check(RuleHTTPAccepted, CheckFail, "")
	default:
		s.find(RuleHTTPAccepted, "", "", fmt.Sprintf("the POST of a notification was answered HTTP %d instead of 202", x.Status))
		s.check(RuleHTTPAccepted, CheckFail, "")
	}
	responded := false
	if body && x.Status < 300 {
		if m, err := jsonrpc.Decode(bytes.TrimSpace(x.Body)); err == nil && (m.Kind() == jsonrpc.KindResponse || m.Kind() == jsonrpc.KindError) {
			responded = true
		}
		if mcp.IsEventStream(x.Header) {
			responded = true
		}
	}
	if responded {
		s.find(RuleNotificationSilent, "", "", "a notification (notifications/cancelled) was answered with a response")
		s.check(RuleNotificationSilent, CheckFail, "")
		s.check(RuleCancelUnknown, CheckFail, "answered with a response")
		return
	}
	s.check(RuleNotificationSilent, CheckPass, "")
	if x.Status >= 400 {
		s.check(RuleCancelUnknown, CheckNotEstablished, fmt.Sprintf("not accepted: HTTP %d", x.Status))
		return
	}
	s.check(RuleCancelUnknown, CheckPass, "")
}

// invalidCursorCheck asks tools/list for a page no cursor the server
// issued names: it should be refused with -32602.
func (s *scanner) invalidCursorCheck(ctx context.Context) {
	const what = "tools/list with a cursor the server never issued"
	a := s.ask(ctx, "tools/list", map[string]any{"cursor": invalidCursor})
	if a.result != nil {
		s.findSDK(tsIgnoresCursor, severityOf(RuleInvalidCursor), "", "", what+" was answered with a result")
		s.check(RuleInvalidCursor, CheckFail, "")
		return
	}
	s.wantRefusal(ctx, RuleInvalidCursor, a, what, jsonrpc.CodeInvalidParams)
}

// discoverCheck grades, from 2026-07-28, the server/discover result the
// session was opened with: supportedVersions and capabilities.
func (s *scanner) discoverCheck(modern bool) {
	if !modern {
		s.check(RuleDiscover, CheckNotApplicable, "legacy revision")
		return
	}
	if len(s.sess.Discover) == 0 {
		s.check(RuleDiscover, CheckNotEstablished, "the session was not opened with server/discover")
		return
	}
	var d struct {
		SupportedVersions []string                   `json:"supportedVersions"`
		Capabilities      map[string]json.RawMessage `json:"capabilities"`
	}
	var missing []string
	if json.Unmarshal(s.sess.Discover, &d) != nil {
		missing = append(missing, "a result object")
	} else {
		if len(d.SupportedVersions) == 0 {
			missing = append(missing, "supportedVersions")
		}
		if d.Capabilities == nil {
			missing = append(missing, "capabilities")
		}
	}
	if len(missing) > 0 {
		s.find(RuleDiscover, "", "", "server/discover's result lacks "+joinAnd(missing))
		s.check(RuleDiscover, CheckFail, "")
		return
	}
	s.check(RuleDiscover, CheckPass, fmt.Sprintf("%d supported version(s)", len(d.SupportedVersions)))
}

// httpGetCheck: before 2026-07-28 a GET on the endpoint opens an event
// stream or is answered 405; from 2026-07-28 GET and DELETE are answered
// 405 and no response mints an Mcp-Session-Id.
func (s *scanner) httpGetCheck(ctx context.Context, modern bool) {
	hdr := http.Header{"Accept": {"text/event-stream"}}
	get, err := s.probeHTTP(ctx, http.MethodGet, nil, hdr, 0)
	if err != nil {
		s.unanswered(ctx, RuleHTTPGet, "GET on the endpoint", err)
		return
	}
	if !modern {
		switch {
		case get.Status == http.StatusMethodNotAllowed:
			s.check(RuleHTTPGet, CheckPass, "GET: 405")
		case get.Status < 300 && mcp.IsEventStream(get.Header):
			s.check(RuleHTTPGet, CheckPass, "GET: an event stream")
		default:
			s.find(RuleHTTPGet, "", "", fmt.Sprintf("GET on the endpoint was answered HTTP %d%s; it must open an event stream or be refused with 405", get.Status, mediaNote(get.Header)))
			s.check(RuleHTTPGet, CheckFail, "")
		}
		return
	}
	if v := legacyOf(s.sess.SupportedVersions); v != "" {
		s.check(RuleHTTPGet, CheckNotApplicable, "a dual-era server (it also speaks "+v+"): the 405 rule is a modern-only server's")
		return
	}
	del, err := s.probeHTTP(ctx, http.MethodDelete, nil, nil, 0)
	if err != nil {
		s.unanswered(ctx, RuleHTTPGet, "DELETE on the endpoint", err)
		return
	}
	var bad []string
	for _, x := range []struct {
		method string
		ex     mcp.HTTPExchange
	}{{"GET", get}, {"DELETE", del}} {
		if x.ex.Status != http.StatusMethodNotAllowed {
			bad = append(bad, fmt.Sprintf("%s was answered HTTP %d instead of 405", x.method, x.ex.Status))
		}
		if x.ex.Header.Get(mcp.HeaderSessionID) != "" {
			bad = append(bad, x.method+"'s answer carries an Mcp-Session-Id")
		}
	}
	if len(bad) > 0 {
		// REQ-HTTP-05 is a SHOULD: a warning, as the rule says.
		s.findSev(RuleHTTPGet, report.SeverityWarn, "", "", joinAnd(bad))
		s.check(RuleHTTPGet, CheckFail, "")
		return
	}
	s.check(RuleHTTPGet, CheckPass, "GET and DELETE: 405")
}

// httpSessionChecks grade a legacy session's id: visible ASCII only, a
// request without it answered 400, and once ended (DELETE, on a connection
// of its own) answered 404.
func (s *scanner) httpSessionChecks(ctx context.Context, modern bool) {
	if modern {
		s.check(RuleHTTPSessionID, CheckNotApplicable, "2026-07-28 has no sessions")
		s.check(RuleHTTPSessionRequired, CheckNotApplicable, "2026-07-28 has no sessions")
		return
	}
	issued, visible := s.c.SessionIDShape()
	if !issued {
		s.check(RuleHTTPSessionID, CheckNotApplicable, "no session id issued")
		s.check(RuleHTTPSessionRequired, CheckNotApplicable, "no session id issued")
		return
	}
	list, err := jsonrpc.NewRequest("mcpdrill-session-probe", "tools/list", nil)
	if err != nil {
		s.check(RuleHTTPSessionRequired, CheckNotEstablished, err.Error())
		return
	}
	x, err := s.probeHTTP(ctx, http.MethodPost, list, http.Header{mcp.HeaderSessionID: nil}, 0)
	s.wantStatus(ctx, RuleHTTPSessionRequired, x, err, "a request without the session id", http.StatusBadRequest, "")
	if !visible {
		s.find(RuleHTTPSessionID, "", "", "the Mcp-Session-Id has a character outside visible ASCII (0x21 to 0x7E)")
		s.check(RuleHTTPSessionID, CheckFail, "")
		return
	}
	s.endedSession(ctx, list)
}

// endedSession opens a session of its own, ends it with DELETE and sends a
// request (req) with its id: the answer must be 404. A server that does not let
// clients end sessions (405) leaves that half unestablished.
func (s *scanner) endedSession(ctx context.Context, req []byte) {
	c, err := mcp.Connect(ctx, s.cfg)
	if err != nil {
		s.unanswered(ctx, RuleHTTPSessionID, "a session of its own", err)
		return
	}
	defer c.Close()
	if issued, _ := c.SessionIDShape(); !issued {
		s.check(RuleHTTPSessionID, CheckNotEstablished, "the second session was issued no id")
		return
	}
	del, err := s.probeOn(ctx, c, http.MethodDelete, nil, nil, 0)
	switch {
	case err != nil:
		s.unanswered(ctx, RuleHTTPSessionID, "DELETE of a session", err)
		return
	case del.Status == http.StatusMethodNotAllowed:
		s.check(RuleHTTPSessionID, CheckPass, "visible ASCII; ending a session is not offered (DELETE: 405)")
		return
	case del.Status >= 300:
		s.check(RuleHTTPSessionID, CheckPass, fmt.Sprintf("visible ASCII; DELETE of a session was answered HTTP %d", del.Status))
		return
	}
	after, err := s.probeOn(ctx, c, http.MethodPost, req, nil, 0)
	s.wantStatus(ctx, RuleHTTPSessionID, after, err, "a request on a session ended by DELETE", http.StatusNotFound, "visible ASCII; an ended session's id: 404")
}

// wantStatus grades a raw exchange (x, or err when there was none) that
// should be answered with status want; what names the request in findings.
func (s *scanner) wantStatus(ctx context.Context, rule string, x mcp.HTTPExchange, err error, what string, want int, passDetail string) {
	switch {
	case err != nil:
		s.unanswered(ctx, rule, what, err)
	case x.Status == want:
		s.check(rule, CheckPass, passDetail)
	default:
		s.find(rule, "", "", fmt.Sprintf("%s was answered HTTP %d instead of %d", what, x.Status, want))
		s.check(rule, CheckFail, "")
	}
}

// httpVersionHeaderCheck: from 2025-06-18 to 2025-11-25 a request with an
// unsupported MCP-Protocol-Version header is answered 400.
func (s *scanner) httpVersionHeaderCheck(ctx context.Context, modern bool) {
	if modern || s.sess.Revision < mcp.Rev20250618 {
		s.check(RuleHTTPVersionHeader, CheckNotApplicable, "the header is graded on 2025-06-18 and 2025-11-25 sessions")
		return
	}
	ping, err := jsonrpc.NewRequest("mcpdrill-version-header-probe", "ping", nil)
	if err != nil {
		s.check(RuleHTTPVersionHeader, CheckNotEstablished, err.Error())
		return
	}
	x, err := s.probeHTTP(ctx, http.MethodPost, ping, http.Header{mcp.HeaderProtocolVersion: {bogusRevision}}, 0)
	s.wantStatus(ctx, RuleHTTPVersionHeader, x, err, "a request with MCP-Protocol-Version "+bogusRevision, http.StatusBadRequest, "")
}

// httpHeaderMismatchCheck: from 2026-07-28 a request whose Mcp-Method
// header disagrees with its body is refused with 400 and -32020.
func (s *scanner) httpHeaderMismatchCheck(ctx context.Context, modern bool) {
	if !modern {
		s.check(RuleHTTPHeaderMismatch, CheckNotApplicable, "legacy revision")
		return
	}
	frame, err := jsonrpc.NewRequest("mcpdrill-header-probe", "tools/list", map[string]any{"_meta": s.modernMeta()})
	if err != nil {
		s.check(RuleHTTPHeaderMismatch, CheckNotEstablished, err.Error())
		return
	}
	hdr := http.Header{}
	hdr.Set(mcp.HeaderMethod, "prompts/list")
	ctx, cancel := context.WithTimeout(ctx, RawProbeTimeout)
	defer cancel()
	r, err := s.c.SendRawHeaders(ctx, frame, hdr)
	status, msg := 0, errorMessage(nil, err)
	if r != nil {
		status, msg = r.Status, r.Message
	}
	if he := httpStatus(err); he != 0 {
		status = he
	}
	switch {
	case status == http.StatusBadRequest && msg != nil && msg.Error != nil && msg.Error.Code == jsonrpc.CodeHeaderMismatch:
		s.check(RuleHTTPHeaderMismatch, CheckPass, "")
	case status == 0 && err != nil:
		s.unanswered(ctx, RuleHTTPHeaderMismatch, "a request with a mismatched Mcp-Method", err)
	case msg != nil && msg.Error == nil && msg.Result != nil:
		s.find(RuleHTTPHeaderMismatch, "", "", "a tools/list request with Mcp-Method prompts/list was served instead of refused with 400 and -32020")
		s.check(RuleHTTPHeaderMismatch, CheckFail, "")
	default:
		code := "no JSON-RPC error"
		if msg != nil && msg.Error != nil {
			code = fmt.Sprintf("error %d", msg.Error.Code)
		}
		s.find(RuleHTTPHeaderMismatch, "", "", fmt.Sprintf("a request with a mismatched Mcp-Method was answered HTTP %d with %s instead of 400 with -32020", status, code))
		s.check(RuleHTTPHeaderMismatch, CheckFail, "")
	}
}

// modernMeta is the per-request _meta of a 2026-07-28 request the scan
// writes itself.
func (s *scanner) modernMeta() map[string]any {
	return map[string]any{
		mcp.MetaProtocolVersion:    s.sess.Revision,
		mcp.MetaClientCapabilities: map[string]any{},
		mcp.MetaClientInfo:         map[string]any{"name": "mcpdrill", "version": s.opts.ToolVersion},
	}
}

// probeHTTP is one raw exchange on the scan's session, bounded by
// RawProbeTimeout.
func (s *scanner) probeHTTP(ctx context.Context, method string, body []byte, hdr http.Header, limit int) (mcp.HTTPExchange, error) {
	return s.probeOn(ctx, s.c, method, body, hdr, limit)
}

func (s *scanner) probeOn(ctx context.Context, c *mcp.Client, method string, body []byte, hdr http.Header, limit int) (mcp.HTTPExchange, error) {
	ctx, cancel := context.WithTimeout(ctx, RawProbeTimeout)
	defer cancel()
	return c.ProbeHTTP(ctx, method, body, hdr, limit)
}

// httpContentTypeCheck grades, from what the client noticed over the whole
// scan, that every reply to a request came as application/json or
// text/event-stream.
func (s *scanner) httpContentTypeCheck(obs []mcp.Observation) {
	if s.sess.Transport != mcp.TransportStreamableHTTP {
		s.check(RuleHTTPContentType, CheckNotApplicable, "not Streamable HTTP")
		return
	}
	n := 0
	for _, ob := range obs {
		if ob.Kind == mcp.ObsContentType {
			n += max(ob.Count, 1)
		}
	}
	if n > 0 {
		s.find(RuleHTTPContentType, "", "", fmt.Sprintf("%d repl(ies) to requests came with a Content-Type other than application/json or text/event-stream", n))
		s.check(RuleHTTPContentType, CheckFail, "")
		return
	}
	s.check(RuleHTTPContentType, CheckPass, "")
}

// mediaNote names a response's media type for a finding.
func mediaNote(h http.Header) string {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil || mt == "" {
		return ""
	}
	return " (" + mt + ")"
}

func httpStatus(err error) int {
	var he *mcp.HTTPError
	if errors.As(err, &he) {
		return he.Status
	}
	return 0
}

// legacyOf returns the first revision before 2026-07-28 in versions ("" if
// none).
func legacyOf(versions []string) string {
	for _, v := range versions {
		if !mcp.IsModern(v) {
			return v
		}
	}
	return ""
}

// joinAnd words a list: "a", "a and b", "a, b and c".
func joinAnd(parts []string) string {
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

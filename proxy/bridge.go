package proxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// The bridge's abuse list: who else can reach it, what it could reveal,
// and what stops it (each has a test, named).
//
//   - Every local user and process can connect to a loopback listener,
//     and the network can when the user binds another address. A session
//     is named by 128 random bits, given only in the answer to the
//     initialize that opened it; a request naming another is 404
//     (TestBridgeSessions, TestBridgeIDsAreTheBridges).
//   - A web page can send requests to loopback: a foreign Origin is 403
//     (TestBridgeSessions).
//   - Sessionless (2026-07-28) clients share one server process. What it
//     sends unasked reaches a client only when it names that client's
//     request (its progress token, its id) or comes while that request has
//     been the only one in flight since it was sent; the rest is withheld
//     and counted; a call whose client went away keeps its messages
//     (TestBridgeSessionlessCrossTalk, TestBridgeAttributesToTheOnlyCall,
//     TestBridgeAbandonedCallKeepsItsMessages); an answer no call waits
//     for is nobody's (TestBridgeStrayAnswersAreNobodys).
//   - A client that learns the id another's request travels under (ids
//     and progress tokens the shared process sees are the bridge's own:
//     128 random bits each, never what a client sent) gains nothing by
//     sending it as a request, batch member, answer or cancellation: a
//     sessionless batch is refused (the 2026-07-28 transport has none),
//     every request is given a fresh id, an answer is taken only for a
//     server request the bridge gave that client under an id of its own,
//     and a client's cancellation is not forwarded
//     (TestBridgeBatchMemberForgery, TestBridgeBatchesOfTwoClients,
//     TestBridgeIDsAreTheBridges).
//   - A body the bridge and the server could read differently (two "id"
//     members, or "id" and "ID", which encoding/json takes for one; the
//     same for the progress token and the names the headers must match)
//     would let the server see an id the bridge did not give: refused
//     with 400 (TestBridgeRefusesAmbiguousBodies).
//   - Initialize floods: a session in use (a request in flight, a stream
//     open, or a request within IdleGrace) is never ended to make room;
//     past MaxSessions a new session is refused with 503
//     (TestBridgeInitializeFloodKeepsSessions, TestBridgeEndsOnlyIdleSessions).
//   - Request and stream floods: at most maxCalls calls in flight per
//     server process and maxStreams GET streams per session, then 503;
//     POST bodies and held answers are charged to the memory budget
//     (TestBridgeBoundsStreamsAndCalls, TestBridgeMemoryBudget).
//   - What it reveals: a server's stderr goes to the bridge's own stderr,
//     never to a client; error bodies name no command, path or
//     environment (TestBridgeErrorsNameNoCommand); a withheld message is
//     counted and reported by its kind only, never its text.

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
	// MaxSessions bounds the sessions (each a server process) running at
	// once, besides the one process sessionless clients share (default
	// 32). Past it a new session ends the session used least recently
	// that is not in use (see IdleGrace), or, when every one is, is
	// refused with 503.
	MaxSessions int
	// IdleGrace is how long a session stays in use after its last
	// request or stream (default 10 minutes): one in use, or with a
	// request in flight or a stream open, is never ended to make room.
	IdleGrace time.Duration
	// ReplyTimeout bounds the wait for a server's answer to one POST
	// (default 5 minutes); past it the POST is answered 504.
	ReplyTimeout time.Duration
	// MemoryBudget bounds the bytes the bridge holds at once across all
	// sessions (0: DefaultMemoryBudget): POST bodies, and the server's
	// frames on their way to a response. Past it a POST is answered 503,
	// an answer too (or with a JSON-RPC error on an event stream begun),
	// and a stream loses an unasked frame.
	MemoryBudget int64
	// OnError hears of failures Serve cannot return, and of messages
	// withheld; nil drops them.
	OnError func(error)
}

// Bridge serves a stdio server as a Streamable HTTP endpoint (METHODOLOGY,
// "The stdio bridge"). An initialize without Mcp-Session-Id opens a session
// with a server process of its own; 2026-07-28 requests, which have no
// session, share one process, under ids of the bridge's. Frames travel
// through the stdio proxy, so faults apply as over stdio. A POSTed request
// is answered with the server's reply, as JSON, or, to a client that
// takes one, as an event stream of what the server sends for the request
// (on 2026-07-28 only once something comes before the reply); what a
// session's server sends for no request goes to the session's GET stream.
type Bridge struct {
	o      BridgeOptions
	allow  map[string]bool
	budget *byteBudget

	// callLimit bounds the calls in flight on one server process
	// (maxCalls).
	callLimit int

	mu       sync.Mutex
	sessions map[string]*bridgeSession
	shared   *bridgeSession // the sessionless clients' process (nil: none running)
	closed   bool

	withheld atomic.Int64
}

// maxCalls bounds the calls in flight on one server process.
const maxCalls = 1024

// maxStreams bounds the GET streams open on one session.
const maxStreams = 8

// NewBridge checks the options and returns the bridge.
func NewBridge(o BridgeOptions) (*Bridge, error) {
	if len(o.Command) == 0 {
		return nil, errors.New("proxy: bridge: no server command")
	}
	if o.Guard != nil {
		return nil, errors.New("proxy: bridge: guard mode needs one server process; the bridge runs one per session")
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = 32
	}
	if o.IdleGrace <= 0 {
		o.IdleGrace = 10 * time.Minute
	}
	if o.ReplyTimeout <= 0 {
		o.ReplyTimeout = 5 * time.Minute
	}
	if o.MaxFrame <= 0 {
		o.MaxFrame = jsonrpc.DefaultMaxFrame
	}
	b := &Bridge{o: o, allow: map[string]bool{}, budget: newByteBudget(o.MemoryBudget), callLimit: maxCalls, sessions: map[string]*bridgeSession{}}
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
	ss := make([]*bridgeSession, 0, len(b.sessions)+1)
	for _, s := range b.sessions {
		ss = append(ss, s)
	}
	if b.shared != nil {
		ss = append(ss, b.shared)
	}
	clear(b.sessions)
	b.shared = nil
	b.mu.Unlock()
	for _, s := range ss {
		s.end()
	}
}

// Withheld returns how many messages of the shared server process the
// bridge has withheld: ones it could not attribute to a single client's
// request.
func (b *Bridge) Withheld() int64 { return b.withheld.Load() }

// withhold counts a withheld message (kind: what it was) and reports the
// first, and every count that is a power of two, to OnError.
func (b *Bridge) withhold(kind string) {
	n := b.withheld.Add(1)
	if n&(n-1) == 0 && b.o.OnError != nil {
		b.o.OnError(fmt.Errorf("proxy: bridge: withheld %s of the process sessionless clients share: it names no request in flight, and came while more than one was (%d withheld so far)", kind, n))
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
	switch r.Method {
	case http.MethodPost:
		b.post(w, r)
		return
	case http.MethodGet, http.MethodDelete:
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "mcpdrill: method not allowed", http.StatusMethodNotAllowed)
		return
	}
	sid := r.Header.Get(sessionHeader)
	if sid == "" {
		// No session: the 2026-07-28 transport has no GET stream and
		// nothing to end.
		w.Header().Set("Allow", "POST")
		http.Error(w, "mcpdrill: GET and DELETE need an Mcp-Session-Id", http.StatusMethodNotAllowed)
		return
	}
	s := b.session(sid)
	switch {
	case s == nil:
		http.Error(w, "mcpdrill: unknown session", http.StatusNotFound)
	case r.Method == http.MethodDelete:
		b.mu.Lock()
		if b.sessions[sid] == s {
			delete(b.sessions, sid)
		}
		b.mu.Unlock()
		s.end()
		w.WriteHeader(http.StatusOK)
	case !strings.Contains(r.Header.Get("Accept"), "text/event-stream"):
		http.Error(w, "mcpdrill: a GET stream needs Accept: text/event-stream", http.StatusNotAcceptable)
	default:
		s.stream(w, r)
	}
}

// session returns the session id names (nil for none).
func (b *Bridge) session(id string) *bridgeSession {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sessions[id]
}

// errFull refuses a session: every one running is in use.
var errFull = errors.New("proxy: bridge: every session is in use")

// errClosing refuses a session while the bridge closes.
var errClosing = errors.New("proxy: bridge: closing")

// newSession starts a session's server. Past MaxSessions it ends the
// session used least recently that is not in use, or fails with errFull.
func (b *Bridge) newSession() (*bridgeSession, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errClosing
	}
	if len(b.sessions) >= b.o.MaxSessions {
		old := b.expendable(time.Now())
		if old == nil {
			return nil, errFull
		}
		delete(b.sessions, old.id)
		go old.end()
	}
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	s := b.launch(hex.EncodeToString(raw[:]))
	b.sessions[s.id] = s
	return s, nil
}

// sharedSession returns the process sessionless clients share, starting
// it if none runs.
func (b *Bridge) sharedSession() (*bridgeSession, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errClosing
	}
	if b.shared == nil {
		b.shared = b.launch("")
	}
	return b.shared, nil
}

// expendable returns the session used least recently that is not in use
// at now (nil: every one is); b.mu is held.
func (b *Bridge) expendable(now time.Time) *bridgeSession {
	var out *bridgeSession
	var at time.Time
	for _, s := range b.sessions {
		last, busy := s.use()
		if !busy && now.Sub(last) >= b.o.IdleGrace && (out == nil || last.Before(at)) {
			out, at = s, last
		}
	}
	return out
}

// launch starts a server behind the stdio proxy for the session id (""
// for the shared process); b.mu is held.
func (b *Bridge) launch(id string) *bridgeSession {
	s := newBridgeSession(b, id)
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
		if b.shared == s {
			b.shared = nil
		}
		b.mu.Unlock()
	}()
	return s
}

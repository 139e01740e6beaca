package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// Connect starts the stdio child or opens the HTTP endpoint, detects the
// server's era (unless cfg.Protocol forces a revision) and completes the
// handshake. On error nothing is left running.
func Connect(ctx context.Context, cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	if (len(cfg.Command) > 0) == (cfg.URL != "") {
		return nil, errors.New("mcp: config needs exactly one of Command or URL")
	}
	if cfg.Protocol != "" && !IsKnown(cfg.Protocol) {
		return nil, fmt.Errorf("%w: unknown revision %q (known: %v)", ErrProtocolRefused, cfg.Protocol, Revisions)
	}
	c := &Client{cfg: cfg, obs: newObserver()}
	if len(cfg.Command) > 0 {
		s, err := startStdio(cfg, c.obs)
		if err != nil {
			return nil, err
		}
		c.stdio, c.t = s, s
		if cfg.Observer != nil {
			c.t = observedStdio{stdioConn: s, c: c}
		}
		c.sess.Transport = TransportStdio
	} else {
		h, err := newHTTPConn(cfg, c.obs)
		if err != nil {
			return nil, err
		}
		c.hconn, c.t = h, h
		c.sess.Transport = TransportStreamableHTTP
	}
	if err := c.handshake(ctx); err != nil {
		if c.stdio != nil {
			// What the server's process did, and said, explains the failure.
			err = c.stdio.startError(err)
		}
		c.Close()
		return nil, err
	}
	return c, nil
}

// discoverOutcome classifies a server/discover reply.
type discoverOutcome int

const (
	discLegacy      discoverOutcome = iota // not a modern answer: use initialize
	discModern                             // DiscoverResult
	discModernErr                          // recognised modern error other than -32022
	discUnsupported                        // -32022 (or the pre-release -32004) with data.supported
)

// DiscoverResult is the parsed part of a server/discover result.
type DiscoverResult struct {
	SupportedVersions []string                   `json:"supportedVersions"`
	Capabilities      json.RawMessage            `json:"capabilities"`
	Instructions      string                     `json:"instructions"`
	Meta              map[string]json.RawMessage `json:"_meta"`
	ServerInfo        json.RawMessage            `json:"serverInfo"`
}

// ParseDiscoverResult parses a DiscoverResult; it fails unless the result is
// an object with a supportedVersions array of strings.
func ParseDiscoverResult(raw json.RawMessage) (DiscoverResult, error) {
	var probe struct {
		SupportedVersions json.RawMessage `json:"supportedVersions"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return DiscoverResult{}, fmt.Errorf("mcp: discover result: %w", err)
	}
	if len(probe.SupportedVersions) == 0 || probe.SupportedVersions[0] != '[' {
		return DiscoverResult{}, errors.New("mcp: discover result lacks supportedVersions")
	}
	var d DiscoverResult
	if err := json.Unmarshal(raw, &d); err != nil {
		return DiscoverResult{}, fmt.Errorf("mcp: discover result: %w", err)
	}
	return d, nil
}

// Server returns the server identity from _meta serverInfo (or a top-level
// serverInfo some implementations send).
func (d DiscoverResult) Server() ServerInfo {
	raw := d.Meta[MetaServerInfo]
	if len(raw) == 0 {
		raw = d.ServerInfo
	}
	return parseServerInfo(raw)
}

func parseServerInfo(raw json.RawMessage) ServerInfo {
	var si struct{ Name, Version, Title string }
	_ = json.Unmarshal(raw, &si)
	return ServerInfo{Name: si.Name, Version: si.Version, Title: si.Title}
}

// unsupportedData is error.data of UnsupportedProtocolVersion.
type unsupportedData struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested"`
}

func classifyDiscover(msg *jsonrpc.Message) (discoverOutcome, DiscoverResult, []string) {
	if msg == nil {
		return discLegacy, DiscoverResult{}, nil
	}
	if msg.Error == nil {
		if d, err := ParseDiscoverResult(msg.Result); err == nil {
			return discModern, d, nil
		}
		return discLegacy, DiscoverResult{}, nil
	}
	var data unsupportedData
	hasList := json.Unmarshal(msg.Error.Data, &data) == nil && data.Supported != nil
	switch msg.Error.Code {
	case jsonrpc.CodeUnsupportedProtocolVersion:
		return discUnsupported, DiscoverResult{}, data.Supported
	case -32004: // pre-release numbering of UnsupportedProtocolVersion
		if hasList {
			return discUnsupported, DiscoverResult{}, data.Supported
		}
	case jsonrpc.CodeHeaderMismatch, jsonrpc.CodeMissingClientCapability:
		return discModernErr, DiscoverResult{}, nil
	}
	return discLegacy, DiscoverResult{}, nil
}

// newestKnown picks the newest revision in list that we know and that passes keep.
func newestKnown(list []string, keep func(string) bool) string {
	best := ""
	for _, v := range list {
		if IsKnown(v) && keep(v) && v > best {
			best = v
		}
	}
	return best
}

func describeReply(r *reply, err error) string {
	switch {
	case err != nil && errors.Is(err, ErrTimeout):
		return "no reply"
	case err != nil && errors.Is(err, ErrNoResponse):
		return "no response in the reply"
	case err != nil:
		return "failed"
	case r == nil:
		return "no reply"
	case r.msg == nil:
		return fmt.Sprintf("HTTP %d without JSON-RPC body", r.status)
	case r.msg.Error != nil && r.status >= 300:
		return fmt.Sprintf("HTTP %d, error %d", r.status, r.msg.Error.Code)
	case r.msg.Error != nil:
		return fmt.Sprintf("error %d", r.msg.Error.Code)
	}
	return "non-discover result"
}

// lateProbe is a stdio server/discover request that got no reply within
// DiscoverTimeout but is still being listened for: a slow-starting modern
// server (e.g. launched through a package runner) may answer it later.
type lateProbe struct {
	m   *mux
	key string
	ch  chan delivery
}

// take returns the late reply if one arrived within wait.
func (l *lateProbe) take(wait time.Duration) *jsonrpc.Message {
	if l == nil {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case d := <-l.ch:
		l.m.done(l.key, l.ch, false)
		if d.err == nil {
			return d.msg
		}
	case <-t.C:
	}
	return nil
}

// before returns the late reply if the server wrote it before the message
// numbered seq (a delivery.seq), without waiting. A reply written after
// it stays for take and release.
func (l *lateProbe) before(seq uint64) *jsonrpc.Message {
	if l == nil || seq == 0 {
		return nil
	}
	select {
	case d := <-l.ch:
		if d.err == nil && d.seq > seq {
			l.ch <- d // the channel holds one delivery, just taken
			return nil
		}
		l.m.done(l.key, l.ch, false)
		if d.err == nil {
			return d.msg
		}
	default:
	}
	return nil
}

// useLate switches the session to the modern era when m, a server/discover
// reply that came late, is a DiscoverResult naming Latest; how names when
// it came, for the detection log.
func (c *Client) useLate(m *jsonrpc.Message, how string) bool {
	if m == nil {
		return false
	}
	out, d, _ := classifyDiscover(m)
	if out != discModern || !contains(d.SupportedVersions, Latest) {
		return false
	}
	c.detect("server/discover answered " + how + " (" + Latest + "); using it")
	c.setModern(Latest, m.Result, d)
	return true
}

// release stops listening; a reply arriving later is noted as late.
func (l *lateProbe) release() {
	if l == nil {
		return
	}
	select {
	case d := <-l.ch:
		if d.err == nil {
			l.m.obs.note("late-response", "reply after the request timed out")
		}
	default:
	}
	l.m.done(l.key, l.ch, true)
}

// probeDiscover sends server/discover for rev and returns the raw reply. On
// stdio a timeout also returns a lateProbe that keeps listening.
func (c *Client) probeDiscover(ctx context.Context, rev string, timeout time.Duration) (*reply, *lateProbe, error) {
	o, _, err := c.request("server/discover", nil, rev)
	if err != nil {
		return nil, nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if c.stdio != nil {
		m := c.stdio.mux
		ch, err := m.register(o.key, false)
		if err != nil {
			return nil, nil, err
		}
		frame, done := c.observe(rctx, o.frame, o.header, false)
		if err := c.stdio.write(rctx, frame); err != nil {
			m.done(o.key, ch, false)
			done(nil, err)
			return nil, nil, err
		}
		select {
		case d := <-ch:
			m.done(o.key, ch, false)
			done(d.msg, d.err)
			if d.err != nil {
				return nil, nil, d.err
			}
			return &reply{msg: d.msg}, nil, nil
		case <-rctx.Done():
			done(nil, rctx.Err())
			if ctx.Err() != nil {
				m.done(o.key, ch, true)
				return nil, nil, fmt.Errorf("mcp: server/discover: %w", ctx.Err())
			}
			return nil, &lateProbe{m: m, key: o.key, ch: ch}, fmt.Errorf("mcp: server/discover: %w", ErrTimeout)
		}
	}
	r, err := c.transport().roundTrip(rctx, o)
	if err != nil && rctx.Err() != nil {
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("mcp: server/discover: %w", ctx.Err())
		}
		return nil, nil, fmt.Errorf("mcp: server/discover: %w", ErrTimeout)
	}
	return r, nil, err
}

// legacyFallback runs initialize after a non-modern discover outcome. The
// stdio discover probe may still be answered: a DiscoverResult that
// arrives before initialize's reply (a server slower to start than the
// probe's timeout answers its requests in order) makes the session modern,
// so that the revision does not depend on how loaded the machine is; so
// does one that arrives shortly after initialize failed.
func (c *Client) legacyFallback(ctx context.Context, rev string, late *lateProbe) error {
	err := c.initializeAfter(ctx, rev, "", late)
	if err == nil {
		late.release()
		return nil
	}
	if c.useLate(late.take(100*time.Millisecond), "late, after initialize failed") {
		return nil
	}
	late.release()
	return err
}

// goModern is initialize's signal that the server named a modern revision
// in its error: the client should go back to server/discover.
type goModern struct{ rev string }

func (g *goModern) Error() string { return "mcp: initialize refused; server supports " + g.rev }

// Unwrap makes a goModern that escapes the handshake read as a refusal.
func (g *goModern) Unwrap() error { return ErrProtocolRefused }

// handshake detects the era and sets c.sess.
func (c *Client) handshake(ctx context.Context) error {
	forced := c.cfg.Protocol
	if forced != "" && !IsModern(forced) {
		c.detect("protocol forced to " + forced + "; initialize")
		return c.initialize(ctx, forced, forced)
	}
	rev := Latest
	if forced != "" {
		rev = forced
		c.detect("protocol forced to " + forced + "; server/discover")
	}
	timeout := c.cfg.RequestTimeout
	if c.stdio != nil {
		timeout = c.cfg.DiscoverTimeout
		if forced != "" {
			// No fallback comes after a forced probe: it is the request
			// the server's start-up delays.
			timeout = c.replyWait()
		}
	}
	tried := map[string]bool{}
	initTried := false
	// legacy runs the fallback, returning to discover once if initialize's
	// error names a modern revision (a modern-only server).
	legacy := func(rev string, late *lateProbe) (retry string, err error) {
		if initTried {
			late.release()
			return "", fmt.Errorf("%w: neither server/discover nor initialize succeeded", ErrProtocolRefused)
		}
		initTried = true
		err = c.legacyFallback(ctx, rev, late)
		var gm *goModern
		if errors.As(err, &gm) {
			c.detect("initialize refused; server supports " + gm.rev + "; server/discover again")
			timeout = c.cfg.RequestTimeout // the server is up and says it is modern
			return gm.rev, nil
		}
		return "", err
	}
	for {
		tried[rev] = true
		r, late, err := c.probeDiscover(ctx, rev, timeout)
		if err != nil && !errors.Is(err, ErrTimeout) && !errors.Is(err, ErrNoResponse) {
			return err
		}
		if err == nil && (r.status == http.StatusUnauthorized || r.status == http.StatusForbidden) {
			c.detect(fmt.Sprintf("server/discover: HTTP %d", r.status))
			return &HTTPError{Status: r.status, Header: r.header, Body: r.msg}
		}
		var msg *jsonrpc.Message
		if r != nil {
			msg = r.msg
		}
		out, d, supported := classifyDiscover(msg)
		desc := describeReply(r, err)
		if errors.Is(err, ErrTimeout) {
			desc = fmt.Sprintf("no reply in %s", timeout)
		}
		switch out {
		case discModern:
			use := rev
			if len(d.SupportedVersions) > 0 && !contains(d.SupportedVersions, rev) {
				use = newestKnown(d.SupportedVersions, IsModern)
			}
			if use == "" || (forced != "" && use != forced) {
				c.detect(fmt.Sprintf("server/discover answered; supported %v has no usable modern revision", d.SupportedVersions))
				if forced == "" {
					if legacy := newestKnown(d.SupportedVersions, func(v string) bool { return !IsModern(v) }); legacy != "" {
						c.detect("falling back to initialize with " + legacy)
						return c.initialize(ctx, legacy, "")
					}
				}
				return fmt.Errorf("%w: server supports %v", ErrProtocolRefused, d.SupportedVersions)
			}
			c.detect(fmt.Sprintf("server/discover answered (%s)", use))
			c.setModern(use, msg.Result, d)
			return nil
		case discModernErr:
			c.detect(fmt.Sprintf("server/discover: modern error %d; using %s", msg.Error.Code, rev))
			c.setModern(rev, nil, DiscoverResult{})
			return nil
		case discUnsupported:
			c.mu.Lock()
			c.sess.SupportedVersions = append([]string(nil), supported...)
			c.mu.Unlock()
			next := newestKnown(supported, func(v string) bool { return IsModern(v) && !tried[v] })
			if next != "" && forced == "" {
				c.detect(fmt.Sprintf("server/discover: %s refused (%d); retrying with %s", rev, msg.Error.Code, next))
				rev = next
				continue
			}
			c.detect(fmt.Sprintf("server/discover: %s refused (%d), server supports %v", rev, msg.Error.Code, supported))
			if forced == "" {
				if legacy := newestKnown(supported, func(v string) bool { return !IsModern(v) }); legacy != "" {
					c.detect("falling back to initialize with " + legacy)
					return c.initialize(ctx, legacy, "")
				}
			}
			return fmt.Errorf("%w: server supports %v", ErrProtocolRefused, supported)
		default:
			if forced != "" {
				late.release()
				c.detect(fmt.Sprintf("server/discover: %s; continuing as forced %s", desc, forced))
				c.setModern(forced, nil, DiscoverResult{})
				return nil
			}
			c.detect(fmt.Sprintf("server/discover: %s; initialize", desc))
			next, err := legacy(LatestLegacy, late)
			if err != nil || next == "" {
				return err
			}
			rev = next
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (c *Client) setModern(rev string, raw json.RawMessage, d DiscoverResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sess.Revision = rev
	c.sess.Era = EraModern
	c.sess.Discover = raw
	c.sess.Capabilities = d.Capabilities
	c.sess.Instructions = d.Instructions
	c.sess.Server = d.Server()
	if d.SupportedVersions != nil {
		c.sess.SupportedVersions = append([]string(nil), d.SupportedVersions...)
	}
	if c.hconn != nil {
		c.hconn.setSession("", rev, true)
	}
}

// replyWait is how long the handshake waits for the reply to a request
// sent now: RequestTimeout, or, for a stdio server that has not written a
// line yet, what is left of its start-up allowance when that is longer.
func (c *Client) replyWait() time.Duration {
	wait := c.cfg.RequestTimeout
	if c.stdio == nil || c.stdio.hasSpoken() {
		return wait
	}
	return max(wait, c.cfg.StartupTimeout-time.Since(c.stdio.started))
}

// initializeResult is the legacy handshake reply.
type initializeResult struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ServerInfo      json.RawMessage `json:"serverInfo"`
	Instructions    string          `json:"instructions"`
}

// initialize runs the legacy handshake asking for rev; must, when set, is
// the only revision accepted. Over HTTP a 400/404/405 switches to HTTP+SSE.
func (c *Client) initialize(ctx context.Context, rev, must string) error {
	return c.initializeAfter(ctx, rev, must, nil)
}

// initializeAfter is initialize after a server/discover probe that late
// still listens for: if the probe's DiscoverResult arrived before
// initialize's reply, the session is modern and the reply is not used.
func (c *Client) initializeAfter(ctx context.Context, rev, must string, late *lateProbe) error {
	for attempt := 0; ; attempt++ {
		params := map[string]any{
			"protocolVersion": rev,
			"capabilities":    map[string]any{},
			"clientInfo":      map[string]any{"name": c.cfg.ClientName, "version": c.cfg.ClientVersion},
		}
		o, _, err := c.request("initialize", params, "")
		if err != nil {
			return err
		}
		rctx, cancel := context.WithTimeout(ctx, c.replyWait())
		r, err := c.transport().roundTrip(rctx, o)
		timedOut := err != nil && rctx.Err() != nil
		cancel()
		if timedOut {
			c.detect("initialize: no reply")
			switch {
			case ctx.Err() != nil:
				return fmt.Errorf("mcp: initialize: %w", ctx.Err())
			case c.stdio != nil && !c.stdio.hasSpoken() && time.Since(c.stdio.started) >= c.cfg.StartupTimeout:
				c.detect(fmt.Sprintf("the server wrote nothing within its start-up allowance (%s)", c.cfg.StartupTimeout))
				return fmt.Errorf("mcp: initialize: %w", &StartupTimeoutError{Allowance: c.cfg.StartupTimeout})
			}
			return fmt.Errorf("mcp: initialize: %w", ErrTimeout)
		}
		if err != nil {
			return fmt.Errorf("mcp: initialize: %w", err)
		}
		if c.useLate(late.before(r.seq), "late, before initialize's reply") {
			return nil
		}
		if c.hconn != nil && c.sess.Transport == TransportStreamableHTTP && r.status >= 300 {
			switch r.status {
			case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
				c.detect(fmt.Sprintf("initialize: HTTP %d; trying HTTP+SSE (2024-11-05)", r.status))
				if serr := c.switchToSSE(ctx); serr != nil {
					c.detect("HTTP+SSE: " + serr.Error())
					return &HTTPError{Status: r.status, Header: r.header, Body: r.msg}
				}
				continue
			}
		}
		resp, err := classifyReply(r)
		if err != nil {
			c.detect("initialize: " + describeReply(r, nil))
			return err
		}
		msg := resp.Message
		if msg.Error != nil {
			var data unsupportedData
			_ = json.Unmarshal(msg.Error.Data, &data)
			if alt := newestKnown(data.Supported, func(v string) bool { return !IsModern(v) && v != rev }); alt != "" && must == "" && attempt < 2 {
				c.detect(fmt.Sprintf("initialize %s: error %d, server supports %v; retrying with %s", rev, msg.Error.Code, data.Supported, alt))
				rev = alt
				continue
			}
			c.detect(fmt.Sprintf("initialize %s: error %d", rev, msg.Error.Code))
			if m := newestKnown(data.Supported, IsModern); m != "" && must == "" {
				return &goModern{rev: m}
			}
			return fmt.Errorf("%w: initialize: %w", ErrProtocolRefused, msg.Error)
		}
		var ir initializeResult
		if err := json.Unmarshal(msg.Result, &ir); err != nil {
			c.detect("initialize: unparseable result")
			return fmt.Errorf("%w: initialize result: %w", ErrProtocolRefused, err)
		}
		got := ir.ProtocolVersion
		if !IsKnown(got) || IsModern(got) || (must != "" && got != must) {
			c.detect(fmt.Sprintf("initialize %s: server answered %s, not usable", rev, shortText(got, 32)))
			return fmt.Errorf("%w: server answered protocolVersion %s", ErrProtocolRefused, shortText(got, 32))
		}
		c.detect(fmt.Sprintf("initialize: server answered %s", got))
		sid := ""
		if r.header != nil {
			sid = r.header.Get(HeaderSessionID)
		}
		c.mu.Lock()
		c.sess.Revision = got
		c.sess.Era = EraLegacy
		c.sess.Server = parseServerInfo(ir.ServerInfo)
		c.sess.Capabilities = ir.Capabilities
		c.sess.Instructions = ir.Instructions
		c.sess.SessionID = sid != ""
		c.mu.Unlock()
		if c.hconn != nil {
			c.hconn.setSession(sid, got, false)
		}
		if err := c.Notify(ctx, "notifications/initialized", nil); err != nil {
			var he *HTTPError
			if !errors.As(err, &he) {
				return err
			}
			c.obs.note("http-status", fmt.Sprintf("notifications/initialized → HTTP %d", he.Status))
		}
		return nil
	}
}

// switchToSSE replaces the Streamable HTTP transport with HTTP+SSE.
func (c *Client) switchToSSE(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	s, _, err := dialSSE(rctx, c.hconn)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.t = s
	c.sess.Transport = TransportSSE
	c.mu.Unlock()
	c.detect("HTTP+SSE: endpoint event received")
	return nil
}

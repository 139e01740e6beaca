package scan

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

// conformance runs the protocol-level checks that need no extra tool call.
func (s *scanner) conformance(ctx context.Context) {
	modern := mcp.IsModern(s.sess.Revision)

	if s.sess.Server.Name == "" {
		s.find(RuleServerInfo, "", "", "serverInfo carries no name")
		s.check(RuleServerInfo, CheckFail, "")
	} else {
		s.check(RuleServerInfo, CheckPass, "")
	}

	switch {
	case s.list.CursorLoop:
		s.find(RuleCursorLoop, "", "", fmt.Sprintf("nextCursor repeated after %d page(s)", s.list.Pages))
		s.check(RuleCursorLoop, CheckFail, "")
	case s.list.Pages == 0:
		s.check(RuleCursorLoop, CheckNotEstablished, "tools/list did not complete")
	default:
		s.check(RuleCursorLoop, CheckPass, fmt.Sprintf("%d page(s)", s.list.Pages))
	}

	if !modern {
		s.check(RuleCacheHints, CheckNotApplicable, "legacy revision")
		s.check(RuleResultType, CheckNotApplicable, "legacy revision")
		s.legacyReplyCheck()
	} else {
		s.modernResultChecks()
	}
	s.versionNegotiation(ctx, modern)
	s.transportChecks(ctx)
	s.readDepth(ctx)
}

func (s *scanner) modernResultChecks() {
	if len(s.list.Raw) == 0 {
		s.check(RuleCacheHints, CheckNotEstablished, "no tools/list page was received")
		s.check(RuleResultType, CheckNotEstablished, "no tools/list page was received")
		return
	}
	noTTL, noScope, badScope, noType := cacheHints(s.list.Raw)
	pages := len(s.list.Raw)
	if text := cacheHintText(noTTL, noScope, badScope, pages); text != "" {
		s.find(RuleCacheHints, "", "/ttlMs", text)
		s.check(RuleCacheHints, CheckFail, "")
	} else {
		s.check(RuleCacheHints, CheckPass, "")
	}
	if noType > 0 {
		s.find(RuleResultType, "", "/resultType", fmt.Sprintf("%d of %d tools/list page(s) without resultType", noType, pages))
		s.check(RuleResultType, CheckFail, "")
	} else {
		s.check(RuleResultType, CheckPass, "")
	}
}

// cacheHints counts the result pages without a valid ttlMs (an integer
// >= 0), without cacheScope, with a cacheScope other than public/private,
// and without resultType.
func cacheHints(raws []json.RawMessage) (noTTL, noScope, badScope, noType int) {
	for _, raw := range raws {
		var page struct {
			TTLMs      *json.Number `json:"ttlMs"`
			CacheScope *string      `json:"cacheScope"`
			ResultType *string      `json:"resultType"`
		}
		if json.Unmarshal(raw, &page) != nil {
			continue
		}
		if page.TTLMs == nil {
			noTTL++
		} else if n, err := page.TTLMs.Int64(); err != nil || n < 0 {
			noTTL++
		}
		switch {
		case page.CacheScope == nil:
			noScope++
		case *page.CacheScope != "public" && *page.CacheScope != "private":
			badScope++
		}
		if page.ResultType == nil {
			noType++
		}
	}
	return noTTL, noScope, badScope, noType
}

// cacheHintText words the cache-hint counts of pages results; "" when
// every one carries valid hints.
func cacheHintText(noTTL, noScope, badScope, pages int) string {
	var parts []string
	if noTTL > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d page(s) without a valid ttlMs", noTTL, pages))
	}
	if noScope > 0 {
		parts = append(parts, fmt.Sprintf("%d without cacheScope", noScope))
	}
	if badScope > 0 {
		parts = append(parts, fmt.Sprintf("%d with a cacheScope other than public/private", badScope))
	}
	return strings.Join(parts, "; ")
}

// legacyReplyCheck grades a legacy session's tools/list pages for the
// fields only 2026-07-28 defines (resultType, ttlMs, cacheScope).
func (s *scanner) legacyReplyCheck() {
	if len(s.list.Raw) == 0 {
		s.check(RuleLegacyReply, CheckNotEstablished, "no tools/list page was received")
		return
	}
	var mixed int
	var fields []string
	for _, raw := range s.list.Raw {
		var page map[string]json.RawMessage
		if json.Unmarshal(raw, &page) != nil {
			continue
		}
		found := false
		for _, k := range []string{"resultType", "ttlMs", "cacheScope"} {
			if _, ok := page[k]; ok {
				found = true
				if !slices.Contains(fields, k) {
					fields = append(fields, k)
				}
			}
		}
		if found {
			mixed++
		}
	}
	if mixed > 0 {
		s.find(RuleLegacyReply, "", "", fmt.Sprintf("%d of %d tools/list page(s) on %s carry %s", mixed, len(s.list.Raw), s.sess.Revision, strings.Join(fields, ", ")))
		s.check(RuleLegacyReply, CheckFail, "")
		return
	}
	s.check(RuleLegacyReply, CheckPass, "")
}

// versionNegotiation checks how the server handles a revision it cannot know.
// A modern server is asked, per request, for revision 1999-01-01; it must
// answer -32022 listing what it supports. A legacy server's negotiation was
// observed at connect time: it answered initialize with a revision mcpdrill knows.
func (s *scanner) versionNegotiation(ctx context.Context, modern bool) {
	if !modern {
		if s.sess.Revision != "" {
			s.check(RuleVersionNeg, CheckPass, "initialize answered with "+s.sess.Revision)
		} else {
			s.check(RuleVersionNeg, CheckNotEstablished, "")
		}
		return
	}
	const unknownRev = "1999-01-01"
	frame, err := jsonrpc.NewRequest("mcpdrill-version-probe", "tools/list", map[string]any{
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    unknownRev,
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "mcpdrill", "version": s.opts.ToolVersion},
		},
	})
	if err != nil {
		s.check(RuleVersionNeg, CheckNotEstablished, err.Error())
		return
	}
	// Over HTTP the MCP-Protocol-Version header must name the same revision
	// as _meta, or a server that checks headers first answers -32020.
	hdr := http.Header{}
	hdr.Set(mcp.HeaderProtocolVersion, unknownRev)
	var msg *jsonrpc.Message
	r, err := s.c.SendRawHeaders(ctx, frame, hdr)
	if r != nil {
		msg = r.Message
	}
	msg = errorMessage(msg, err)
	switch {
	case msg != nil && msg.Error != nil && msg.Error.Code == jsonrpc.CodeUnsupportedProtocolVersion:
		var data struct {
			Supported []string `json:"supported"`
		}
		_ = json.Unmarshal(msg.Error.Data, &data)
		if len(data.Supported) == 0 {
			s.find(RuleVersionNeg, "", "/error/data/supported", "-32022 names no supported versions")
			s.check(RuleVersionNeg, CheckFail, "")
			return
		}
		s.check(RuleVersionNeg, CheckPass, "-32022 listing "+strings.Join(data.Supported, ", "))
	case msg != nil && msg.Error == nil && msg.Result != nil:
		s.find(RuleVersionNeg, "", "", "a request naming revision "+unknownRev+" was served instead of refused with -32022")
		s.check(RuleVersionNeg, CheckFail, "")
	case msg != nil && msg.Error != nil && msg.Error.Code == jsonrpc.CodeHeaderMismatch:
		s.check(RuleVersionNeg, CheckNotEstablished, "the transport refused the request with -32020 before the revision was read")
	case msg != nil && msg.Error != nil:
		s.find(RuleVersionNeg, "", "/error/code", fmt.Sprintf("an unknown revision was refused with %d instead of -32022", msg.Error.Code))
		s.check(RuleVersionNeg, CheckFail, "")
	default:
		if reason, cut := cutShort(ctx); cut {
			s.cutCheck(RuleVersionNeg, reason, "no answer before the scan ended")
			return
		}
		s.check(RuleVersionNeg, CheckNotEstablished, "no answer: "+errText(err))
	}
}

// secondConnection lists tools on a fresh session and compares the sets.
func (s *scanner) secondConnection(ctx context.Context) {
	c2, err := mcp.Connect(ctx, s.cfg)
	if reason, cut := cutShort(ctx); cut && err != nil {
		s.cutCheck(RuleToolSetStable, reason, "the second connection was cut short")
		return
	}
	if err != nil {
		s.find(RuleIncomplete, "", "", "the second connection failed ("+errText(err)+"): tool-set stability not established")
		s.check(RuleToolSetStable, CheckNotEstablished, "second connection failed")
		return
	}
	// Closed beside the rest of the scan: a server that ignores its stdin
	// closing would otherwise hold the check for the close grace.
	defer s.ends.close(c2)
	l2, err := c2.ListTools(ctx)
	if reason, cut := cutShort(ctx); cut && err != nil {
		s.cutCheck(RuleToolSetStable, reason, "the second listing was cut short")
		return
	}
	if err != nil || l2.Capped || s.list.Capped {
		s.find(RuleIncomplete, "", "", "a complete tool list was not obtained twice: tool-set stability not established")
		s.check(RuleToolSetStable, CheckNotEstablished, "")
		return
	}
	a, b := toolNames(s.list.Tools), toolNames(l2.Tools)
	sa, sb := slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	if !slices.Equal(sa, sb) {
		only1, only2 := diffNames(sa, sb)
		sev := severityOf(RuleToolSetStable)
		if !mcp.IsModern(s.sess.Revision) {
			sev = "warn"
		}
		s.findSev(RuleToolSetStable, sev, "", "", fmt.Sprintf("second connection: %d tool(s) only on the first [%s], %d only on the second [%s]",
			len(only1), strings.Join(only1, ", "), len(only2), strings.Join(only2, ", ")))
		s.check(RuleToolSetStable, CheckFail, "")
		return
	}
	s.check(RuleToolSetStable, CheckPass, fmt.Sprintf("%d tools on both connections", len(a)))
	if !slices.Equal(a, b) {
		s.find(RuleToolOrder, "", "", "the same tools came back in a different order on the second connection")
	}
}

func toolNames(ts []mcp.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

// diffNames returns the names only in a and only in b (both sorted).
func diffNames(a, b []string) (onlyA, onlyB []string) {
	for _, n := range a {
		if _, ok := slices.BinarySearch(b, n); !ok {
			onlyA = append(onlyA, n)
		}
	}
	for _, n := range b {
		if _, ok := slices.BinarySearch(a, n); !ok {
			onlyB = append(onlyB, n)
		}
	}
	return onlyA, onlyB
}

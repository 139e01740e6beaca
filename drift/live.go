package drift

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/report"
)

// Observation is what one live listing established about a server.
type Observation struct {
	Session mcp.Session
	Tools   []mcp.Tool
	// Pages is how many tools/list pages were read.
	Pages int
	// Capped is true when the listing stopped before its end (page cap,
	// tool cap or a cursor loop): the tool set is incomplete.
	Capped bool
	// ToolsCapped is true when the tool cap stopped it (mcp.Config.MaxTools).
	ToolsCapped bool
	// ForcedProtocol is the --protocol revision, when the user forced one.
	ForcedProtocol string
	// Unreadable are the served tool entries that could not be read as
	// tools, in listing order; they are in no other field.
	Unreadable []Unreadable
	// ToolPages maps each served tool name to the (0-based) tools/list page
	// it was read out of, so that a finding can name that page's request.
	ToolPages map[string]int
}

// Unreadable is a served tool entry that could not be read as a tool: not
// an object, no usable name, or past the decoder's limits (a schema nested
// deeper than jsonvalue.MaxJSONDepth, a number too large to hold).
type Unreadable struct {
	// Name is the entry's "name" when that much could be read.
	Name string
	// Reason says what could not be read.
	Reason string
}

// Readable splits listed tools into those that can be compared (checkTool)
// and the entries that cannot, with the reason.
func Readable(ts []mcp.Tool) ([]mcp.Tool, []Unreadable) {
	out := make([]mcp.Tool, 0, len(ts))
	var bad []Unreadable
	for _, t := range ts {
		if err := checkTool(t); err != nil {
			bad = append(bad, Unreadable{Name: strings.TrimSpace(t.Name), Reason: err.Error()})
			continue
		}
		out = append(out, t)
	}
	return out, bad
}

// Observe connects to a live server and lists its tools. Connection errors
// are returned wrapped (errors.Is mcp.ErrProtocolRefused, mcp.ErrUnreachable,
// mcp.ErrTimeout …); the caller decides how to report them.
func Observe(ctx context.Context, cfg mcp.Config) (*Observation, error) {
	c, err := mcp.Connect(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	defer c.Close()
	return observeClient(ctx, c, cfg.Protocol)
}

func observeClient(ctx context.Context, c *mcp.Client, forced string) (*Observation, error) {
	list, err := c.ListTools(ctx)
	if err != nil {
		return nil, fmt.Errorf("tools/list: %w", err)
	}
	tools, unreadable := Readable(list.Tools)
	return &Observation{
		ToolPages:      list.ToolPages(),
		Session:        c.Session(),
		Tools:          tools,
		Pages:          list.Pages,
		Capped:         !list.Complete(),
		ToolsCapped:    list.ToolsCapped,
		ForcedProtocol: forced,
		Unreadable:     unreadable,
	}, nil
}

// IsRefused reports whether a connection error is a refused protocol
// revision (which stops the comparison with MCP-DRIFT-PROTOCOL-UNSUPPORTED):
// the client found no common revision, or the server answered -32022
// (unsupported protocol version), as a JSON-RPC error or in an HTTP error body.
func IsRefused(err error) bool {
	if errors.Is(err, mcp.ErrProtocolRefused) {
		return true
	}
	var he *mcp.HTTPError
	if errors.As(err, &he) && he.Body != nil && he.Body.Error != nil {
		return he.Body.Error.Code == jsonrpc.CodeUnsupportedProtocolVersion
	}
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == jsonrpc.CodeUnsupportedProtocolVersion
}

// refusedFinding is the finding for a server that refused the protocol
// revision: no tools were compared.
func refusedFinding(err error) report.Finding {
	msg := "the server refused the protocol revision; no tool list was obtained, so no tools were compared"
	var supported string
	if err != nil {
		if i := strings.Index(err.Error(), "server supports "); i >= 0 {
			supported = err.Error()[i:]
		}
	}
	return report.Finding{Rule: ruleProtocolUnsupported, Severity: report.SeverityError, Message: msg, Evidence: supported}
}

// SessionFindings reports what the listing itself established: a legacy
// server (no server/discover, unless the user forced a revision, in which
// case the absence was not observed) and a capped listing.
func (o *Observation) SessionFindings() []report.Finding {
	var fs []report.Finding
	if o.Session.Era == mcp.EraLegacy && o.ForcedProtocol == "" {
		fs = append(fs, report.Finding{Rule: ruleLegacyServer, Severity: report.SeverityInfo,
			Message: fmt.Sprintf("no server/discover; negotiated %s with initialize and compared anyway (no newer revision is claimed)", o.Session.Revision)})
	}
	switch {
	case o.ToolsCapped:
		fs = append(fs, report.Finding{Rule: rulePaginationCapped, Severity: report.SeverityWarn,
			Message: fmt.Sprintf("tools/list stopped at the tool cap after %d tool(s) on %d page(s); missing-tool findings are suppressed", len(o.Tools), o.Pages)})
	case o.Capped:
		fs = append(fs, report.Finding{Rule: rulePaginationCapped, Severity: report.SeverityWarn,
			Message: fmt.Sprintf("tools/list stopped after %d page(s) with a cursor still set; missing-tool findings are suppressed", o.Pages)})
	}
	return fs
}

// Side is one side of a comparison: a tool set and whether it is known to
// be complete.
type Side struct {
	Tools []mcp.Tool
	// Incomplete is true for a capped live listing or a manifest saved with
	// a nextCursor.
	Incomplete bool
	// Unreadable are entries of a live listing that could not be read.
	Unreadable []Unreadable
}

// Compare turns the classified differences between a declared (or
// baseline) tool set and a served (or current) one into findings:
// MCP-DRIFT-TOOL-MISSING, -TOOL-UNDECLARED, -TOOL-UNREADABLE, -SCHEMA,
// -SCHEMA-COMPATIBLE and -ANNOTATION. Missing tools are suppressed when the served side is
// incomplete, undeclared ones when the declared side is. Each fact has one
// rule: presence changes are never also reported as schema changes.
func Compare(declared, served Side) []report.Finding {
	fs, _ := compareContext(context.Background(), declared, served)
	return fs
}

// compareContext is Compare under ctx: once ctx ends the comparison stops
// (diffContext) and ctx's error is returned, with no findings.
func compareContext(ctx context.Context, declared, served Side) ([]report.Finding, error) {
	var fs []report.Finding
	if declared.Incomplete {
		fs = append(fs, report.Finding{Rule: ruleManifestTruncated, Severity: report.SeverityWarn,
			Message: "the manifest was saved with a nextCursor (one page of a longer list); undeclared-tool findings are suppressed"})
	}
	unread := map[string]bool{}
	var isDeclared map[string]bool // built once, on the first unreadable entry
	for _, u := range served.Unreadable {
		unread[u.Name] = true
		f := report.Finding{Rule: ruleToolUnreadable, Severity: report.SeverityError, Tool: u.Name,
			Message: "a served tool entry could not be read, so it was not compared", Evidence: u.Reason}
		if isDeclared == nil {
			isDeclared = make(map[string]bool, len(declared.Tools))
			for _, t := range declared.Tools {
				isDeclared[t.Name] = true
			}
		}
		if u.Name != "" && isDeclared[u.Name] {
			f.Message = "the declared tool is served, but its definition could not be read, so it was not compared"
		}
		fs = append(fs, f)
	}
	changes, err := diffContext(ctx, declared.Tools, served.Tools)
	if err != nil {
		return nil, err
	}
	for _, c := range changes {
		if c.Kind == KindToolRemoved && unread[c.Tool] {
			continue // served, unreadable: reported above, not as missing
		}
		f, ok := changeFinding(c, declared.Incomplete, served.Incomplete)
		if ok {
			fs = append(fs, f)
		}
	}
	report.Sort(fs)
	return fs, nil
}

// changeFindings converts changes without any suppression.
func changeFindings(cs []Change) []report.Finding {
	var fs []report.Finding
	for _, c := range cs {
		f, _ := changeFinding(c, false, false)
		fs = append(fs, f)
	}
	report.Sort(fs)
	return fs
}

func changeFinding(c Change, declaredIncomplete, servedIncomplete bool) (report.Finding, bool) {
	b := c.Breaking
	f := report.Finding{
		Tool: c.Tool, Pointer: c.Pointer, Change: c.ChangeID, Breaking: &b, Severity: c.Severity,
		Message:  c.Message,
		Evidence: changeEvidence(c),
	}
	switch c.Kind {
	case KindToolRemoved:
		if servedIncomplete {
			return f, false
		}
		f.Rule, f.Severity = ruleToolMissing, report.SeverityError
		f.Message = "declared tool is not served"
	case KindToolAdded:
		if declaredIncomplete {
			return f, false
		}
		f.Rule, f.Severity = ruleToolUndeclared, report.SeverityWarn
		f.Message = "served tool is not declared"
	case kindAnnotationChanged:
		f.Rule = ruleAnnotation
	default:
		switch {
		case c.Breaking:
			f.Rule = ruleSchema
		case c.Verdict == VerdictUndetermined:
			f.Rule = ruleSchemaUndetermined
		default:
			f.Rule = ruleSchemaCompatible
		}
	}
	return f, true
}

// changeEvidence names the rule that graded a change and, for one inside a
// schema, its witness: the value, built from the schemas alone, that the
// receiving side rejects.
func changeEvidence(c Change) string {
	e := fmt.Sprintf("graded by %s (%s)", c.RuleID, c.Direction)
	if c.Witness == "" {
		return e
	}
	what := "a value clients send by the old schema, rejected by the new"
	if c.Direction == directionOutput {
		what = "a value the new schema admits and the old one rejects"
	}
	return e + "; " + what + ": " + c.Witness
}

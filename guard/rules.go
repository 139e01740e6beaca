package guard

import "github.com/mcpdrill/mcpdrill/report"

// Rule ids of the guard lifecycle. Every audit event carries the id of its
// action, so an audit log can be filtered and explained with `mcpdrill rules`.
const (
	RuleFirstUse   = "MCP-GUARD-FIRST-USE"
	RuleHold       = "MCP-GUARD-HOLD"
	RuleDrift      = "MCP-GUARD-DRIFT"
	RuleReseen     = "MCP-GUARD-RESEEN"
	RuleApprove    = "MCP-GUARD-APPROVE"
	RuleQuarantine = "MCP-GUARD-QUARANTINE"
	RuleRelease    = "MCP-GUARD-RELEASE"
	RuleRollback   = "MCP-GUARD-ROLLBACK"
)

// RuleOf returns the rule id of an audit action ("" for an unknown action).
func RuleOf(a Action) string {
	switch a {
	case ActionFirstUse:
		return RuleFirstUse
	case ActionHold:
		return RuleHold
	case ActionDrift:
		return RuleDrift
	case ActionReseen:
		return RuleReseen
	case ActionApprove:
		return RuleApprove
	case ActionQuarantine:
		return RuleQuarantine
	case ActionRelease:
		return RuleRelease
	case ActionRollback:
		return RuleRollback
	}
	return ""
}

// Catalogue documents the guard lifecycle events.
func Catalogue() report.Catalogue {
	r := func(id string, sev report.Severity, title, detail string) report.Rule {
		return report.Rule{ID: id, Severity: sev, Title: title, Detail: detail}
	}
	return report.Catalogue{
		r(RuleFirstUse, report.SeverityInfo, "A server's first tool set became its baseline",
			"Under --posture discovery (trust on first use) the first complete tools/list of a server with no record is pinned and served (status verified)."),
		r(RuleHold, report.SeverityWarn, "A server without a baseline is held for review",
			"Under --posture strict a server with no record is pending: its tools are withheld and its calls refused until `mcpdrill guard approve`."),
		r(RuleDrift, report.SeverityError, "A pinned server's tool set drifted",
			"The live tool set's fingerprint (name, description, inputSchema, outputSchema of every tool; order-independent) differs from the approved baseline: the server turns changed and fails closed until an operator reviews (`guard diff`) and approves."),
		r(RuleReseen, report.SeverityWarn, "A held server's tool set moved again",
			"A server that is already withheld served yet another tool set; the last-seen set was replaced, the status did not change."),
		r(RuleApprove, report.SeverityInfo, "An operator approved a tool set",
			"The last-seen tool set became the baseline and the server is verified again."),
		r(RuleQuarantine, report.SeverityWarn, "An operator quarantined a server",
			"The server is withheld whatever it serves until `mcpdrill guard release`."),
		r(RuleRelease, report.SeverityInfo, "An operator released a quarantine",
			"The server returns to the status its record implies: verified, changed or pending."),
		r(RuleRollback, report.SeverityWarn, "A transition in the audit log did not happen",
			"The store stopped (a crash, a full disk) between appending a transition's audit line and replacing the server's record; the next writer found the line without its record and logged this rollback. The record, and so the status, is what it was before that line."),
	}
}

package drift

import "github.com/mcpdrill/mcpdrill/report"

// CheckReport is the report of "mcpdrill drift check": cur compared with
// base by Check, the two sides named baseline (the baseline file) and live
// (the current file, or the live target as already redacted for display).
func CheckReport(baseline, live string, base, cur *Capture) *Report {
	rep := &Report{SchemaVersion: SchemaVersion, Command: "drift check", Baseline: baseline, Live: live,
		Fingerprint: Fingerprints{Baseline: Fingerprint(base.ToolSet()), Live: Fingerprint(cur.ToolSet())},
		Tools:       ToolCounts{Baseline: len(base.Tools), Live: len(cur.Tools)}, Compared: true}
	rep.SetFindings(Check(base, cur))
	return rep
}

// CheckRefusedReport is the report of a drift check whose live capture the
// server refused (err, for which IsRefused holds): the baseline's side and
// the refusal, nothing compared.
func CheckRefusedReport(baseline, live string, base *Capture, err error) *Report {
	rep := &Report{SchemaVersion: SchemaVersion, Command: "drift check", Baseline: baseline, Live: live,
		Fingerprint: Fingerprints{Baseline: base.Fingerprint}, Tools: ToolCounts{Baseline: len(base.Tools)}}
	rep.SetFindings([]report.Finding{refusedFinding(err)})
	return rep
}

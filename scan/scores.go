package scan

import (
	"math"
	"strconv"
)

// Tally counts what scans established: tools by output contract, the leaf
// rates behind the mean, probes and conformance checks by outcome. It is
// the one place where figures are counted and divided: a report's Scores,
// a study row's figures and a study's aggregates all come from tallies, and
// a study's tool-weighted aggregate is the sum (Add) of its rows' tallies.
//
// Every tool is in exactly one of None, Vacuous, Partial, Enforceable,
// Invalid and Cut. Cut holds the declared schemas whose assessment the
// scan's own deadline (or a cancellation) stopped before a verdict: they
// are declared, and never counted vacuous.
type Tally struct {
	Tools       int `json:"tools"`
	None        int `json:"none"`
	Vacuous     int `json:"vacuous"`
	Partial     int `json:"partial"`
	Enforceable int `json:"enforceable"`
	Invalid     int `json:"invalid"`
	Cut         int `json:"cut"`
	// Wrapped counts the tools whose schema an SDK wrapped
	// (x-fastmcp-wrap-result).
	Wrapped int `json:"wrapped"`
	// LeafTools counts the tools with a leaf rate (an assessed schema with
	// at least one corruptible leaf) and LeafRateSum adds their rates: the
	// mean leaf rate is their quotient.
	LeafTools   int     `json:"leaf_tools"`
	LeafRateSum float64 `json:"leaf_rate_sum"`
	// ProbesRun counts the error probes that ran (not skipped),
	// ProbesHandled those refused visibly, ProbesConformant those answered
	// as the negotiated revision asks.
	ProbesRun        int `json:"probes_run"`
	ProbesHandled    int `json:"probes_handled"`
	ProbesConformant int `json:"probes_conformant"`
	// ChecksDecided counts the conformance checks that passed or failed,
	// ChecksPassed those that passed.
	ChecksPassed  int `json:"checks_passed"`
	ChecksDecided int `json:"checks_decided"`
}

// TallyOf counts tools, probes and conformance checks as a report (or a
// study row, which carries the same types) holds them.
func TallyOf(tools []ToolReport, probes []Probe, checks []Check) Tally {
	var t Tally
	for _, tr := range tools {
		t.Tools++
		switch tr.OutputContract {
		case ContractEnforceable:
			t.Enforceable++
		case ContractPartial:
			t.Partial++
		case ContractVacuous:
			if tr.StoppedBy == ReasonDeadline || tr.StoppedBy == ReasonCanceled {
				// Cut short by the scan, not graded.
				t.Cut++
			} else {
				t.Vacuous++
			}
		case ContractInvalid:
			t.Invalid++
		default:
			t.None++
		}
		if tr.Wrapped {
			t.Wrapped++
		}
		if tr.LeafRate != nil {
			t.LeafTools++
			t.LeafRateSum += *tr.LeafRate
		}
	}
	for _, p := range probes {
		if p.Verdict == VerdictSkipped {
			continue
		}
		t.ProbesRun++
		if p.Verdict.Handled() {
			t.ProbesHandled++
		}
		if p.Conformant != nil && *p.Conformant {
			t.ProbesConformant++
		}
	}
	for _, c := range checks {
		switch c.Status {
		case CheckPass:
			t.ChecksPassed++
			t.ChecksDecided++
		case CheckFail:
			t.ChecksDecided++
		}
	}
	return t
}

// Add adds u's counts to t.
func (t *Tally) Add(u Tally) {
	t.Tools += u.Tools
	t.None += u.None
	t.Vacuous += u.Vacuous
	t.Partial += u.Partial
	t.Enforceable += u.Enforceable
	t.Invalid += u.Invalid
	t.Cut += u.Cut
	t.Wrapped += u.Wrapped
	t.LeafTools += u.LeafTools
	t.LeafRateSum += u.LeafRateSum
	t.ProbesRun += u.ProbesRun
	t.ProbesHandled += u.ProbesHandled
	t.ProbesConformant += u.ProbesConformant
	t.ChecksPassed += u.ChecksPassed
	t.ChecksDecided += u.ChecksDecided
}

// Declared is the number of tools that declare an outputSchema (every
// tool but None).
func (t Tally) Declared() int { return t.Vacuous + t.Partial + t.Enforceable + t.Invalid + t.Cut }

// RejectsAny is the number of tools whose schema rejects the corrupted
// payload of at least one sampled shape (enforceable + partial).
func (t Tally) RejectsAny() int { return t.Enforceable + t.Partial }

// Shares are a tally's figures, exact (never rounded: a report rounds
// once, when it renders one); nil where the denominator is 0. The tier
// shares divide by Tools, the "of declared" ones by Declared, LeafRate is
// the mean over LeafTools, the error figures divide by ProbesRun and
// SpecConformance by ChecksDecided.
type Shares struct {
	NoneShare             *float64 `json:"none_share"`
	VacuousShare          *float64 `json:"vacuous_share"`
	PartialShare          *float64 `json:"partial_share"`
	EnforceableShare      *float64 `json:"enforceable_share"`
	InvalidShare          *float64 `json:"invalid_share"`
	CutShare              *float64 `json:"cut_share"`
	OutputCoverage        *float64 `json:"output_coverage"`
	EnforceableOfDeclared *float64 `json:"enforceable_of_declared"`
	// RejectsAnyShare is (enforceable + partial) / tools, the figure
	// comparable with a single-payload method; RejectsAnyOfDeclared its
	// share of the declared schemas.
	RejectsAnyShare      *float64 `json:"rejects_any_share"`
	RejectsAnyOfDeclared *float64 `json:"rejects_any_of_declared"`
	LeafRate             *float64 `json:"leaf_rate"`
	ErrorHandling        *float64 `json:"error_handling"`
	ErrorConformance     *float64 `json:"error_conformance"`
	SpecConformance      *float64 `json:"spec_conformance"`
}

// Share is n/d, exact; nil when d is 0 (a figure with nothing to measure
// is absent, never 0).
func Share(n, d int) *float64 {
	if d == 0 {
		return nil
	}
	v := float64(n) / float64(d)
	return &v
}

// Shares computes t's figures.
func (t Tally) Shares() Shares {
	s := Shares{
		NoneShare:             Share(t.None, t.Tools),
		VacuousShare:          Share(t.Vacuous, t.Tools),
		PartialShare:          Share(t.Partial, t.Tools),
		EnforceableShare:      Share(t.Enforceable, t.Tools),
		InvalidShare:          Share(t.Invalid, t.Tools),
		CutShare:              Share(t.Cut, t.Tools),
		OutputCoverage:        Share(t.Declared(), t.Tools),
		EnforceableOfDeclared: Share(t.Enforceable, t.Declared()),
		RejectsAnyShare:       Share(t.RejectsAny(), t.Tools),
		RejectsAnyOfDeclared:  Share(t.RejectsAny(), t.Declared()),
		ErrorHandling:         Share(t.ProbesHandled, t.ProbesRun),
		ErrorConformance:      Share(t.ProbesConformant, t.ProbesRun),
		SpecConformance:       Share(t.ChecksPassed, t.ChecksDecided),
	}
	if t.LeafTools > 0 {
		v := t.LeafRateSum / float64(t.LeafTools)
		s.LeafRate = &v
	}
	return s
}

// MeanShares is the server-weighted mean of several tallies' figures: each
// figure is the mean of the values defined (a tally with no tools adds
// nothing to the tier shares, one with no probe run nothing to the error
// figures); nil where none is.
func MeanShares(ss []Shares) Shares {
	var out Shares
	for _, f := range shareFields {
		var sum float64
		n := 0
		for i := range ss {
			if v := *f(&ss[i]); v != nil {
				sum += *v
				n++
			}
		}
		if n > 0 {
			v := sum / float64(n)
			*f(&out) = &v
		}
	}
	return out
}

// shareFields lists every field of Shares, for MeanShares.
var shareFields = []func(*Shares) **float64{
	func(s *Shares) **float64 { return &s.NoneShare },
	func(s *Shares) **float64 { return &s.VacuousShare },
	func(s *Shares) **float64 { return &s.PartialShare },
	func(s *Shares) **float64 { return &s.EnforceableShare },
	func(s *Shares) **float64 { return &s.InvalidShare },
	func(s *Shares) **float64 { return &s.CutShare },
	func(s *Shares) **float64 { return &s.OutputCoverage },
	func(s *Shares) **float64 { return &s.EnforceableOfDeclared },
	func(s *Shares) **float64 { return &s.RejectsAnyShare },
	func(s *Shares) **float64 { return &s.RejectsAnyOfDeclared },
	func(s *Shares) **float64 { return &s.LeafRate },
	func(s *Shares) **float64 { return &s.ErrorHandling },
	func(s *Shares) **float64 { return &s.ErrorConformance },
	func(s *Shares) **float64 { return &s.SpecConformance },
}

// ScoresOf derives the per-axis figures from a report's tools, probes and
// conformance checks (TallyOf, then Tally.Scores). Scan sets Report.Scores
// with it; callers that build a Report by hand call it to get the same
// figures.
func ScoresOf(r *Report) Scores {
	return TallyOf(r.Tools, r.Probes, r.Conformance).Scores()
}

// Scores are the tally's figures as the scan document gives them: the
// counts, and every share rounded to four decimals (the document's one
// rendering of them; nothing is computed from a rounded share). Declared
// includes the tools whose assessment the scan's deadline cut, which are
// never counted vacuous.
func (t Tally) Scores() Scores {
	s := t.Shares()
	return Scores{
		Tools: t.Tools, Declared: t.Declared(), Enforceable: t.Enforceable, Partial: t.Partial, Vacuous: t.Vacuous, Invalid: t.Invalid,
		OutputCoverage:        round(s.OutputCoverage),
		EnforceableRate:       round(s.EnforceableShare),
		EnforceableOfDeclared: round(s.EnforceableOfDeclared),
		LeafRate:              round(s.LeafRate),
		ErrorHandling:         round(s.ErrorHandling),
		ErrorConformance:      round(s.ErrorConformance),
		SpecConformance:       round(s.SpecConformance),
		RejectsAnyRate:        round(s.RejectsAnyShare),
	}
}

// round keeps four decimals of a share for the scan document, so that it
// diffs cleanly; nil stays nil.
func round(f *float64) *float64 {
	if f == nil {
		return nil
	}
	v := math.Round(*f*10000) / 10000
	return &v
}

// Percent renders a share as a percentage with one decimal, rounded once
// from the exact share (a rounded share rounded again can land a tenth
// off: 0.45149 is 45.1%, its four-decimal 0.4515 would say 45.2%); none
// when the share is nil. Every report that prints a share calls it.
func Percent(f *float64, none string) string {
	if f == nil {
		return none
	}
	return strconv.FormatFloat(math.Round(*f*1000)/10, 'f', 1, 64) + "%"
}

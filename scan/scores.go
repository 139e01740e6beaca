package scan

import "math"

// ScoresOf derives the per-axis figures from a report's tools, probes and
// conformance checks; the formulas are the ones METHODOLOGY.md gives, and
// every ratio is nil when its denominator is 0. Scan sets Report.Scores with
// it; callers that build a Report by hand call it to get the same figures.
func ScoresOf(r *Report) Scores {
	var sc Scores
	var leafSum float64
	var leafN int
	for _, t := range r.Tools {
		sc.Tools++
		switch t.OutputContract {
		case ContractEnforceable:
			sc.Declared++
			sc.Enforceable++
		case ContractPartial:
			sc.Declared++
			sc.Partial++
		case ContractVacuous:
			sc.Declared++
			if t.StoppedBy != ReasonDeadline && t.StoppedBy != ReasonCanceled {
				// Cut short by the scan, not graded.
				sc.Vacuous++
			}
		case ContractInvalid:
			sc.Declared++
			sc.Invalid++
		}
		if t.LeafRate != nil {
			leafSum += *t.LeafRate
			leafN++
		}
	}
	sc.OutputCoverage = ratio(sc.Declared, sc.Tools)
	sc.EnforceableRate = ratio(sc.Enforceable, sc.Tools)
	sc.EnforceableOfDeclared = ratio(sc.Enforceable, sc.Declared)
	sc.RejectsAnyRate = ratio(sc.Enforceable+sc.Partial, sc.Tools)
	if leafN > 0 {
		sc.LeafRate = round(leafSum / float64(leafN))
	}
	var ran, handled, conformant int
	for _, p := range r.Probes {
		if p.Verdict == VerdictSkipped {
			continue
		}
		ran++
		if p.Verdict.Handled() {
			handled++
		}
		if p.Conformant != nil && *p.Conformant {
			conformant++
		}
	}
	sc.ErrorHandling = ratio(handled, ran)
	sc.ErrorConformance = ratio(conformant, ran)
	var pass, decided int
	for _, c := range r.Conformance {
		switch c.Status {
		case CheckPass:
			pass++
			decided++
		case CheckFail:
			decided++
		}
	}
	sc.SpecConformance = ratio(pass, decided)
	return sc
}

func ratio(n, d int) *float64 {
	if d == 0 {
		return nil
	}
	return round(float64(n) / float64(d))
}

// round keeps four decimals so reports diff cleanly across platforms.
func round(f float64) *float64 {
	v := math.Round(f*10000) / 10000
	return &v
}

package provider

// Tally counts one profile's verdicts over a set of tools: a server's, or
// every server's of a study (tallies add up).
type Tally struct {
	Profile string `json:"profile"`
	// Read is the date the profile's sources were read.
	Read string `json:"read"`
	// Tools is how many tools were graded; the other counts split them
	// (Uncertain counts, among those, the verdicts marked uncertain).
	Tools            int `json:"tools"`
	Accepted         int `json:"accepted"`
	AcceptedWithLoss int `json:"accepted_with_loss"`
	Rejected         int `json:"rejected"`
	Uncertain        int `json:"uncertain"`
	// TakenAfterConversion counts the tools the provider takes once the
	// profile's client conversions have repaired what they repair.
	TakenAfterConversion int `json:"taken_after_conversion"`
}

// Add counts one verdict.
func (t *Tally) Add(v Verdict) {
	t.Tools++
	switch v.Outcome {
	case Accepted:
		t.Accepted++
	case AcceptedWithLoss:
		t.AcceptedWithLoss++
	case Rejected:
		t.Rejected++
	}
	if v.Uncertain {
		t.Uncertain++
	}
	if c := v.Converted(); c == Accepted || c == AcceptedWithLoss {
		t.TakenAfterConversion++
	}
}

// Merge adds another tally of the same profile.
func (t *Tally) Merge(o Tally) {
	t.Tools += o.Tools
	t.Accepted += o.Accepted
	t.AcceptedWithLoss += o.AcceptedWithLoss
	t.Rejected += o.Rejected
	t.Uncertain += o.Uncertain
	t.TakenAfterConversion += o.TakenAfterConversion
}

// Taken is how many tools the provider takes, with or without loss.
func (t Tally) Taken() int { return t.Accepted + t.AcceptedWithLoss }

// Tallies counts, for each profile in order, the verdicts of every tool
// (each tool's verdicts in the same profile order, as Assess returns them).
func Tallies(profiles []*Profile, tools [][]Verdict) []Tally {
	out := make([]Tally, len(profiles))
	for i, p := range profiles {
		out[i] = Tally{Profile: p.ID, Read: p.Read}
	}
	for _, vs := range tools {
		for _, v := range vs {
			for i := range out {
				if out[i].Profile == v.Profile {
					out[i].Add(v)
				}
			}
		}
	}
	return out
}

package scan

import "testing"

// A contract the scan's deadline (or a cancellation) cut short is declared
// and never counted vacuous, in a report's scores and in the tally a study
// pools; shares stay exact and Percent rounds them once.
func TestTallyCutNeverVacuous(t *testing.T) {
	half := 0.5
	tools := []ToolReport{
		{Name: "a", OutputContract: ContractVacuous, StoppedBy: ReasonDeadline},
		{Name: "b", OutputContract: ContractVacuous, StoppedBy: ReasonCanceled},
		{Name: "c", OutputContract: ContractVacuous},
		{Name: "d", OutputContract: ContractEnforceable, LeafRate: &half},
		{Name: "e", OutputContract: ContractNone},
	}
	tl := TallyOf(tools, nil, nil)
	if tl.Cut != 2 || tl.Vacuous != 1 || tl.Declared() != 4 || tl.None != 1 || tl.LeafTools != 1 {
		t.Fatalf("%+v", tl)
	}
	sc := tl.Scores()
	if sc.Vacuous != 1 || sc.Declared != 4 {
		t.Fatalf("scores %+v", sc)
	}
	var sum Tally
	sum.Add(tl)
	sum.Add(tl)
	if sum.Cut != 4 || sum.Vacuous != 2 || *sum.Shares().VacuousShare != 0.2 {
		t.Fatalf("sum %+v", sum)
	}
	third := Share(1, 3)
	if *third != 1.0/3 || Percent(third, "–") != "33.3%" || Percent(nil, "–") != "–" {
		t.Fatalf("share %v, %s", *third, Percent(third, "–"))
	}
	// 0.45149: once rounded, 45.1%; its four-decimal score 0.4515 would
	// have said 45.2%.
	f := 0.45149
	if Percent(&f, "") != "45.1%" {
		t.Fatalf("%s", Percent(&f, ""))
	}
}

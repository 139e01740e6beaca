package studies

import (
	"cmp"
	"slices"

	"github.com/mcpdrill/mcpdrill/scan"
)

// Aggregates summarise the rows. Only counted rows (Row.Counted: scanned,
// neither a transport variant nor a previous release) make the weighted
// figures; failed and skipped rows are counted, never dropped. Every count
// is a sum of the rows' tallies (Row.Tally, scan.Tally) and every share is
// computed from those counts by scan.Tally.Shares, exact: the reports round
// once, when they render a figure.
type Aggregates struct {
	Servers int `json:"servers"`
	Scanned int `json:"scanned"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	// Variants counts scanned rows marked variant_of and PreviousReleases
	// those marked previous_of, which the weighted figures leave out
	// (probe tallies keep them); Counted is the rest of the scanned rows.
	Variants         int `json:"variants"`
	PreviousReleases int `json:"previous_releases"`
	Counted          int `json:"counted"`
	// Failures counts failed rows by failure kind, Outcomes every row by
	// outcome (a row without one, by its status).
	Failures map[string]int `json:"failures"`
	Outcomes map[string]int `json:"outcomes"`
	// Transports and Revisions count scanned rows by negotiated transport
	// and protocol revision; SDKs count every row by its declared SDK.
	Transports map[string]int `json:"transports"`
	Revisions  map[string]int `json:"revisions"`
	SDKs       map[string]int `json:"sdks"`

	// ToolWeighted pools the tallies of the counted rows: big servers
	// weigh more.
	ToolWeighted   Figures        `json:"tool_weighted"`
	ServerWeighted ServerWeighted `json:"server_weighted"`
	// Probes counts verdicts per probe name over scanned rows.
	Probes map[string]ProbeTally `json:"probes"`

	// SDKsObserved counts every row by its observed SDK (Row.ObservedSDK:
	// the observed one, else the declared label, else "unknown");
	// SDKObservedRows counts the rows where evidence named an SDK.
	SDKsObserved    map[string]int `json:"sdks_observed"`
	SDKObservedRows int            `json:"sdk_observed_rows"`
	// BySDK and ByFramework pool the counted rows per observed SDK and
	// framework.
	BySDK       map[string]Figures `json:"by_sdk"`
	ByFramework map[string]Figures `json:"by_framework"`
	// SDKDisagreements are the rows whose declared label names neither the
	// observed SDK nor the observed framework, by name.
	SDKDisagreements []SDKDisagreement `json:"sdk_disagreements"`
	// SeedProbes is the seed study's error figure over the counted rows.
	SeedProbes SeedProbes `json:"seed_probes"`
	// VersionDrift summarises the version pairs (rows' version_drift).
	VersionDrift DriftAggregates `json:"version_drift"`
	// Providers is, per provider profile, the share of the counted
	// servers and of their tools it accepts (providers.go).
	Providers []ProviderShare `json:"providers"`
}

// Figures are the pooled tally of a group of servers (all counted rows,
// or one SDK's, one framework's), how many servers it holds, and the
// shares the pooled counts give.
type Figures struct {
	Servers int `json:"servers"`
	scan.Tally
	scan.Shares
}

// pool sums tallies into Figures.
type pool struct {
	servers int
	t       scan.Tally
}

func (p *pool) add(t scan.Tally) {
	p.servers++
	p.t.Add(t)
}

func (p *pool) figures() Figures {
	return Figures{Servers: p.servers, Tally: p.t, Shares: p.t.Shares()}
}

// ServerWeighted gives every counted server the same weight: each share
// is the mean of the servers' own shares over the servers where it is
// defined (scan.MeanShares: the tier shares over servers with at least one
// tool, the error figures over servers with a probe run), and the counts
// say how many servers have a property.
type ServerWeighted struct {
	// Servers is the number of counted servers with at least one tool.
	Servers int `json:"servers"`
	scan.Shares

	WithoutSchemas  int `json:"without_schemas"`
	WithVacuous     int `json:"with_vacuous"`
	WithPartial     int `json:"with_partial"`
	WithEnforceable int `json:"with_enforceable"`
	// ErrorsMeasured counts counted servers with at least one probe run;
	// AllErrorsHandled those whose every probe was refused visibly (the
	// anchor's "handles errors"); AllErrorsConformant those whose every
	// probe got the answer the revision asks for.
	ErrorsMeasured      int `json:"errors_measured"`
	AllErrorsHandled    int `json:"all_errors_handled"`
	AllErrorsConformant int `json:"all_errors_conformant"`
}

// SDKDisagreement is a row whose declared SDK label the evidence
// contradicts.
type SDKDisagreement struct {
	Name      string `json:"name"`
	Declared  string `json:"declared"`
	Observed  string `json:"observed"`
	Framework string `json:"framework,omitempty"`
}

// seedProbeNames are the three error probes the seed study sent (unknown
// method, unknown tool, missing arguments).
var seedProbeNames = []string{"missing_required_args", "unknown_method", "unknown_tool"}

// SeedProbes counts servers on the seed study's three probes: Measured
// those where at least one of them ran, Handled those that refused every
// one that ran visibly (the seed's "handles errors").
type SeedProbes struct {
	Measured int `json:"measured"`
	Handled  int `json:"handled"`
}

// ProbeTally counts one probe's verdicts.
type ProbeTally struct {
	Verdicts   map[string]int `json:"verdicts"`
	Ran        int            `json:"ran"`
	Conformant int            `json:"conformant"`
}

// Tally is the row's scan.Tally: its tools, probes and checks counted as
// the scan counts them.
func (r Row) Tally() scan.Tally { return scan.TallyOf(r.Tools, r.Probes, r.Conformance) }

// Counted says whether the row makes the weighted figures: scanned, and
// neither a transport variant nor a previous release of another row.
func (r Row) Counted() bool {
	return r.Status == StatusScanned && r.VariantOf == "" && r.PreviousOf == ""
}

// Aggregate computes the aggregates of rows; the result depends only on the
// set of rows, never on their order.
func Aggregate(rows []Row) Aggregates {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b Row) int { return cmp.Compare(a.Name, b.Name) })
	a := Aggregates{
		Failures:   map[string]int{},
		Outcomes:   map[string]int{},
		Transports: map[string]int{},
		Revisions:  map[string]int{},
		SDKs:       map[string]int{},
		Probes:     map[string]ProbeTally{},

		SDKsObserved:     map[string]int{},
		BySDK:            map[string]Figures{},
		ByFramework:      map[string]Figures{},
		SDKDisagreements: []SDKDisagreement{},
		VersionDrift:     aggregateDrift(rows),
	}
	var all pool
	var prov providerPool
	sdkPools, fwPools := map[string]*pool{}, map[string]*pool{}
	sw := &a.ServerWeighted
	var shares []scan.Shares
	for _, r := range rows {
		a.Servers++
		a.Outcomes[cmp.Or(r.Outcome, r.Status)]++
		a.SDKs[cmp.Or(r.SDK, "unknown")]++
		a.SDKsObserved[r.ObservedSDK()]++
		if r.SDKObserved != nil && r.SDKObserved.Name != "" {
			a.SDKObservedRows++
		}
		if r.SDKDisagrees() {
			a.SDKDisagreements = append(a.SDKDisagreements, SDKDisagreement{Name: r.Name, Declared: r.SDK, Observed: r.SDKObserved.Name, Framework: r.SDKObserved.Framework})
		}
		switch r.Status {
		case StatusScanned:
			a.Scanned++
		case StatusFailed:
			a.Failed++
			a.Failures[r.Failure]++
			continue
		default:
			a.Skipped++
			continue
		}
		if r.Protocol != nil {
			a.Transports[r.Protocol.Transport]++
			a.Revisions[r.Protocol.Revision]++
		}
		// Probe tallies include transport variants and previous releases;
		// the weighted figures below do not, so that a package served
		// twice counts once.
		for _, p := range r.Probes {
			pt := a.Probes[p.Name]
			if pt.Verdicts == nil {
				pt.Verdicts = map[string]int{}
			}
			pt.Verdicts[string(p.Verdict)]++
			if p.Verdict != scan.VerdictSkipped {
				pt.Ran++
				if p.Conformant != nil && *p.Conformant {
					pt.Conformant++
				}
			}
			a.Probes[p.Name] = pt
		}
		switch {
		case r.VariantOf != "":
			a.Variants++
			continue
		case r.PreviousOf != "":
			a.PreviousReleases++
			continue
		}
		a.Counted++
		t := r.Tally()
		seedRan, seedHandled := 0, 0
		for _, p := range r.Probes {
			if slices.Contains(seedProbeNames, p.Name) && p.Verdict != scan.VerdictSkipped {
				seedRan++
				if p.Verdict.Handled() {
					seedHandled++
				}
			}
		}
		if seedRan > 0 {
			a.SeedProbes.Measured++
			if seedHandled == seedRan {
				a.SeedProbes.Handled++
			}
		}
		all.add(t)
		prov.add(r)
		addTo(sdkPools, r.ObservedSDK(), t)
		addTo(fwPools, r.ObservedFramework(), t)
		shares = append(shares, t.Shares())
		if t.ProbesRun > 0 {
			sw.ErrorsMeasured++
			if t.ProbesHandled == t.ProbesRun {
				sw.AllErrorsHandled++
			}
			if t.ProbesConformant == t.ProbesRun {
				sw.AllErrorsConformant++
			}
		}
		if t.Tools == 0 {
			continue
		}
		sw.Servers++
		if t.None == t.Tools {
			sw.WithoutSchemas++
		}
		if t.Vacuous > 0 {
			sw.WithVacuous++
		}
		if t.Partial > 0 {
			sw.WithPartial++
		}
		if t.Enforceable > 0 {
			sw.WithEnforceable++
		}
	}
	a.ToolWeighted = all.figures()
	sw.Shares = scan.MeanShares(shares)
	for k, p := range sdkPools {
		a.BySDK[k] = p.figures()
	}
	for k, p := range fwPools {
		a.ByFramework[k] = p.figures()
	}
	a.Providers = prov.figures()
	return a
}

func addTo(pools map[string]*pool, key string, t scan.Tally) {
	if pools[key] == nil {
		pools[key] = &pool{}
	}
	pools[key].add(t)
}

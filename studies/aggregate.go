package studies

import (
	"cmp"
	"math"
	"slices"

	"github.com/mcpdrill/mcpdrill/scan"
)

// Aggregates summarise the rows. Only scanned rows count towards the
// figures; failed and skipped rows are counted, never dropped.
type Aggregates struct {
	Servers int `json:"servers"`
	Scanned int `json:"scanned"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	// Variants counts scanned rows marked variant_of, which the tool- and
	// server-weighted figures leave out (probe tallies keep them).
	Variants int            `json:"variants"`
	Failures map[string]int `json:"failures"`
	// Transports and Revisions count scanned rows by negotiated transport
	// and protocol revision; SDKs count every row by its declared SDK.
	Transports map[string]int `json:"transports"`
	Revisions  map[string]int `json:"revisions"`
	SDKs       map[string]int `json:"sdks"`

	ToolWeighted   ToolWeighted   `json:"tool_weighted"`
	ServerWeighted ServerWeighted `json:"server_weighted"`
	// Probes counts verdicts per probe name over scanned rows.
	Probes map[string]ProbeTally `json:"probes"`

	// PreviousReleases counts scanned rows marked previous_of, which the
	// weighted figures leave out as they leave out variants.
	PreviousReleases int `json:"previous_releases"`
	// SDKsObserved counts every row by its observed SDK (Row.ObservedSDK:
	// the observed one, else the declared label, else "unknown");
	// SDKObservedRows counts the rows where evidence named an SDK.
	SDKsObserved    map[string]int `json:"sdks_observed"`
	SDKObservedRows int            `json:"sdk_observed_rows"`
	// BySDK and ByFramework break the output-contract tiers down per
	// observed SDK and framework, over the rows the weighted figures count.
	BySDK       map[string]GroupFigures `json:"by_sdk"`
	ByFramework map[string]GroupFigures `json:"by_framework"`
	// SDKDisagreements are the rows whose declared label names neither the
	// observed SDK nor the observed framework, by name.
	SDKDisagreements []SDKDisagreement `json:"sdk_disagreements"`
	// SeedProbes is the seed study's error figure over the rows the
	// weighted figures count.
	SeedProbes SeedProbes `json:"seed_probes"`
	// VersionDrift summarises the version pairs (rows' version_drift).
	VersionDrift DriftAggregates `json:"version_drift"`
	// Providers is, per provider profile, the share of the counted
	// servers and of their tools it accepts (providers.go).
	Providers []ProviderShare `json:"providers"`
}

// GroupFigures are the tool-weighted figures of one group of servers (an
// SDK, a framework) and how many servers it holds.
type GroupFigures struct {
	Servers int `json:"servers"`
	ToolWeighted
}

// toolPool accumulates the tool-weighted figures of rows.
type toolPool struct {
	servers int
	tw      ToolWeighted
	leaf    mean
}

func (p *toolPool) add(r Row) {
	none, vac, part, enf, inv := tiers(r)
	for _, t := range r.Tools {
		if t.Wrapped {
			p.tw.Wrapped++
		}
		p.leaf.add(t.LeafRate)
	}
	p.servers++
	p.tw.Tools += len(r.Tools)
	p.tw.None += none
	p.tw.Vacuous += vac
	p.tw.Partial += part
	p.tw.Enforceable += enf
	p.tw.Invalid += inv
}

func addToGroup(pools map[string]*toolPool, key string, r Row) {
	if pools[key] == nil {
		pools[key] = &toolPool{}
	}
	pools[key].add(r)
}

// figures computes the shares of the pooled counts.
func (p *toolPool) figures() ToolWeighted {
	tw := p.tw
	var v [numShares]*float64
	for i, q := range contractRatios(tw.Tools, tw.None, tw.Vacuous, tw.Partial, tw.Enforceable, tw.Invalid) {
		v[i] = share(q[0], q[1])
	}
	setShares(&tw.ContractShares, &tw.RejectShares, v, p.leaf.value())
	return tw
}

// numShares is how many contract shares there are besides the leaf rate.
const numShares = 8

// contractRatios defines the contract shares, for tools counted by tier:
// each share's numerator and denominator, in the order setShares stores
// them. The tool-weighted figures divide pooled counts, the
// server-weighted ones average each server's ratios.
func contractRatios(tools, none, vac, part, enf, inv int) [numShares][2]int {
	declared := enf + part + vac + inv
	return [numShares][2]int{
		{none, tools}, {vac, tools}, {enf, tools}, {inv, tools}, {enf, declared},
		{part, tools}, {enf + part, tools}, {enf + part, declared},
	}
}

// setShares stores the shares v, in contractRatios' order, and the leaf
// rate.
func setShares(c *ContractShares, r *RejectShares, v [numShares]*float64, leaf *float64) {
	c.NoneShare, c.VacuousShare, c.EnforceableShare, c.InvalidShare, c.EnforceableOfDeclared = v[0], v[1], v[2], v[3], v[4]
	r.PartialShare, r.RejectsAnyShare, r.RejectsAnyOfDeclared = v[5], v[6], v[7]
	c.LeafRate = leaf
}

// SDKDisagreement is a row whose declared SDK label the evidence
// contradicts.
type SDKDisagreement struct {
	Name      string `json:"name"`
	Declared  string `json:"declared"`
	Observed  string `json:"observed"`
	Framework string `json:"framework,omitempty"`
}

// SeedProbeNames are the three error probes the seed study sent (unknown
// method, unknown tool, missing arguments).
var SeedProbeNames = []string{"missing_required_args", "unknown_method", "unknown_tool"}

// SeedProbes counts servers on the seed study's three probes: Measured
// those where at least one of them ran, Handled those that refused every
// one that ran visibly (the seed's "handles errors").
type SeedProbes struct {
	Measured int `json:"measured"`
	Handled  int `json:"handled"`
}

// ToolWeighted pools every tool of every scanned server: big servers weigh
// more. The shares divide by Tools.
type ToolWeighted struct {
	Tools       int `json:"tools"`
	None        int `json:"none"`
	Vacuous     int `json:"vacuous"`
	Enforceable int `json:"enforceable"`
	Invalid     int `json:"invalid"`
	Wrapped     int `json:"wrapped"`
	ContractShares
	// Partial counts the tools whose schema rejects the corrupted payload
	// of some sampled shapes, not all.
	Partial int `json:"partial"`
	RejectShares
}

// ContractShares are the shares of tools by output contract, as a fraction
// of all tools except EnforceableOfDeclared, whose denominator is the
// declared (vacuous + partial + enforceable + invalid) tools. ToolWeighted
// pools them over all tools; ServerWeighted averages each server's.
type ContractShares struct {
	NoneShare             *float64 `json:"none_share"`
	VacuousShare          *float64 `json:"vacuous_share"`
	EnforceableShare      *float64 `json:"enforceable_share"`
	InvalidShare          *float64 `json:"invalid_share"`
	EnforceableOfDeclared *float64 `json:"enforceable_of_declared"`
	// LeafRate is the mean leaf rate over tools with an assessed schema.
	LeafRate *float64 `json:"leaf_rate"`
}

// RejectShares count partial contracts: PartialShare is partial / tools,
// RejectsAnyShare (enforceable + partial) / tools and RejectsAnyOfDeclared
// (enforceable + partial) / declared. "Rejects at least one" is the figure
// comparable with a single-payload method (the anchor study's enforceable
// share).
type RejectShares struct {
	PartialShare         *float64 `json:"partial_share"`
	RejectsAnyShare      *float64 `json:"rejects_any_share"`
	RejectsAnyOfDeclared *float64 `json:"rejects_any_of_declared"`
}

// ServerWeighted gives every scanned server with at least one tool the same
// weight: each figure is a mean of per-server ratios over the servers where
// the ratio is defined, and the counts say how many servers have a property.
type ServerWeighted struct {
	// Servers is the number of scanned servers with at least one tool.
	Servers int `json:"servers"`
	ContractShares
	ErrorHandling    *float64 `json:"error_handling"`
	ErrorConformance *float64 `json:"error_conformance"`
	SpecConformance  *float64 `json:"spec_conformance"`
	RejectShares

	WithoutSchemas  int `json:"without_schemas"`
	WithVacuous     int `json:"with_vacuous"`
	WithPartial     int `json:"with_partial"`
	WithEnforceable int `json:"with_enforceable"`
	// ErrorsMeasured counts scanned servers with at least one probe run;
	// AllErrorsHandled those whose every probe was refused visibly (the
	// anchor's "handles errors"); AllErrorsConformant those whose every
	// probe got the answer the revision asks for.
	ErrorsMeasured      int `json:"errors_measured"`
	AllErrorsHandled    int `json:"all_errors_handled"`
	AllErrorsConformant int `json:"all_errors_conformant"`
}

// ProbeTally counts one probe's verdicts.
type ProbeTally struct {
	Verdicts   map[string]int `json:"verdicts"`
	Ran        int            `json:"ran"`
	Conformant int            `json:"conformant"`
}

type mean struct {
	sum float64
	n   int
}

func (m *mean) add(p *float64) {
	if p != nil {
		m.sum += *p
		m.n++
	}
}

func (m *mean) addRatio(n, d int) {
	if d > 0 {
		m.sum += float64(n) / float64(d)
		m.n++
	}
}

func (m mean) value() *float64 {
	if m.n == 0 {
		return nil
	}
	return round4(m.sum / float64(m.n))
}

func round4(f float64) *float64 {
	v := math.Round(f*10000) / 10000
	return &v
}

func share(n, d int) *float64 {
	if d == 0 {
		return nil
	}
	return round4(float64(n) / float64(d))
}

// Aggregate computes the aggregates of rows; the result depends only on the
// set of rows, never on their order.
func Aggregate(rows []Row) Aggregates {
	a := Aggregates{
		Failures:   map[string]int{},
		Transports: map[string]int{},
		Revisions:  map[string]int{},
		SDKs:       map[string]int{},
		Probes:     map[string]ProbeTally{},

		SDKsObserved:     map[string]int{},
		BySDK:            map[string]GroupFigures{},
		ByFramework:      map[string]GroupFigures{},
		SDKDisagreements: []SDKDisagreement{},
		VersionDrift:     aggregateDrift(rows),
	}
	var pool toolPool
	var prov providerPool
	sdkPools, fwPools := map[string]*toolPool{}, map[string]*toolPool{}
	sw := &a.ServerWeighted
	var swShares [numShares]mean
	var swLeaf, swErr, swConf, swSpec mean
	for _, r := range rows {
		a.Servers++
		sdk := r.SDK
		if sdk == "" {
			sdk = "unknown"
		}
		a.SDKs[sdk]++
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
		// Probe tallies include transport variants; the weighted figures
		// below do not, so that a package served twice counts once.
		ran, handled, conformant := 0, 0, 0
		for _, p := range r.Probes {
			t := a.Probes[p.Name]
			if t.Verdicts == nil {
				t.Verdicts = map[string]int{}
			}
			t.Verdicts[string(p.Verdict)]++
			if p.Verdict != scan.VerdictSkipped {
				t.Ran++
				ran++
				if p.Conformant != nil && *p.Conformant {
					t.Conformant++
					conformant++
				}
				if p.Verdict.Handled() {
					handled++
				}
			}
			a.Probes[p.Name] = t
		}
		if r.VariantOf != "" {
			a.Variants++
			continue
		}
		if r.PreviousOf != "" {
			a.PreviousReleases++
			continue
		}
		seedRan, seedHandled := 0, 0
		for _, p := range r.Probes {
			if slices.Contains(SeedProbeNames, p.Name) && p.Verdict != scan.VerdictSkipped {
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
		pool.add(r)
		prov.add(r)
		addToGroup(sdkPools, r.ObservedSDK(), r)
		addToGroup(fwPools, r.ObservedFramework(), r)
		none, vac, part, enf, inv := tiers(r)
		n := len(r.Tools)

		if ran > 0 {
			sw.ErrorsMeasured++
			if handled == ran {
				sw.AllErrorsHandled++
			}
			if conformant == ran {
				sw.AllErrorsConformant++
			}
		}
		if r.Scores != nil {
			swErr.add(r.Scores.ErrorHandling)
			swConf.add(r.Scores.ErrorConformance)
			swSpec.add(r.Scores.SpecConformance)
		}
		if n == 0 {
			continue
		}
		sw.Servers++
		for i, q := range contractRatios(n, none, vac, part, enf, inv) {
			swShares[i].addRatio(q[0], q[1])
		}
		if r.Scores != nil {
			swLeaf.add(r.Scores.LeafRate)
		}
		if none == n {
			sw.WithoutSchemas++
		}
		if vac > 0 {
			sw.WithVacuous++
		}
		if part > 0 {
			sw.WithPartial++
		}
		if enf > 0 {
			sw.WithEnforceable++
		}
	}
	a.ToolWeighted = pool.figures()
	for k, p := range sdkPools {
		a.BySDK[k] = GroupFigures{Servers: p.servers, ToolWeighted: p.figures()}
	}
	for k, p := range fwPools {
		a.ByFramework[k] = GroupFigures{Servers: p.servers, ToolWeighted: p.figures()}
	}
	var v [numShares]*float64
	for i := range swShares {
		v[i] = swShares[i].value()
	}
	setShares(&sw.ContractShares, &sw.RejectShares, v, swLeaf.value())
	sw.ErrorHandling = swErr.value()
	sw.ErrorConformance = swConf.value()
	sw.SpecConformance = swSpec.value()
	slices.SortFunc(a.SDKDisagreements, func(x, y SDKDisagreement) int { return cmp.Compare(x.Name, y.Name) })
	a.Providers = prov.figures()
	return a
}

package mcp

import (
	"fmt"
	"sort"
	"sync"
)

// maxObsPerKind bounds the distinct observations kept per kind, so a peer
// cannot grow the client's memory by inventing method names.
const maxObsPerKind = 32

type obsKey struct{ kind, detail string }

// observer collects Observations. It is safe for concurrent use.
type observer struct {
	mu      sync.Mutex
	m       map[obsKey]int
	perKind map[string]int
	first   map[string]string // for aggregated kinds: kind -> first detail
}

func newObserver() *observer {
	return &observer{m: map[obsKey]int{}, perKind: map[string]int{}, first: map[string]string{}}
}

// note records one occurrence of (kind, detail); distinct details per kind
// are capped, the overflow is counted under detail "(other)".
func (o *observer) note(kind, detail string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := obsKey{kind, detail}
	if _, ok := o.m[k]; !ok {
		if o.perKind[kind] >= maxObsPerKind {
			k.detail = "(other)"
		} else {
			o.perKind[kind]++
		}
	}
	o.m[k]++
}

// count records one occurrence of an aggregated kind: one entry per kind
// whose detail is the first occurrence's.
func (o *observer) count(kind, detail string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	d, ok := o.first[kind]
	if !ok {
		d = detail
		o.first[kind] = d
	}
	o.m[obsKey{kind, d}]++
}

func (o *observer) list() []Observation {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]Observation, 0, len(o.m))
	for k, n := range o.m {
		out = append(out, Observation{Kind: k.kind, Detail: k.detail, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Detail < out[j].Detail
	})
	return out
}

// shortText quotes at most n bytes of a peer-supplied string for a Detail.
func shortText(s string, n int) string {
	if len(s) > n {
		return fmt.Sprintf("%q…", s[:n])
	}
	return fmt.Sprintf("%q", s)
}

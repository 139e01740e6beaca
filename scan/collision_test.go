package scan

import (
	"strings"
	"testing"
)

func TestAddToolCollisions(t *testing.T) {
	rep := func(established bool, tools ...string) *Report {
		r := &Report{Established: established}
		for _, n := range tools {
			r.Tools = append(r.Tools, ToolReport{Name: n})
		}
		return r
	}
	a, b, c, down := rep(true, "search", "echo", "echo"), rep(true, "search", "fetch"), rep(true, "search", "echo"), rep(false, "fetch")
	AddToolCollisions([]ConfigServer{{"a", a}, {"b", b}, {"c", c}, {"down", down}})
	got := func(r *Report) []string {
		var out []string
		for _, f := range r.Findings {
			if f.Rule == RuleToolCollision {
				out = append(out, f.Tool+": "+f.Message[strings.Index(f.Message, "server"):strings.Index(f.Message, " of this")])
			}
		}
		return out
	}
	want := map[string]string{
		"a":    `[echo: server "c" search: server "b", "c"]`,
		"b":    `[search: server "a", "c"]`,
		"c":    `[echo: server "a" search: server "a", "b"]`,
		"down": `[]`,
	}
	for name, r := range map[string]*Report{"a": a, "b": b, "c": c, "down": down} {
		if s := strings.Join([]string{"[", strings.Join(got(r), " "), "]"}, ""); s != want[name] {
			t.Errorf("%s: %s, want %s", name, s, want[name])
		}
	}
}

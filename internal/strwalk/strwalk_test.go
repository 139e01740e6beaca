package strwalk

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

type kind string

type inner struct {
	Name   string
	Kinds  []kind
	hidden string
}

type doc struct {
	Title  string
	Ptr    *inner
	Items  []inner
	Arr    [2]string
	ByName map[string]inner
	Counts map[string]int
	Any    any
	Raw    json.RawMessage
	Self   *doc
}

func TestMap(t *testing.T) {
	d := &doc{
		Title:  "a",
		Ptr:    &inner{Name: "b", Kinds: []kind{"c"}, hidden: "h"},
		Items:  []inner{{Name: "d"}},
		Arr:    [2]string{"e", "f"},
		ByName: map[string]inner{"key": {Name: "g"}},
		Counts: map[string]int{"key": 1},
		Any:    map[string]any{"x": []any{"i", 2.0}},
		Raw:    json.RawMessage(`"raw"`),
	}
	d.Self = d
	Map(d, strings.ToUpper)
	want := &doc{
		Title:  "A",
		Ptr:    &inner{Name: "B", Kinds: []kind{"C"}, hidden: "h"},
		Items:  []inner{{Name: "D"}},
		Arr:    [2]string{"E", "F"},
		ByName: map[string]inner{"key": {Name: "G"}},
		Counts: map[string]int{"key": 1},
		Any:    map[string]any{"x": []any{"I", 2.0}},
		Raw:    json.RawMessage(`"raw"`),
	}
	want.Self = want
	if !reflect.DeepEqual(d, want) {
		t.Errorf("got %+v\nwant %+v", d, want)
	}
	Map(nil, strings.ToUpper) // no panic
	var np *doc
	Map(np, strings.ToUpper)
}

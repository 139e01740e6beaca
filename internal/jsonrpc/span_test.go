package jsonrpc

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestMemberSpan(t *testing.T) {
	for _, tc := range []struct {
		in        string
		path      []string
		want      string // the value; "" when not found
		ambiguous bool
	}{
		{`{"params":{"_meta":{"progressToken":7}}}`, []string{"params", "_meta", "progressToken"}, `7`, false},
		{` { "params" : { "_meta" : { "progressToken" : "a\"b" } , "x":[{"progressToken":1}] } }`, []string{"params", "_meta", "progressToken"}, `"a\"b"`, false},
		{`{"params":{"_meta":{"progressToken":1,"progressToken":2}}}`, []string{"params", "_meta", "progressToken"}, `2`, true},
		{`{"params":{"_meta":{"ProgressToken":1,"progressToken":2}}}`, []string{"params", "_meta", "progressToken"}, `2`, true},
		{`{"params":{"_meta":{"progressToken":2}},"Params":{}}`, []string{"params", "_meta", "progressToken"}, `2`, true},
		{`{"params":{"_META":{"progressToken":2}}}`, []string{"params", "_meta", "progressToken"}, ``, false},
		{`{"params":{"_meta":[1]}}`, []string{"params", "_meta", "progressToken"}, ``, false},
		{`{"params":{"name":"x","name":"y"}}`, []string{"params", "name"}, `"y"`, true},
		{`{"id":1}`, nil, `{"id":1}`, false},
		{`{"params":`, []string{"params"}, ``, false},
		{`[{"id":1}]`, []string{"id"}, ``, false},
	} {
		sp, ok := MemberSpan([]byte(tc.in), tc.path...)
		got := ""
		if ok {
			got = tc.in[sp.Start:sp.End]
		}
		if got != tc.want || sp.Ambiguous != tc.ambiguous {
			t.Errorf("MemberSpan(%s, %q) = %q (ambiguous %v), want %q (ambiguous %v)", tc.in, tc.path, got, sp.Ambiguous, tc.want, tc.ambiguous)
		}
	}
}

// FuzzMemberSpan: on any input MemberSpan stays in bounds; on valid JSON
// whose path is unambiguous it finds what encoding/json finds there.
func FuzzMemberSpan(f *testing.F) {
	f.Add([]byte(`{"params":{"_meta":{"progressToken":"t"}}}`), "params/_meta/progressToken")
	f.Add([]byte(`{"params":{"name":"a","Name":"b"}}`), "params/name")
	f.Add([]byte(`{"id":[1,{"id":2}],"id":3}`), "id")
	f.Fuzz(func(t *testing.T, in []byte, p string) {
		path := strings.Split(p, "/")
		sp, ok := MemberSpan(in, path...)
		if !ok {
			return
		}
		if sp.Start < 0 || sp.End > len(in) || sp.Start > sp.End {
			t.Fatalf("span %+v out of %d bytes", sp, len(in))
		}
		var whole any
		if sp.Ambiguous || json.Unmarshal(in, &whole) != nil {
			return
		}
		for _, name := range path {
			obj, isObj := whole.(map[string]any)
			if !isObj {
				t.Fatalf("found a member of a non-object in %s", in)
			}
			whole = obj[name]
		}
		var got any
		if err := json.Unmarshal(in[sp.Start:sp.End], &got); err != nil || !reflect.DeepEqual(got, whole) {
			t.Fatalf("MemberSpan(%s, %q) = %s, encoding/json reads %v", in, path, in[sp.Start:sp.End], whole)
		}
	})
}

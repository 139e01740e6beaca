package jsonrpc

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// nest wraps leaf in n arrays, or in n objects {"k":…} when obj.
func nest(n int, leaf string, obj bool) string {
	if obj {
		return strings.Repeat(`{"k":`, n) + leaf + strings.Repeat(`}`, n)
	}
	return strings.Repeat(`[`, n) + leaf + strings.Repeat(`]`, n)
}

func TestValid(t *testing.T) {
	tests := []string{
		``, ` `, `{}`, `[]`, ` {"a" : [1, -2.5e+3, true, false, null, "x\u00e9\"\\/\b\f\n\r\t"]} `,
		`{"a":1,}`, `[1,]`, `[,1]`, `{"a"}`, `{"a":}`, `{:1}`, `{1:1}`, `[1 2]`, `{"a":1 "b":2}`,
		`01`, `-`, `-0`, `1.`, `.5`, `1e`, `1e+`, `1E-7`, `+1`, `0x10`, `NaN`, `tru`, `truex`, `nul`,
		`"\x"`, `"\u12"`, `"\u12G4"`, "\"a\tb\"", "\"\xff\xfe\"", `"abc`, `[1`, `{"a":1`, `{"a":[}`,
		`[}`, `{]`, `[1]]`, `{} {}`, `""`, `"`, `[[[]]]`, `[{"a":[{}]}]`, "\t\r\n[]\n",
	}
	for _, in := range tests {
		if got, want := Valid([]byte(in)), json.Valid([]byte(in)); got != want {
			t.Errorf("Valid(%q) = %v, json.Valid = %v", in, got, want)
		}
	}
}

// TestValidDeep: past encoding/json's 10,000 levels, Valid still walks the
// document (iteratively: a million levels do not grow the goroutine stack
// past its limit) and still finds a fault at the bottom.
func TestValidDeep(t *testing.T) {
	for _, obj := range []bool{false, true} {
		deep := []byte(nest(1_000_000, `"leaf"`, obj))
		if json.Valid(deep) {
			t.Fatal("encoding/json took a million levels; the test is moot")
		}
		if !Valid(deep) {
			t.Errorf("Valid refused a valid million-deep document (obj=%v)", obj)
		}
		broken := []byte(nest(20_000, `"leaf`, obj))
		if Valid(broken) {
			t.Errorf("Valid took a deep document with an unterminated string (obj=%v)", obj)
		}
		unbalanced := deep[:len(deep)-1]
		if Valid(unbalanced) {
			t.Errorf("Valid took a deep document missing its last bracket (obj=%v)", obj)
		}
	}
}

// randJSON builds a random valid JSON value, up to depth d.
func randJSON(r *rand.Rand, d int) string {
	k := r.IntN(8)
	if d <= 0 {
		k %= 4
	}
	switch k {
	case 0:
		return []string{`0`, `-1`, `12.5e-3`, `1E9`}[r.IntN(4)]
	case 1:
		return []string{`""`, `"a\"b"`, `"\u00e9"`, `"é"`, `"\n"`}[r.IntN(5)]
	case 2:
		return []string{`true`, `false`}[r.IntN(2)]
	case 3:
		return `null`
	case 4, 5:
		n := r.IntN(4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = randJSON(r, d-1)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	default:
		n := r.IntN(4)
		parts := make([]string, n)
		for i := range parts {
			key := []string{`"a"`, `"b"`, `"A"`, `"id"`, `"r\u00e9"`}[r.IntN(5)]
			parts[i] = key + " : " + randJSON(r, d-1)
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
}

// TestSplitMatchesDecoder: the members and elements SplitObject and
// SplitArray return are those encoding/json's token stream finds, in order,
// with the same bytes; and every mutation of a valid document is judged by
// Valid as json.Valid judges it.
func TestSplitMatchesDecoder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		doc := []byte(randJSON(r, 4))
		checkSplit(t, doc)
		mut := bytes.Clone(doc)
		if len(mut) > 0 {
			switch r.IntN(3) {
			case 0:
				mut = mut[:r.IntN(len(mut))]
			case 1:
				mut[r.IntN(len(mut))] = `{}[],:"\ 0x`[r.IntN(11)]
			default:
				i := r.IntN(len(mut))
				mut = append(mut[:i], mut[i+1:]...)
			}
		}
		if got, want := Valid(mut), json.Valid(mut); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid = %v", mut, got, want)
		}
	}
}

func checkSplit(t *testing.T, doc []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	switch tok {
	case json.Delim('{'):
		ms, err := splitObject(doc)
		if err != nil {
			t.Fatalf("splitObject(%s): %v", doc, err)
		}
		var want []member
		for dec.More() {
			k, _ := dec.Token()
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			want = append(want, member{key: k.(string), value: v})
		}
		if !reflect.DeepEqual(ms, want) {
			t.Fatalf("splitObject(%s) = %q, want %q", doc, ms, want)
		}
	case json.Delim('['):
		es, err := SplitArray(doc)
		if err != nil {
			t.Fatalf("SplitArray(%s): %v", doc, err)
		}
		want := []json.RawMessage{}
		for dec.More() {
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			want = append(want, v)
		}
		if !reflect.DeepEqual(es, want) {
			t.Fatalf("SplitArray(%s) = %q, want %q", doc, es, want)
		}
	default:
		if _, err := splitObject(doc); err == nil {
			t.Fatalf("SplitObject took a non-object %s", doc)
		}
	}
}

// TestDecodeMembersMatchesUnmarshal: member by member decoding gives what
// json.Unmarshal gives, for a message, a struct with an array of raw
// elements and a map of raw members, so the deep fallback changes nothing
// but the nesting limit.
func TestDecodeMembersMatchesUnmarshal(t *testing.T) {
	type page struct {
		Tools  []json.RawMessage `json:"tools"`
		Cursor *string           `json:"nextCursor,omitempty"`
		Skip   string            `json:"-"`
		N      int
	}
	docs := []string{
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m","data":[1]}}`,
		`{"JSONRPC":"2.0","Id":2,"Result":null,"extra":{"deep":[1]}}`,
		`{"jsonrpc":"1.0","id":3,"id":4,"method":"a","method":"b"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":5,\"paraM\u017f\":{},\"metho\u0044\":\"x\"}", // ſ folds to s
		"{\"jsonrpc\":\"2.0\",\"id\":5,\"param\xc5\xbf\":[1]}",                    // raw UTF-8 ſ
		`{"method":"notifications/x"}`,
		`{}`,
		`{"tools":[{"a":1}, 2, null],"nextCursor":"c","n":3,"-":"x","Skip":"y"}`,
		`{"tools":null,"NEXTCURSOR":"d","N":"wrong type","tools":[]}`,
	}
	for _, d := range docs {
		ms, err := splitObject([]byte(d))
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		for _, fresh := range []func() any{
			func() any { return new(Message) },
			func() any { return new(page) },
			func() any { return new(map[string]json.RawMessage) },
		} {
			want, got := fresh(), fresh()
			wantErr := json.Unmarshal([]byte(d), want)
			gotErr := decodeMembers(ms, got)
			if (wantErr == nil) != (gotErr == nil) || !reflect.DeepEqual(got, want) {
				t.Errorf("%s into %T:\n got %+v (%v)\nwant %+v (%v)", d, got, got, gotErr, want, wantErr)
			}
		}
	}
}

// TestDecodeDeep: a frame whose result is nested past encoding/json's limit
// still yields its id and kind, with the result kept raw; a deep error
// object, or a deep frame that is not valid JSON, is still refused.
func TestDecodeDeep(t *testing.T) {
	deep := nest(12_000, `1`, true)
	f := `{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"a"},{"name":"deep","outputSchema":` + deep + `}]}}`
	m, err := Decode([]byte(f))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if string(m.ID) != "7" || m.Kind() != KindResponse || m.JSONRPC != "2.0" || !bytes.HasSuffix(m.Result, []byte(deep+`}]}`)) {
		t.Fatalf("deep frame decoded as id %s kind %v version %q", m.ID, m.Kind(), m.JSONRPC)
	}
	for _, bad := range []string{
		`{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m","data":` + deep + `}}`,
		`{"jsonrpc":"2.0","id":7,"result":` + deep[:len(deep)-1] + `}`,
		`{"jsonrpc":"2.0","id":7,"result":` + deep + `} x`,
	} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("Decode took %.40s…%s", bad, bad[len(bad)-20:])
		}
	}
}

// TestUnmarshal: past encoding/json's limit, Unmarshal reads the shallow
// members and keeps the deep one raw; type errors and documents that are not
// objects still fail.
func TestUnmarshal(t *testing.T) {
	var v struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"inputSchema"`
		N      int             `json:"n"`
	}
	in := `{"Name":"x","inputSchema":` + nest(11_000, `{}`, false) + `,"n":5,"other":{}}`
	if err := Unmarshal([]byte(in), &v); err != nil {
		t.Fatal(err)
	}
	if v.Name != "x" || v.N != 5 || len(v.Schema) != 22_002 {
		t.Fatalf("got name %q n %d schema %d bytes", v.Name, v.N, len(v.Schema))
	}
	deep := nest(11_000, `0`, false)
	for _, bad := range []string{
		`{"n":"five"}`,
		`{"n":"five","x":` + deep + `}`,
		`{"name":` + deep + `}`,
		`[1]`,
		`[` + deep + `]`,
	} {
		if err := Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("Unmarshal took %.30s", bad)
		}
	}
	var n int
	if err := Unmarshal([]byte(`{"x":`+deep+`}`), &n); err == nil {
		t.Error("a deep object was decoded into an int")
	}
}

// FuzzValid: Valid agrees with json.Valid wherever encoding/json's nesting
// limit is not reached, and the split of a valid object or array is the
// decoder's.
func FuzzValid(f *testing.F) {
	for _, s := range []string{`{}`, `[1,2]`, `{"a":[{"b":null}]}`, `"x\u00e9"`, `-1.5e3`, `{"a":1,}`, nest(50, `0`, true)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if bytes.Count(b, []byte("["))+bytes.Count(b, []byte("{")) > 10_000 {
			t.Skip()
		}
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid = %v", b, got, want)
		}
		if Valid(b) {
			checkSplit(t, b)
		}
	})
}

// BenchmarkValid: Valid against json.Valid on a 4 MiB call.
func BenchmarkValid(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"blob","arguments":{"pad":"` +
		strings.Repeat("r", 4<<20) + `","n":[1,-2.5e3,true,{"a":null}]}}}`)
	for _, v := range []struct {
		name  string
		valid func([]byte) bool
	}{{"jsonrpc", Valid}, {"encoding-json", json.Valid}} {
		valid := v.valid
		b.Run(v.name, func(b *testing.B) {
			b.SetBytes(int64(len(frame)))
			for range b.N {
				if !valid(frame) {
					b.Fatal("not valid")
				}
			}
		})
	}
}

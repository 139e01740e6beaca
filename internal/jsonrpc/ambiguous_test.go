package jsonrpc

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// ambiguousFrames are frames whose method or tool name a receiving parser
// could read differently from another one, and frames that only look so.
var ambiguousFrames = []struct {
	name, in  string
	method    string // what the peek reads (the last of equal names)
	tool      string
	ambiguous bool
}{
	{"plain call", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`, "tools/call", "echo", false},
	{"duplicate name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"hidden_delete_all"}}`, "tools/call", "hidden_delete_all", true},
	{"case-variant name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","Name":"hidden_delete_all"}}`, "tools/call", "echo", true},
	{"only a case-variant name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"NAME":"hidden_delete_all"}}`, "tools/call", "", true},
	{"long-s params", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"},\"param\u017f\":{\"name\":\"evil\"}}", "tools/call", "echo", true},
	{"duplicate method", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call","params":{"name":"echo"}}`, "tools/call", "echo", true},
	{"case-variant method", `{"jsonrpc":"2.0","id":1,"method":"ping","Method":"tools/call","params":{"name":"x"}}`, "ping", "", true},
	{"duplicate params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"},"params":{"name":"evil"}}`, "tools/call", "evil", true},
	{"duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}`, "tools/list", "", true},
	{"escaped duplicate name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","n\u0061me":"evil"}}`, "tools/call", "evil", true},
	{"arguments may repeat names", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"name":"a","Name":"b"}}}`, "tools/call", "echo", false},
	{"unknown members may differ in case", `{"jsonrpc":"2.0","id":1,"method":"tools/list","x":1,"X":2}`, "tools/list", "", false},
}

func TestPeekAmbiguous(t *testing.T) {
	for _, tc := range ambiguousFrames {
		t.Run(tc.name, func(t *testing.T) {
			p, err := PeekFrameStrict([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if p.Method != tc.method || p.Tool != tc.tool || p.Ambiguous != tc.ambiguous {
				t.Errorf("method %q tool %q ambiguous %v; want %q %q %v", p.Method, p.Tool, p.Ambiguous, tc.method, tc.tool, tc.ambiguous)
			}
		})
	}
}

// TestPeekAgreesWithParsers checks the duplicate-name policy against the
// parsers servers use: wherever the peek calls a frame unambiguous, Go's
// encoding/json, JavaScript's JSON.parse and Python's json read the same
// method and tool name from it as the peek; and every ambiguous frame is
// one that at least one of them reads differently from the peek, or that
// has a repeated name (read as the last one everywhere, but refused all
// the same: a parser that keeps the first would differ).
func TestPeekAgreesWithParsers(t *testing.T) {
	parsers := map[string]func(string) (read, error){
		"go": func(in string) (read, error) {
			var m struct {
				Method string
				Params struct{ Name string }
			}
			err := json.Unmarshal([]byte(in), &m)
			return read{m.Method, m.Params.Name}, err
		},
	}
	if node, err := exec.LookPath("node"); err == nil {
		parsers["js"] = external(node, "-e", `let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const m=JSON.parse(s);process.stdout.write(JSON.stringify({Method:m.method??"",Tool:(m.params&&typeof m.params.name==="string")?m.params.name:""}))})`)
	} else {
		t.Log("node not found: JavaScript's reading not compared")
	}
	if py, err := exec.LookPath("python3"); err == nil {
		parsers["python"] = external(py, "-c", `import json,sys;m=json.load(sys.stdin);p=m.get("params") or {};n=p.get("name") if isinstance(p,dict) else "";print(json.dumps({"Method":m.get("method",""),"Tool":n if isinstance(n,str) else ""}))`)
	} else {
		t.Log("python3 not found: Python's reading not compared")
	}
	for _, tc := range ambiguousFrames {
		p, err := PeekFrameStrict([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		differs := false
		for name, parse := range parsers {
			got, err := parse(tc.in)
			if err != nil {
				t.Fatalf("%s: %s: %v", tc.name, name, err)
			}
			if got != (read{p.Method, p.Tool}) {
				differs = true
				if !p.Ambiguous {
					t.Errorf("%s: %s reads %+v, the peek %q %q and calls it unambiguous", tc.name, name, got, p.Method, p.Tool)
				}
			}
		}
		if p.Ambiguous && !differs && !strings.Contains(tc.name, "duplicate") {
			t.Errorf("%s: every parser agrees with the peek, yet it is called ambiguous", tc.name)
		}
	}
}

// read is what a parser makes of a frame.
type read struct{ Method, Tool string }

// external runs a parser in another language on its standard input.
func external(bin string, args ...string) func(string) (read, error) {
	return func(in string) (read, error) {
		var r read
		cmd := exec.Command(bin, args...)
		cmd.Stdin = strings.NewReader(in)
		out, err := cmd.Output()
		if err != nil {
			return r, err
		}
		return r, json.Unmarshal(out, &r)
	}
}

func TestFoldCollision(t *testing.T) {
	for in, want := range map[string]string{
		`{"tools":[],"Tools":[1]}`:   "Tools",
		`{"tools":[],"tools":[1]}`:   "tools",
		`{"name":"a","nam\u0065":1}`: "name",
		`{"a":{"x":1,"X":2},"b":1}`:  "",
		"{\"k\":1,\"\u212a\":2}":     "\u212a",
		`[1]`:                        "",
		`{"a":`:                      "",
	} {
		got, ok := FoldCollision([]byte(in))
		if got != want || ok != (want != "") {
			t.Errorf("FoldCollision(%s) = %q %v, want %q", in, got, ok, want)
		}
	}
}

// TestIDSpan: the id's span is the last top-level "id" member's value, and
// writing a new id there changes no other byte.
func TestIDSpan(t *testing.T) {
	for _, tc := range []struct{ in, id, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `"b-1"`, `{"jsonrpc":"2.0","id":"b-1","method":"ping"}`},
		{` { "id" : "x\"y" , "result":{"id":2}}`, `7`, ` { "id" : 7 , "result":{"id":2}}`},
		{`{"id":1,"id":2}`, `3`, `{"id":1,"id":3}`},
		{`{"result":{"id":2,"text":"]}"},"id":[1]}`, `4`, `{"result":{"id":2,"text":"]}"},"id":4}`},
	} {
		start, end, ok := IDSpan([]byte(tc.in))
		if got := tc.in[:start] + tc.id + tc.in[end:]; !ok || got != tc.want {
			t.Errorf("IDSpan(%s) = %d %d %v: %s, want %s", tc.in, start, end, ok, got, tc.want)
		}
	}
	for _, in := range []string{`{"method":"x"}`, `[1]`, `{"id":`, ``} {
		if _, _, ok := IDSpan([]byte(in)); ok {
			t.Errorf("IDSpan(%s) found an id", in)
		}
	}
}

// TestPeekFrameReadsToTheFirstName: the plain peek (the hot path) stops at
// a call's first "name"; the strict one reads params whole.
func TestPeekFrameReadsToTheFirstName(t *testing.T) {
	in := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"x":1},"name":"hidden_delete_all"}}`)
	p, err := PeekFrame(in)
	if err != nil || p.Tool != "echo" || p.Ambiguous {
		t.Errorf("PeekFrame: tool %q ambiguous %v (%v)", p.Tool, p.Ambiguous, err)
	}
	p, err = PeekFrameStrict(in)
	if err != nil || p.Tool != "hidden_delete_all" || !p.Ambiguous {
		t.Errorf("PeekFrameStrict: tool %q ambiguous %v (%v)", p.Tool, p.Ambiguous, err)
	}
}

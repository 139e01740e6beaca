package drift

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/report"
)

func printOf(t *testing.T, result string) CanaryPrint {
	t.Helper()
	return printResult(json.RawMessage(result))
}

func TestCanaryCompare(t *testing.T) {
	rows := func(vals ...string) string {
		return `{"structuredContent":{"hits":[` + strings.Join(vals, ",") + `],"total":` + string(rune('0'+len(vals))) + `},"content":[{"type":"text","text":"x"}]}`
	}
	cases := []struct {
		name      string
		base, cur string
		rule      string // "" = no finding
		sev       report.Severity
	}{
		{"values changed", rows(`{"id":"a","score":1}`), rows(`{"id":"zz","score":2.5}`, `{"id":"q","score":7}`), "", ""},
		{"json text values changed", `{"content":[{"type":"text","text":"{\"temp\": 21}"}]}`, `{"content":[{"type":"text","text":"{\"temp\": -3}"}]}`, "", ""},
		{"plain text changed", `{"content":[{"type":"text","text":"sunny"}]}`, `{"content":[{"type":"text","text":"rain later"}]}`, "", ""},
		{"field removed", rows(`{"id":"a","score":1}`), rows(`{"id":"a"}`), ruleCanaryShape, report.SeverityError},
		{"type changed", rows(`{"id":"a","score":1}`), rows(`{"id":"a","score":"1"}`), ruleCanaryShape, report.SeverityError},
		{"became empty", rows(`{"id":"a","score":1}`), `{"structuredContent":{},"content":[]}`, ruleCanaryEmpty, report.SeverityError},
		{"empty text", `{"content":[{"type":"text","text":"ok"}]}`, `{"content":[{"type":"text","text":"  "}]}`, ruleCanaryEmpty, report.SeverityError},
		{"became non-empty", `{"content":[]}`, `{"content":[{"type":"text","text":"ok"}]}`, ruleCanarySize, report.SeverityWarn},
		{"kind changed", `{"content":[{"type":"text","text":"{\"a\":1}"}]}`, `{"content":[{"type":"text","text":"a=1"}]}`, ruleCanaryShape, report.SeverityError},
		{"size bucket", `{"content":[{"type":"text","text":"short"}]}`, `{"content":[{"type":"text","text":"` + strings.Repeat("y", 5000) + `"}]}`, ruleCanarySize, report.SeverityWarn},
		{"new tool error", `{"content":[{"type":"text","text":"ok"}]}`, `{"isError":true,"content":[{"type":"text","text":"invalid city \"Paris\""}]}`, ruleCanaryError, report.SeverityError},
		{"same error other values", `{"isError":true,"content":[{"type":"text","text":"item 42 not found at /a/b/c"}]}`, `{"isError":true,"content":[{"type":"text","text":"item 7 not found at /x/y"}]}`, "", ""},
		{"error changed", `{"isError":true,"content":[{"type":"text","text":"item 42 not found"}]}`, `{"isError":true,"content":[{"type":"text","text":"permission denied"}]}`, ruleCanaryError, report.SeverityError},
		{"recovered", `{"isError":true,"content":[{"type":"text","text":"boom"}]}`, `{"content":[{"type":"text","text":"ok"}]}`, ruleCanaryRecovered, report.SeverityInfo},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := compareCanary("c", "tool", printOf(t, tc.base), printOf(t, tc.cur))
			if tc.rule == "" {
				if len(fs) != 0 {
					t.Fatalf("unexpected %+v", fs)
				}
				return
			}
			if len(fs) != 1 || fs[0].Rule != tc.rule || fs[0].Severity != tc.sev {
				t.Fatalf("got %+v, want %s", fs, tc.rule)
			}
			for _, secret := range []string{"Paris", "42", "sunny"} {
				if strings.Contains(fs[0].Message, secret) {
					t.Errorf("message leaks a result value: %s", fs[0].Message)
				}
			}
		})
	}
}

func TestPrintResponseRPCError(t *testing.T) {
	a := printResponse(&jsonrpc.Message{Error: &jsonrpc.Error{Code: -32602, Message: "Invalid params: 'x' at 3"}})
	b := printResponse(&jsonrpc.Message{Error: &jsonrpc.Error{Code: -32602, Message: "invalid params: 'yy' at 99"}})
	if a.Outcome != outcomeRPCError || a.Error == nil || a.Error.Category != "validation" || !sameSignature(a.Error, b.Error) {
		t.Errorf("%+v %+v", a.Error, b.Error)
	}
	if p := printTimeout(); p.Outcome != outcomeTimeout || p.Error.Category != "timeout" {
		t.Errorf("%+v", p)
	}
}

func TestNormaliseError(t *testing.T) {
	got := normaliseError(`User 123e4567-e89b-12d3-a456-426614174000 not found in "prod" at /var/db/x.db (id 0xdeadbeefcafe, took 12.5ms) see https://x.example/doc`)
	want := `user <uuid> not found in <str> at <path> (id <hex>, took <n>ms) see <url>`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func FuzzPrintResult(f *testing.F) {
	f.Add([]byte(`{"structuredContent":{"a":[1,{"b":null}]},"content":[]}`))
	f.Add([]byte(`{"content":[{"type":"image","data":"x"},{"type":"text","text":"[1,2]"}]}`))
	f.Add([]byte(`{"isError":true,"content":[{"type":"text","text":"e"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := printResult(b)
		if p.Outcome == "" || p.Size == "" {
			t.Fatalf("incomplete print %+v", p)
		}
		if fs := compareCanary("c", "t", p, printResult(b)); len(fs) != 0 {
			t.Fatalf("a result compared with itself drifted: %+v", fs)
		}
	})
}

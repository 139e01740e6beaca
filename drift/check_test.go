package drift

import (
	"fmt"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

func TestCheckReports(t *testing.T) {
	state := func(names ...string) *Capture {
		t.Helper()
		tools := ""
		for i, n := range names {
			if i > 0 {
				tools += ","
			}
			tools += fmt.Sprintf(`{"name": %q, "inputSchema": {"type": "object"}}`, n)
		}
		c, err := LoadState([]byte(`{"tools": [` + tools + `]}`))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	base := state("a", "b")
	for _, tt := range []struct {
		name      string
		rep       *Report
		compared  bool
		live      int
		liveFP    string
		findings  int
		firstRule string
	}{
		{name: "same", rep: CheckReport("b.json", "c.json", base, state("b", "a")), compared: true, live: 2, liveFP: Fingerprint(base.ToolSet())},
		{name: "a tool removed", rep: CheckReport("b.json", "c.json", base, state("a")), compared: true, live: 1, liveFP: Fingerprint(state("a").ToolSet()),
			findings: 1, firstRule: ruleToolMissing},
		{name: "refused", rep: CheckRefusedReport("b.json", "c.json", base, mcp.ErrProtocolRefused), findings: 1, firstRule: ruleProtocolUnsupported},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.rep
			if r.Command != "drift check" || r.Baseline != "b.json" || r.Live != "c.json" || r.SchemaVersion != SchemaVersion {
				t.Errorf("header %+v", r)
			}
			if r.Compared != tt.compared || r.Tools.Baseline != 2 || r.Tools.Live != tt.live || r.Fingerprint.Live != tt.liveFP || r.Fingerprint.Baseline == "" {
				t.Errorf("compared %v, tools %+v, fingerprints %+v", r.Compared, r.Tools, r.Fingerprint)
			}
			if len(r.Findings) != tt.findings || (tt.firstRule != "" && r.Findings[0].Rule != tt.firstRule) {
				t.Errorf("findings %+v", r.Findings)
			}
		})
	}
}

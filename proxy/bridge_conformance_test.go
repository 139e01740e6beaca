package proxy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testbedserver"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
	"github.com/mcpdrill/mcpdrill/report"
	"github.com/mcpdrill/mcpdrill/scan"
)

// TestBridgeScansLikeHTTP: the bridge is a conformant Streamable HTTP
// server. A scan of the good testbed over stdio through the bridge passes
// and fails the same checks, with the same findings, as a scan of the
// same testbed serving HTTP itself, on every revision it serves and with
// none forced; and neither has a finding at warn or above (the HTTP
// transport checks among them: the MCP-Protocol-Version header, the
// 2026-07-28 headers' agreement with the body, the session rules).
func TestBridgeScansLikeHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("twelve scans")
	}
	direct := testbedserver.HTTP(t, testbed.Options{Profile: "good", Seed: 1}).URL + "/mcp"
	bridged := startBridge(t, "testbed", Config{}, "MCPDRILL_PROFILE=good")
	for _, rev := range append([]string{""}, mcp.Revisions...) {
		name := rev
		if name == "" {
			name = "detected"
		}
		t.Run(name, func(t *testing.T) {
			want, _ := scanOf(t, direct, rev)
			got, serious := scanOf(t, bridged, rev)
			if got != want {
				t.Errorf("through the bridge:\n%s\ndirect:\n%s", got, want)
			}
			if serious {
				t.Errorf("findings at warn or above:\n%s", got)
			}
		})
	}
}

// scanOf scans url (forcing rev unless "") and returns what the transport
// comparison looks at: the revision, every conformance check and every
// finding, sorted; serious is true when a finding is at warn or above.
func scanOf(t *testing.T, url, rev string) (_ string, serious bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := scan.Run(ctx, mcp.Config{URL: url, Protocol: rev}, scan.Options{Now: func() time.Time { return time.Unix(0, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range rep.Conformance {
		lines = append(lines, fmt.Sprintf("check %s %s %s", c.ID, c.Status, c.Detail))
	}
	for _, f := range rep.Findings {
		lines = append(lines, fmt.Sprintf("%s %s %s", f.Severity, f.Rule, f.Message))
		serious = serious || f.Severity.Rank() >= report.SeverityWarn.Rank()
	}
	slices.Sort(lines)
	return fmt.Sprintf("revision %s\n%s", rep.Protocol.Revision, strings.Join(lines, "\n")), serious
}

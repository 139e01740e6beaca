package scan

import (
	"context"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// BenchmarkScanStdio scans testbed servers over stdio, as the CLI does (a
// second connection included), and reports where the time goes: the
// server's start-up and the scan beyond it (meta.timing). sloppy-errors
// drops the malformed frame: without the barrier that alone was a 5 s wait.
func BenchmarkScanStdio(b *testing.B) {
	for _, profile := range []string{"good", "sloppy-errors"} {
		b.Run(profile, func(b *testing.B) {
			cfg := stdioConfig(b, testbed.Options{Profile: profile})
			var startup, scan int64
			for b.Loop() {
				r, err := Run(context.Background(), cfg, Options{ToolVersion: "bench", Deadline: time.Minute})
				if err != nil || !r.Established {
					b.Fatalf("scan: %v %+v", err, r.Findings)
				}
				startup += r.Meta.Timing.StartupMS
				scan += r.Meta.Timing.ScanMS
			}
			b.ReportMetric(float64(startup)/float64(b.N), "startup-ms/op")
			b.ReportMetric(float64(scan)/float64(b.N), "scan-ms/op")
		})
	}
}

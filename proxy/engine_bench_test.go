package proxy

import (
	"strconv"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/faults"
)

// BenchmarkProcess measures the engine's per-frame cost under the
// never-firing plan: one tools/call request and its 1 KiB response.
func BenchmarkProcess(b *testing.B) {
	p, err := faults.ParsePlan([]byte(neverFires))
	if err != nil {
		b.Fatal(err)
	}
	e := newEngine(Config{Plan: p})
	payload := strings.Repeat("x", 1000)
	reqs := make([][]byte, 64)
	resps := make([][]byte, 64)
	for i := range reqs {
		reqs[i] = []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"tools/call","params":{"name":"blob","arguments":{}}}`)
		resps[i] = []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"result":{"content":[{"type":"text","text":"` + payload + `"}]}}`)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		e.process(faults.ToServer, reqs[i%64])
		e.process(faults.ToClient, resps[i%64])
	}
}

package proxy

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/faults"
	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// chunky returns reads of random sizes (1 byte to 300 KiB), so lines span
// reads at every position.
type chunky struct {
	b   []byte
	rng *rand.Rand
}

func (c *chunky) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.b), 1+c.rng.IntN([]int{16, 4 << 10, 300 << 10}[c.rng.IntN(3)]))
	copy(p, c.b[:n])
	c.b = c.b[n:]
	return n, nil
}

// randomLines is one direction's lines: requests, responses (some with
// the id after a large result), notifications, blank and malformed lines,
// CRLF, lines longer than the read buffer and than a small frame cap, and
// sometimes a last line with no terminator.
func randomLines(rng *rand.Rand, n int) []byte {
	var b bytes.Buffer
	big := func() string { return strings.Repeat("x", []int{10, 1000, 70 << 10, 200 << 10}[rng.IntN(4)]) }
	for i := 0; i < n; i++ {
		id := rng.IntN(8)
		switch rng.IntN(9) {
		case 0:
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t%d","arguments":{"a":"%s"}}}`, id, rng.IntN(3), big())
		case 1:
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%s"}]}}`, id, big())
		case 2:
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","result":{"text":"%s"},"id":%d}`, big(), id)
		case 3:
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"p":"%s"}}`, big())
		case 4:
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"error":{"code":-32000,"message":"no"}}`, id)
		case 5:
			b.WriteString("   ")
		case 6:
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":"s%d","method":"tools/list"}`, id)
		case 7:
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":"s%d","result":{"tools":[]}}`, id)
		case 8:
			b.WriteString(`{"broken":` + big())
		}
		if rng.IntN(5) == 0 {
			b.WriteByte('\r')
		}
		if i < n-1 || rng.IntN(2) == 0 {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// TestStreamMatchesStore: the copy and stream modes, and the per-line
// choice between stream and store, deliver the same bytes and leave the
// same events, indices and correlation state as store-and-forward, for
// plans that can fire, stop firing, never fire, or fire on some lines
// (probability 0.3) for good, or fire on the replies to one tool's calls
// for good. No fault ever fires on a streamed line.
func TestStreamMatchesStore(t *testing.T) {
	plans := map[string]string{
		"dead":         "rules:\n  - fault: corrupt\n    method: tools/call\n    probability: 0\n",
		"s2c-limit":    "seed: 3\nrules:\n  - fault: error\n    method: tools/call\n    probability: 0.5\n    limit: 2\n",
		"nth-both":     "seed: 4\nrules:\n  - fault: drop\n    direction: any\n    nth: 3\n  - fault: duplicate\n    direction: c2s\n    kinds: [request]\n    limit: 1\n",
		"c2s-live":     "rules:\n  - fault: drop\n    direction: c2s\n    tool: nomatch\n",
		"s2c-truncate": "seed: 5\nrules:\n  - fault: truncate\n    probability: 0.3\n    limit: 3\n",
		// Live for good: each line streams or is stored by its own roll.
		"s2c-p0.3":  "seed: 6\nrules:\n  - fault: corrupt\n    probability: 0.3\n",
		"both-p0.3": "seed: 7\nrules:\n  - fault: duplicate\n    direction: any\n    probability: 0.3\n    after: 1\n  - fault: error\n    method: tools/call\n    probability: 0.3\n    every: 2\n",
		// Live for good on replies to calls of one tool: a reply no pending
		// call of it could be answered by streams.
		"s2c-tool": "seed: 8\nrules:\n  - fault: error\n    tool: t1\n",
	}
	var toolStreamed int64 // s2c-tool: too few calls of t1 in one trial to ask each
	toolEvents := 0
	defer func() {
		t.Logf("s2c-tool: %d lines streamed, %d events", toolStreamed, toolEvents)
		if toolStreamed == 0 || toolEvents == 0 {
			t.Errorf("s2c-tool: %d lines streamed, %d events: want some of each", toolStreamed, toolEvents)
		}
	}()
	for trial := 0; trial < 4; trial++ {
		for name, src := range plans {
			for _, maxFrame := range []int{0, 100 << 10} {
				t.Run(fmt.Sprintf("%s/max=%d/%d", name, maxFrame, trial), func(t *testing.T) {
					seed := uint64(trial)
					c2s := randomLines(rand.New(rand.NewPCG(seed, 1)), 24)
					s2c := randomLines(rand.New(rand.NewPCG(seed, 2)), 24)
					var streamed int64
					run := func(storeOnly bool) (string, string, string, [3]uint64, string) {
						var log bytes.Buffer
						rec := NewJSONL(&log) // events hold slices of the read buffer: encode at once
						var toServer, toClient bytes.Buffer
						s := &stdioSession{
							eng:    newEngine(Config{Plan: plan(t, src), Recorder: rec, MaxFrame: maxFrame}),
							client: &sink{w: &toClient}, server: &sink{w: &toServer},
						}
						s.eng.storeOnly = storeOnly
						rng := rand.New(rand.NewPCG(seed, 3))
						// Sequential directions keep correlation deterministic.
						s.pump(faults.ToServer, &chunky{b: c2s, rng: rng}, s.server, s.client)
						s.pump(faults.ToClient, &chunky{b: s2c, rng: rng}, s.client, s.server)
						next, pend, n := books(t, s.eng)
						streamed = n
						return toServer.String(), toClient.String(), log.String(), next, pend
					}
					ws, wc, wev, wnext, wpend := run(true)
					gs, gc, gev, gnext, gpend := run(false)
					if gs != ws || gc != wc {
						t.Errorf("bytes differ: c2s %d vs %d, s2c %d vs %d", len(gs), len(ws), len(gc), len(wc))
					}
					if gev != wev {
						t.Errorf("events differ:\n%v\n%v", gev, wev)
					}
					if name == "s2c-tool" {
						toolStreamed += streamed
						toolEvents += strings.Count(wev, "\n")
					}
					if strings.HasSuffix(name, "-p0.3") && (streamed == 0 || wev == "") {
						t.Errorf("%d lines streamed, events %q: want some of each", streamed, wev)
					}
					if name != "dead" { // the copy mode keeps no books: nothing can read them
						if gnext != wnext {
							t.Errorf("indices %v, want %v", gnext, wnext)
						}
						if gpend != wpend {
							t.Errorf("pending %v, want %v", gpend, wpend)
						}
					}
				})
			}
		}
	}
}

// books returns what a run left in e's books: its next indices, its pending
// requests (printed, so the copy is taken now) and how many frames it
// streamed. A fault that fired on a frame already forwarded is an error.
func books(t *testing.T, e *engine) (next [3]uint64, pending string, streamed int64) {
	t.Helper()
	if n := e.lateFires.Load(); n != 0 {
		t.Errorf("%d faults fired on streamed frames", n)
	}
	return e.next, fmt.Sprint(e.pending), e.streamed.Load()
}

// TestStreamMatchesStoreAtBufferEdge: lines of the read buffer's size, one
// byte either side, with and without a terminator at the end of input,
// under a frame cap smaller than the buffer: every mode examines the same
// lines.
func TestStreamMatchesStoreAtBufferEdge(t *testing.T) {
	plans := []string{
		"rules:\n  - fault: drop\n    direction: c2s\n", // s2c streams for good
		"seed: 6\nrules:\n  - fault: corrupt\n    probability: 0.3\n",
	}
	for _, n := range []int{readBuf - 1, readBuf, readBuf + 1} {
		for _, eol := range []string{"", "\n"} {
			for pi, src := range plans {
				head := `{"jsonrpc":"2.0","method":"n","params":{"p":"`
				line := head + strings.Repeat("x", n-len(eol)-len(head)-3) + `"}}` + eol
				in := []byte(strings.Repeat(`{"jsonrpc":"2.0","method":"a"}`+"\n", 3) + line)
				run := func(storeOnly bool) (string, string, uint64) {
					var log, out bytes.Buffer
					s := &stdioSession{
						eng:    newEngine(Config{Plan: plan(t, src), Recorder: NewJSONL(&log), MaxFrame: 1000}),
						client: &sink{w: &out}, server: &sink{w: io.Discard},
					}
					s.eng.storeOnly = storeOnly
					s.pump(faults.ToClient, &chunky{b: in, rng: rand.New(rand.NewPCG(uint64(n), 1))}, s.client, s.server)
					return out.String(), log.String(), s.eng.next[faults.ToClient]
				}
				wo, wl, wn := run(true)
				go_, gl, gn := run(false)
				if go_ != wo || gl != wl || gn != wn {
					t.Errorf("plan %d, line of %d bytes (eol %q): stream gives %d bytes, %d frames, log %q; store %d bytes, %d frames, log %q",
						pi, n, eol, len(go_), gn, gl, len(wo), wn, wl)
				}
			}
		}
	}
}

// TestChoiceSeesOnlyEarlierRequests: the streaming choice for a reply is
// made from the requests recorded before it (here none of tool "x"), so a
// reply that names the id of a request recorded afterwards (a server that
// guessed it) is accounted as answering nothing: no fault fires on bytes
// already forwarded, and the request stays pending for its real reply,
// which is stored and fires.
func TestChoiceSeesOnlyEarlierRequests(t *testing.T) {
	e := newEngine(Config{Plan: plan(t, "rules:\n  - fault: error\n    tool: x\n")})
	l, seq := e.choose(faults.ToClient)
	if l == store {
		t.Fatal("with no call of x pending, a reply could fire")
	}
	e.process(faults.ToServer, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`))
	reply := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	e.account(faults.ToClient, reply, seq)
	if n := e.lateFires.Load(); n != 0 {
		t.Fatalf("%d faults fired on a streamed reply", n)
	}
	if _, ok := e.pending[faults.ToServer][jsonrpcKey(t, "1")]; !ok {
		t.Fatal("the call was taken by a reply chosen before it was recorded")
	}
	if l, _ := e.choose(faults.ToClient); l != store {
		t.Fatal("with the call of x pending, the next reply must be stored")
	}
	if may, _ := e.mayChangeAny(faults.ToClient); !may {
		t.Fatal("mayChangeAny: with the call of x pending, a reply must be stored")
	}
	if _, a := e.process(faults.ToClient, reply); a.Kind != faults.Replace {
		t.Fatalf("the real reply: action %v, want the injected error", a.Kind)
	}
}

func jsonrpcKey(t *testing.T, id string) string {
	t.Helper()
	k := jsonrpc.IDKey([]byte(id))
	if k == "" {
		t.Fatalf("no key for id %s", id)
	}
	return k
}

// FuzzLineModes: for any input split into reads of any sizes, the stream,
// per-line and store modes of a pump deliver the same bytes, events and
// indices, under a small frame cap and under none, with plans that stream
// for good, choose per line, or fire on some lines.
func FuzzLineModes(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n  \r\n{\"method\":\"x\"}"), uint64(1), uint16(0))
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"t1\"}}\r\n{\"id\":7,\"result\":{\"a\":\""+strings.Repeat("y", 300)+"\"}}\n{\"broken\":"), uint64(2), uint16(200))
	f.Add([]byte(strings.Repeat("x", 70<<10)+"\n{\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"t1\"}}\n"), uint64(3), uint16(64))
	plans := []string{
		"rules:\n  - fault: drop\n    direction: c2s\n", // s2c streams for good
		"seed: 6\nrules:\n  - fault: corrupt\n    probability: 0.3\n",
		"seed: 8\nrules:\n  - fault: error\n    direction: any\n    tool: t1\n",
	}
	f.Fuzz(func(t *testing.T, in []byte, seed uint64, maxFrame uint16) {
		for _, src := range plans {
			p := plan(t, src)
			run := func(storeOnly bool) (string, string, [3]uint64) {
				var log, out bytes.Buffer
				s := &stdioSession{
					eng:    newEngine(Config{Plan: p, Recorder: NewJSONL(&log), MaxFrame: int(maxFrame)}),
					client: &sink{w: &out}, server: &sink{w: io.Discard},
				}
				s.eng.storeOnly = storeOnly
				// Requests first, so replies can be correlated with them.
				s.pump(faults.ToServer, &chunky{b: in, rng: rand.New(rand.NewPCG(seed, 1))}, s.server, s.client)
				s.pump(faults.ToClient, &chunky{b: in, rng: rand.New(rand.NewPCG(seed, 2))}, s.client, s.server)
				if n := s.eng.lateFires.Load(); n != 0 {
					t.Fatalf("%d faults fired on streamed lines", n)
				}
				return out.String(), log.String(), s.eng.next
			}
			wo, wl, wn := run(true)
			gotOut, gl, gn := run(false)
			if gotOut != wo || gl != wl || gn != wn {
				t.Fatalf("plan %q: modes differ: %d bytes, %v frames, log %q; store: %d bytes, %v frames, log %q", src, len(gotOut), gn, gl, len(wo), wn, wl)
			}
		}
	})
}

// splitReader returns its parts one read each.
type splitReader struct{ parts [][]byte }

func (r *splitReader) Read(p []byte) (int, error) {
	if len(r.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.parts[0])
	if r.parts[0] = r.parts[0][n:]; len(r.parts[0]) == 0 {
		r.parts = r.parts[1:]
	}
	return n, nil
}

// TestStreamedFrameCompleteOnlyOnceAccounted: a line forwarded as it
// arrives (stream mode for good, and the per-line choice) is never whole at
// the receiver before it has been accounted for, wherever the reads split
// it (its newline in a read of its own included): a receiver that decodes
// JSON as it comes, as the Go SDK's stdio transport does, answers a request
// as soon as its closing brace is in, and that answer must find the
// request recorded. The stdio bridge writes a request's newline apart from
// it; before, a server could answer before the request was recorded, and
// the answer passed unfaulted (TestBridgeFaultsApply under load).
func TestStreamedFrameCompleteOnlyOnceAccounted(t *testing.T) {
	frame := []byte(`{"jsonrpc":"2.0","id":1,"result":{"a":"b"}}  `)
	for name, src := range map[string]string{
		"stream": "rules:\n  - fault: drop\n    direction: c2s\n",         // s2c can never fire
		"line":   "rules:\n  - fault: error\n    tool: x\n    limit: 5\n", // no call of x pending: per line
	} {
		for k := 1; k <= len(frame); k++ {
			e := newEngine(Config{Plan: plan(t, src)})
			var got []byte
			early := false
			dst := &sink{w: writerFunc(func(p []byte) (int, error) {
				got = append(got, p...)
				if e.next[faults.ToClient] == 0 && len(bytes.TrimRight(got, " \n")) == len(bytes.TrimRight(frame, " ")) {
					early = true
				}
				return len(p), nil
			})}
			s := &stdioSession{eng: e, client: dst, server: &sink{w: io.Discard}}
			in := &splitReader{parts: [][]byte{bytes.Clone(frame[:k]), bytes.Clone(frame[k:]), []byte("\n")}}
			s.pump(faults.ToClient, in, dst, s.server)
			if early {
				t.Fatalf("%s, split at %d: the whole frame was written before it was accounted for", name, k)
			}
			if want := string(frame) + "\n"; string(got) != want {
				t.Fatalf("%s, split at %d: wrote %q, want %q", name, k, got, want)
			}
		}
	}
}

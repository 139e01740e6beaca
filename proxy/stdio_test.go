package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/faults"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

// randomTraffic returns NDJSON bytes of random JSON-RPC frames plus noise:
// odd ids, escapes, unicode, CRLF endings, blank and non-JSON lines, long
// lines beyond every buffer, and a last line with no newline.
func randomTraffic(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 99))
	var b bytes.Buffer
	ids := []string{`1`, `-7`, `1.0`, `"a"`, `"é\"\\u00e9"`, `null`, `99999999999999999999`, `"x\u2028y"`}
	methods := []string{"tools/call", "tools/list", "initialize", "notifications/progress", "ping", "résumé/ünicode"}
	for i := 0; i < n; i++ {
		var line string
		switch r.IntN(9) {
		case 0:
			line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":{"name":"t%d","arguments":{"q":%q}}}`, ids[r.IntN(len(ids))], methods[r.IntN(len(methods))], r.IntN(5), strings.Repeat("ü", r.IntN(40)))
		case 1:
			line = fmt.Sprintf(`{"method":%q,"jsonrpc":"2.0","params":{"progress":%d}}`, methods[r.IntN(len(methods))], r.IntN(100))
		case 2:
			line = fmt.Sprintf(`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":%q}]},"id":%s}`, strings.Repeat("z", r.IntN(3000)), ids[r.IntN(len(ids))])
		case 3:
			line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"nope"}}`, ids[r.IntN(len(ids))])
		case 4:
			line = `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]`
		case 5:
			line = []string{"", "   ", "not json at all", "{", `{"jsonrpc":"2.0","id":`, "\x00\xff\xfe"}[r.IntN(6)]
		case 6:
			line = fmt.Sprintf(` { "jsonrpc" : "2.0" , "id" : %d , "method" : "tools/call" } `, r.IntN(1000))
		case 7:
			line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"blob":"%s"}}`, i, strings.Repeat("L", 70_000+r.IntN(100_000)))
		case 8:
			line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)
		}
		b.WriteString(line)
		if r.IntN(5) == 0 {
			b.WriteString("\r\n")
		} else {
			b.WriteString("\n")
		}
	}
	b.WriteString(`{"jsonrpc":"2.0","id":"last","result":{}}`) // no newline
	return b.Bytes()
}

// roundTrip sends traffic through the proxy to a `cat` server and returns
// everything the client read back.
func roundTrip(t *testing.T, cfg Config, traffic []byte) []byte {
	t.Helper()
	argv, env := self("cat")
	inR, inW := io.Pipe()
	var out bytes.Buffer
	outR, outW := io.Pipe()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(&out, outR)
	}()
	go func() {
		defer wg.Done()
		_, _ = inW.Write(traffic)
		inW.Close()
	}()
	code, err := RunStdio(context.Background(), StdioOptions{Config: cfg, Command: argv, Env: env, Stdin: inR, Stdout: outW, Stderr: os.Stderr})
	if err != nil || code != 0 {
		t.Fatalf("RunStdio = %d, %v", code, err)
	}
	wg.Wait()
	return out.Bytes()
}

func plan(t testing.TB, src string) *faults.Plan {
	t.Helper()
	p, err := faults.ParsePlan([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStdioPassThroughIsByteIdentical is the property: with no fault firing,
// the proxy is invisible, byte for byte, in both directions.
func TestStdioPassThroughIsByteIdentical(t *testing.T) {
	modes := map[string]Config{
		"no plan":         {},
		"never fires":     {Plan: plan(t, "rules:\n  - fault: corrupt\n    direction: any\n    kinds: []\n    probability: 0\n")},
		"never matches":   {Plan: plan(t, "rules:\n  - fault: drop\n    direction: any\n    method: nope\n")},
		"frame cap 1 KiB": {Plan: plan(t, "rules:\n  - fault: drop\n    method: nope\n"), MaxFrame: 1024},
	}
	for seed := uint64(1); seed <= 2; seed++ {
		traffic := randomTraffic(seed, 40)
		for name, cfg := range modes {
			t.Run(fmt.Sprintf("%s/seed=%d", name, seed), func(t *testing.T) {
				rec := &memRecorder{}
				cfg.Recorder = rec
				got := roundTrip(t, cfg, traffic)
				if !bytes.Equal(got, traffic) {
					i := 0
					for i < len(got) && i < len(traffic) && got[i] == traffic[i] {
						i++
					}
					t.Fatalf("traffic changed at byte %d of %d (got %d bytes)", i, len(traffic), len(got))
				}
				if len(rec.events()) != 0 {
					t.Fatalf("events recorded without a fault: %v", rec.events())
				}
			})
		}
	}
}

type memRecorder struct {
	mu sync.Mutex
	ev []Event
}

func (m *memRecorder) Record(e Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ev = append(m.ev, e)
}

func (m *memRecorder) events() []Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Event(nil), m.ev...)
}

func TestStdioExitStatusAndStderr(t *testing.T) {
	in, out, wait := startStdio(t, nil, nil, "exit", "MCPDRILL_EXIT=7")
	_, _ = in.Write([]byte("{}\n"))
	if code := wait(); code != 7 {
		t.Fatalf("exit status %d, want 7", code)
	}
	if _, err := out.ReadByte(); err != io.EOF {
		t.Fatalf("client stdout not closed: %v", err)
	}
}

func TestStdioForwardsSignals(t *testing.T) {
	argv, env := self("sigwait")
	sigs := make(chan os.Signal, 1)
	outR, outW := io.Pipe()
	inR, inW := io.Pipe()
	defer inW.Close()
	done := make(chan int, 1)
	go func() {
		code, _ := RunStdio(context.Background(), StdioOptions{Command: argv, Env: env, Stdin: inR, Stdout: outW, Stderr: os.Stderr, Signals: sigs})
		done <- code
	}()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil || !strings.Contains(line, "ready") {
		t.Fatalf("child not ready: %q %v", line, err)
	}
	sigs <- syscall.SIGTERM
	select {
	case code := <-done:
		if code != 42 {
			t.Fatalf("exit status %d, want 42 (the child's SIGTERM handler)", code)
		}
	case <-time.After(testutil.Hang):
		t.Fatal("SIGTERM not forwarded")
	}
}

// TestStdioSurvivesEarlyClose: the client goes away mid-stream (stops
// reading, closes stdin); the proxy ends the server and returns.
func TestStdioSurvivesEarlyClose(t *testing.T) {
	argv, env := self("cat")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := RunStdio(context.Background(), StdioOptions{
			Config:  Config{Plan: plan(t, "rules:\n  - fault: drop\n    method: nope\n")},
			Command: argv, Env: env, Stdin: inR, Stdout: outW, Stderr: os.Stderr, Grace: time.Second,
		})
		done <- err
	}()
	_, _ = inW.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
	buf := make([]byte, 10)
	_, _ = io.ReadFull(outR, buf)
	outR.Close() // the client stops reading: writes to it now fail
	for i := 0; i < 50; i++ {
		_, _ = inW.Write([]byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"))
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testutil.Hang):
		t.Fatal("proxy did not return after the client closed")
	}
}

// TestStdioServerClosesEarly: the server dies; the client sees EOF and the
// proxy returns the server's status even though the client keeps stdin open.
func TestStdioServerClosesEarly(t *testing.T) {
	in, out, wait := startStdio(t, plan(t, "rules:\n  - fault: drop\n    method: nope\n"), nil, "exit", "MCPDRILL_EXIT=3")
	_, _ = in.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
	if code := wait(); code != 3 {
		t.Fatalf("status %d", code)
	}
	if _, err := out.ReadByte(); err != io.EOF {
		t.Fatalf("want EOF, got %v", err)
	}
	_, _ = in.Write([]byte("{}\n")) // must not block or panic
}

var _ = json.Valid

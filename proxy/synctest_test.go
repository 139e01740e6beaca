package proxy

import (
	"bufio"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpdrill/mcpdrill/faults"
)

// pumpInBubble runs the server→client pump on in-memory pipes inside a
// synctest bubble and returns the server's writer and the client's reader.
func pumpInBubble(t *testing.T, src string) (*io.PipeWriter, *io.PipeReader) {
	t.Helper()
	srcR, srcW := io.Pipe()
	dstR, dstW := io.Pipe()
	s := &stdioSession{
		eng:    newEngine(Config{Plan: plan(t, src)}),
		client: &sink{w: dstW, c: dstW},
		server: &sink{w: io.Discard},
	}
	go func() {
		s.pump(faults.ToClient, srcR, s.client, s.server)
		s.delays.Wait()
		s.client.close()
	}()
	return srcW, dstR
}

type arrival struct {
	at   time.Duration
	line string
}

func collect(r io.Reader, start time.Time) <-chan arrival {
	ch := make(chan arrival, 16)
	go func() {
		defer close(ch)
		br := bufio.NewReader(r)
		for {
			l, err := br.ReadString('\n')
			if l != "" {
				ch <- arrival{time.Since(start), l}
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

const (
	respA = `{"jsonrpc":"2.0","id":1,"result":{"a":1}}` + "\n"
	respB = `{"jsonrpc":"2.0","id":2,"result":{"b":2}}` + "\n"
)

// TestLatencyTimingNoHeadOfLineBlocking: the delayed frame arrives exactly
// latency later; a frame behind it is not held.
func TestLatencyTimingNoHeadOfLineBlocking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, r := pumpInBubble(t, "rules:\n  - fault: latency\n    nth: 1\n    params: {latency: 2s}\n")
		start := time.Now()
		got := collect(r, start)
		_, _ = io.WriteString(w, respA+respB)
		w.Close()
		first, second := <-got, <-got
		if first.line != respB || first.at != 0 {
			t.Errorf("first arrival = %+v, want B at once", first)
		}
		if second.line != respA || second.at != 2*time.Second {
			t.Errorf("second arrival = %+v, want A at exactly 2s", second)
		}
	})
}

// TestLatencyJitterIsSeeded: with jitter the delay is within the bounds and
// the same for the same seed.
func TestLatencyJitterIsSeeded(t *testing.T) {
	delay := func() time.Duration {
		var at time.Duration
		synctest.Test(t, func(t *testing.T) {
			w, r := pumpInBubble(t, "seed: 3\nrules:\n  - fault: latency\n    params: {latency: 1s, jitter: 400ms}\n")
			got := collect(r, time.Now())
			_, _ = io.WriteString(w, respA)
			w.Close()
			at = (<-got).at
		})
		return at
	}
	a, b := delay(), delay()
	if a != b || a < 600*time.Millisecond || a > 1400*time.Millisecond {
		t.Fatalf("delays %s and %s: want equal and within 1s±400ms", a, b)
	}
}

// TestTimeoutWithholdsForever: an hour later the withheld reply still has
// not arrived, while the next one did at once.
func TestTimeoutWithholdsForever(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, r := pumpInBubble(t, "rules:\n  - fault: timeout\n    nth: 1\n")
		got := collect(r, time.Now())
		_, _ = io.WriteString(w, respA+respB)
		if a := <-got; a.line != respB || a.at != 0 {
			t.Fatalf("arrival = %+v, want B at once", a)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		select {
		case a := <-got:
			t.Fatalf("withheld frame arrived: %+v", a)
		default:
		}
		w.Close()
	})
}

// TestSlowDribbleTiming: the frame arrives in chunk-sized writes, gap apart.
func TestSlowDribbleTiming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, r := pumpInBubble(t, "rules:\n  - fault: slow\n    params: {chunk: 16, gap: 5ms}\n")
		start := time.Now()
		type chunk struct {
			at time.Duration
			n  int
		}
		chunks := make(chan chunk, 16)
		go func() {
			defer close(chunks)
			buf := make([]byte, 1024)
			for {
				n, err := r.Read(buf)
				if n > 0 {
					chunks <- chunk{time.Since(start), n}
				}
				if err != nil {
					return
				}
			}
		}()
		_, _ = io.WriteString(w, respA) // 42 bytes: 16 + 16 + 10
		w.Close()
		var got []chunk
		for c := range chunks {
			got = append(got, c)
		}
		want := []chunk{{0, 16}, {5 * time.Millisecond, 16}, {10 * time.Millisecond, 10}}
		if len(got) != len(want) {
			t.Fatalf("chunks = %v, want %v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("chunks = %v, want %v", got, want)
			}
		}
	})
}

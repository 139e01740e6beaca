package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// The barrier against real stdio servers (the fake modes): how each way of
// treating a frame that does not parse comes back from SendRawBarrier.
// Where an outcome is a wait running out (the grace, the request's
// deadline), the wait is short; where it is an answer, the waits are long
// enough that no loaded machine reaches them, so the outcome never depends
// on how fast the server is scheduled. The timing of every outcome is
// TestBarrierRoundTrip's, in virtual time.
func TestStdioSendRawBarrier(t *testing.T) {
	const long = time.Minute
	tests := []struct {
		mode    string
		wantErr error // nil: a -32700 reply
		grace   time.Duration
		within  time.Duration // the call's context deadline
	}{
		{"legacy", nil, long, long},                                    // answers at once
		{"raw-drop", ErrIgnored, BarrierGrace, long},                   // drops the frame, answers the ping
		{"raw-late", nil, long, long},                                  // answers the frame right after the ping
		{"raw-hang", ErrTimeout, BarrierGrace, 500 * time.Millisecond}, // answers nothing any more
		{"raw-crash", ErrServerExited, long, long},                     // exits on the frame
		{"modern", nil, long, long},                                    // the ping is refused (no ping in 2026-07-28): still an answer
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			c := connectFake(t, tc.mode, nil)
			ctx, cancel := context.WithTimeout(context.Background(), tc.within)
			defer cancel()
			msg, err := c.SendRawBarrier(ctx, []byte(`{"jsonrpc":"2.0","id":"x",`), tc.grace)
			switch {
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			case tc.wantErr == nil && (err != nil || msg.Error == nil || msg.Error.Code != jsonrpc.CodeParseError):
				t.Fatalf("reply %+v, %v; want -32700", msg, err)
			}
			if tc.wantErr == ErrServerExited {
				return
			}
			if c.pending() != 0 {
				t.Fatalf("pending = %d", c.pending())
			}
		})
	}
}

// barrierServer is an in-process server for barrierRoundTrip: frames the
// client writes arrive on in; its replies go through m as a stdio reader's
// would. probe and barrier say after how long (virtual time) each is
// answered; a negative delay never answers.
type barrierServer struct {
	m              *mux
	probe, barrier time.Duration
	// crash fails the connection (the server exited) on the probe frame.
	crash bool
}

func (s barrierServer) write(_ context.Context, frame []byte) error {
	p, err := jsonrpc.PeekFrame(frame)
	if err != nil && s.crash {
		go s.m.fail(fmt.Errorf("%w: stdout closed", ErrServerExited))
		return nil
	}
	reply := `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`
	delay := s.probe
	if err == nil && p.Method == "ping" {
		reply, delay = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, p.ID), s.barrier
	}
	if delay >= 0 {
		go func() {
			time.Sleep(delay)
			s.m.dispatchFrame([]byte(reply))
		}()
	}
	return nil
}

// TestBarrierRoundTrip pins the barrier's outcomes and when each is known,
// in a synctest bubble (virtual time, so exact).
func TestBarrierRoundTrip(t *testing.T) {
	const timeout = 5 * time.Second
	never := time.Duration(-1)
	tests := []struct {
		name           string
		srv            barrierServer
		wantErr        error // nil: the probe's -32700
		wantAfter      time.Duration
		barrierAnswerd bool
	}{
		{"answers at once", barrierServer{probe: time.Millisecond, barrier: 2 * time.Millisecond}, nil, 2 * time.Millisecond, true},
		{"answers the frame, never the barrier", barrierServer{probe: time.Millisecond, barrier: never}, nil, time.Millisecond + BarrierGrace, false},
		{"drops the frame", barrierServer{probe: never, barrier: 2 * time.Millisecond}, ErrIgnored, 2*time.Millisecond + BarrierGrace, true},
		{"answers after the barrier, within the grace", barrierServer{probe: 50 * time.Millisecond, barrier: 2 * time.Millisecond}, nil, 50 * time.Millisecond, true},
		{"answers after the grace", barrierServer{probe: time.Second, barrier: 2 * time.Millisecond}, ErrIgnored, 2*time.Millisecond + BarrierGrace, true},
		{"hangs", barrierServer{probe: never, barrier: never}, context.DeadlineExceeded, timeout, false},
		{"crashes on the frame", barrierServer{crash: true, barrier: never}, ErrServerExited, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := newMux(newObserver())
				tc.srv.m = m
				probe := outgoing{frame: []byte(`{"jsonrpc":"2.0","id":"x",`), rawNull: true}
				ping, _ := jsonrpc.NewRequest(7, "ping", nil)
				barrier := outgoing{key: idKey(json.RawMessage("7")), method: "ping", frame: ping}
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				defer cancel()
				start := time.Now()
				res := barrierRoundTrip(ctx, m, tc.srv.write, probe, barrier, BarrierGrace)
				took := time.Since(start)
				switch {
				case tc.wantErr != nil && !errors.Is(res.err, tc.wantErr):
					t.Fatalf("err = %v, want %v", res.err, tc.wantErr)
				case tc.wantErr == nil && (res.err != nil || res.msg == nil || res.msg.Error == nil || res.msg.Error.Code != jsonrpc.CodeParseError):
					t.Fatalf("got %+v, %v; want the probe's -32700", res.msg, res.err)
				}
				if took != tc.wantAfter {
					t.Errorf("outcome known after %v, want %v", took, tc.wantAfter)
				}
				if answered := res.barrier.err == nil && res.barrier.msg != nil; answered != tc.barrierAnswerd {
					t.Errorf("barrier answered = %v, want %v (%+v)", answered, tc.barrierAnswerd, res.barrier)
				}
				synctest.Wait() // replies still due land now (late, noted)
				time.Sleep(2 * time.Second)
				synctest.Wait()
				if n := m.inFlight(); n != 0 {
					t.Errorf("%d waiter(s) left", n)
				}
			})
		})
	}
}

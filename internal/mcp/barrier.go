package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// BarrierGrace is how long SendRawBarrier still waits for the frame's own
// reply once the barrier has been answered (METHODOLOGY, Part I §3).
const BarrierGrace = 200 * time.Millisecond

// ErrIgnored: the server answered a barrier request written after a frame,
// and did not answer the frame itself within the grace: it is alive and
// dropped the frame.
var ErrIgnored = errors.New("mcp: frame ignored: the server answered a later ping but not the frame")

// SendRawBarrier is SendRaw with a barrier on stdio: right after frame it
// writes a ping request on the same connection (a legacy server must answer
// it; a modern one answers it with an error, which is an answer too) and
// waits for whichever comes first:
//   - the frame's reply (an id-less error response, or one with the frame's
//     id), returned as SendRaw returns it once the barrier's reply has been
//     read too (waiting at most grace for it), so that nothing of the
//     exchange is still on its way when the next one starts;
//   - the barrier's reply: the frame's reply is then awaited for grace
//     more, and ErrIgnored is returned when none comes;
//   - neither before ctx or the request timeout ends: ErrTimeout;
//   - the server exiting: ErrServerExited.
//
// Over HTTP every POST gets its own reply, so this is SendRaw.
func (c *Client) SendRawBarrier(ctx context.Context, frame []byte, grace time.Duration) (*jsonrpc.Message, error) {
	if c.stdio == nil {
		return c.SendRaw(ctx, frame)
	}
	if c.closed.Load() {
		return nil, ErrClosed
	}
	probe := c.rawOutgoing(frame)
	rev, modern := c.session()
	mrev := ""
	if modern {
		mrev = rev
	}
	barrier, _, err := c.request("ping", nil, mrev)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	var pdone, bdone func(*jsonrpc.Message, error)
	probe.frame, pdone = c.observe(rctx, probe.frame, nil, true)
	barrier.frame, bdone = c.observe(rctx, barrier.frame, barrier.header, false)
	res := barrierRoundTrip(rctx, c.stdio.mux, c.stdio.write, probe, barrier, grace)
	// The frame's exchange is the one observed last: what is found of the
	// probe is about it, not about the barrier.
	bdone(res.barrier.msg, res.barrier.err)
	pdone(res.probe.msg, res.probe.err)
	err = res.err
	if err != nil && rctx.Err() != nil && errors.Is(err, rctx.Err()) {
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("mcp: raw frame: %w", ctx.Err())
		}
		return nil, fmt.Errorf("mcp: raw frame: %w", ErrTimeout)
	}
	return res.msg, err
}

// barrierResult is what barrierRoundTrip saw of the frame and its barrier.
type barrierResult struct {
	// msg and err are the outcome for the caller.
	msg *jsonrpc.Message
	err error
	// probe and barrier are each exchange's own outcome (for the Observer).
	probe, barrier delivery
}

// barrierRoundTrip writes probe then barrier through write and waits on m
// for their replies (see SendRawBarrier). A reply that comes after the
// barrier's but within grace is the probe's reply.
func barrierRoundTrip(ctx context.Context, m *mux, write func(context.Context, []byte) error, probe, barrier outgoing, grace time.Duration) (res barrierResult) {
	pch, err := m.register(probe.key, true)
	if err != nil {
		res.err, res.probe.err, res.barrier.err = err, err, err
		return res
	}
	answered := false
	defer func() { m.done(probe.key, pch, res.err != nil) }()
	if err := write(ctx, probe.frame); err != nil {
		res.err, res.probe.err, res.barrier.err = err, err, err
		return res
	}
	// bwait is the barrier's channel while it is awaited (nil: not).
	bch, err := m.register(barrier.key, false)
	bwait := bch
	if err != nil {
		res.barrier.err = err
		bwait = nil // wait for the probe alone
	} else {
		defer func() { m.done(barrier.key, bch, !answered) }()
		if err := write(ctx, barrier.frame); err != nil {
			res.barrier.err = err
			bwait = nil
		}
	}
	var graceC <-chan time.Time
	probed := false
	for {
		select {
		case d := <-pch:
			res.probe, res.msg, res.err = d, d.msg, d.err
			pch, probed = nil, true
			if bwait == nil {
				return res
			}
			// The barrier's reply follows at once from a live server:
			// it is read too (for at most grace), so that nothing of
			// this exchange is still on its way when the next begins.
			t := time.NewTimer(grace)
			defer t.Stop()
			graceC = t.C
		case d := <-bwait:
			answered, bwait = true, nil
			res.barrier = d
			if probed {
				return res
			}
			if d.err != nil {
				// The connection failed (the server exited): the probe's
				// waiter gets the same error.
				continue
			}
			t := time.NewTimer(grace)
			defer t.Stop()
			graceC = t.C
		case <-graceC:
			if probed {
				res.barrier.err = ErrNoResponse // not answered within grace
				return res
			}
			res.err, res.probe.err = ErrIgnored, ErrIgnored
			return res
		case <-ctx.Done():
			res.err, res.probe.err = ctx.Err(), ctx.Err()
			if !answered && res.barrier.err == nil {
				res.barrier.err = ctx.Err()
			}
			return res
		}
	}
}

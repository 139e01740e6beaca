package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// seenFrame is one frame an Observer was told of, and how it ended.
type seenFrame struct {
	method, rev string
	raw, ended  bool
	errCode     int
	err         error
}

type recorder struct {
	mu     sync.Mutex
	frames []*seenFrame
}

// observer tags every non-raw request's _meta with "x-seen" and records
// each frame and its outcome.
func (r *recorder) observer(_ context.Context, frame []byte, rev string, raw bool) ([]byte, func(*jsonrpc.Message, error)) {
	p, _ := jsonrpc.PeekFrame(frame)
	f := &seenFrame{method: p.Method, rev: rev, raw: raw}
	r.mu.Lock()
	r.frames = append(r.frames, f)
	r.mu.Unlock()
	var send []byte
	if !raw && p.Kind == jsonrpc.KindRequest {
		var m map[string]any
		if json.Unmarshal(frame, &m) == nil {
			params, _ := m["params"].(map[string]any)
			if params == nil {
				params = map[string]any{}
			}
			meta, _ := params["_meta"].(map[string]any)
			if meta == nil {
				meta = map[string]any{}
			}
			meta["x-seen"] = true
			params["_meta"] = meta
			m["params"] = params
			send, _ = json.Marshal(m)
		}
	}
	return send, func(reply *jsonrpc.Message, err error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if f.ended {
			panic("done called twice")
		}
		f.ended, f.err = true, err
		if reply != nil && reply.Error != nil {
			f.errCode = reply.Error.Code
		}
	}
}

func (r *recorder) list() []seenFrame {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]seenFrame, len(r.frames))
	for i, f := range r.frames {
		out[i] = *f
	}
	return out
}

func TestStdioObserver(t *testing.T) {
	t.Run("modern", func(t *testing.T) {
		rec := &recorder{}
		c := connectFake(t, "modern", func(cfg *Config) { cfg.Observer = rec.observer })
		msg, err := c.Call(context.Background(), "tools/call", map[string]any{"name": "x"})
		if err != nil || msg.Error != nil {
			t.Fatalf("call: %v %+v", err, msg)
		}
		var r struct {
			EchoMeta map[string]any `json:"echoMeta"`
		}
		_ = json.Unmarshal(msg.Result, &r)
		if r.EchoMeta["x-seen"] != true || r.EchoMeta[MetaProtocolVersion] != Rev20260728 {
			t.Fatalf("observer's frame not sent: %v", r.EchoMeta)
		}
		if _, err := c.SendRaw(context.Background(), []byte(`{"jsonrpc":"2.0","id":"p1","method":"nope"}`)); err != nil {
			t.Fatal(err)
		}
		got := rec.list()
		var methods []string
		for _, f := range got {
			methods = append(methods, f.method)
			if !f.ended || f.rev != Rev20260728 {
				t.Errorf("frame %+v", f)
			}
		}
		if strings.Join(methods, ",") != "server/discover,tools/call,nope" {
			t.Fatalf("observed %v", methods)
		}
		if !got[2].raw || got[2].errCode == 0 || got[1].raw {
			t.Errorf("raw frame %+v, call %+v", got[2], got[1])
		}
	})
	t.Run("legacy", func(t *testing.T) {
		rec := &recorder{}
		c := connectFake(t, "legacy", func(cfg *Config) { cfg.Observer = rec.observer })
		if _, err := c.ListTools(context.Background()); err != nil {
			t.Fatal(err)
		}
		var methods []string
		for _, f := range rec.list() {
			methods = append(methods, f.method)
			if !f.ended {
				t.Errorf("frame %+v not ended", f)
			}
		}
		// The discover probe goes unanswered (an error), then the handshake.
		if strings.Join(methods, ",") != "server/discover,initialize,notifications/initialized,tools/list" {
			t.Fatalf("observed %v", methods)
		}
		if f := rec.list()[0]; f.err == nil {
			t.Errorf("unanswered discover ended without error: %+v", f)
		}
		if f := rec.list()[3]; f.rev != Rev20251125 || f.err != nil {
			t.Errorf("tools/list %+v", f)
		}
	})
	t.Run("unset", func(t *testing.T) {
		c := connectFake(t, "modern", nil)
		msg, err := c.Call(context.Background(), "tools/call", map[string]any{"name": "x"})
		if err != nil || bytes.Contains(msg.Result, []byte("x-seen")) {
			t.Fatalf("call: %v %s", err, msg.Result)
		}
	})
}

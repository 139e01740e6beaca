package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/guard"
	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

// exchange sends frame through the rig's proxy and returns every answer
// the client got to it (none for a frame that is not answered). Over
// stdio a ping follows the frame, and what came back before the ping's
// answer is the frame's; over HTTP the answer is the POST's body, and a
// frame that is not answered must get 202 Accepted with no body.
func (r *hostileRig) exchange(t *testing.T, frame string) [][]byte {
	t.Helper()
	switch p := r.peer.(type) {
	case *rawStdio:
		sync := fmt.Sprintf("sync-%d", time.Now().UnixNano())
		if _, err := io.WriteString(p.w, frame+"\n"+`{"jsonrpc":"2.0","id":"`+sync+`","method":"ping"}`+"\n"); err != nil {
			t.Fatal(err)
		}
		var got [][]byte
		for {
			select {
			case l, ok := <-p.lines:
				if !ok {
					t.Fatal("the proxy closed its output")
				}
				pk, err := jsonrpc.PeekFrame(l)
				switch {
				case err == nil && string(pk.ID) == `"`+sync+`"`:
					return got
				case err == nil && pk.Kind == jsonrpc.KindNotification:
					continue // the guard's list_changed
				}
				got = append(got, l)
			case <-time.After(testutil.Hang):
				t.Fatalf("no answer to the ping after %.60s", frame)
			}
		}
	case *rawHTTP:
		ex := do(http.DefaultClient, http.MethodPost, p.url, http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}, []byte(frame))
		if ex.err != nil {
			t.Fatal(ex.err)
		}
		body := bytes.TrimSpace(ex.body)
		if strings.HasPrefix(ex.header.Get("Content-Type"), "text/event-stream") {
			ev, _ := jsonrpc.ReadEvent(bufio.NewReader(bytes.NewReader(ex.body)), 0, nil)
			body = ev.Data
		}
		if len(body) == 0 {
			if ex.status != http.StatusAccepted {
				t.Errorf("an unanswered frame got HTTP %d, want 202", ex.status)
			}
			return nil
		}
		return [][]byte{body}
	}
	t.Fatalf("unknown peer %T", r.peer)
	return nil
}

// idLessCall is a tools/call of tool with no id (a notification's shape).
func idLessCall(tool string) string {
	return `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"` + tool + `","arguments":{}}}`
}

// nullIDCall is a tools/call of tool whose id is null.
func nullIDCall(tool string) string {
	return `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}}}`
}

// TestGuardExaminesIDLessCalls (F3, issue 35): a tools/call without an id
// ("id" absent or null), alone or in a batch, never reaches a server that
// is changed, pending or quarantined, nor calls a tool outside the
// approved set, over stdio and HTTP (JSON and SSE replies). A withheld
// call without an id cannot be answered: it is dropped and counted. The
// server logs every tools/call it receives, so the test sees what reached
// it; the last case (an approved tool on a verified server) shows that an
// id-less call that may pass does reach it, so the log can tell.
func TestGuardExaminesIDLessCalls(t *testing.T) {
	frames := []struct {
		name  string
		frame string
		// refusals is how many guard refusals answer the frame (in one
		// batch when the frame is one).
		refusals int
	}{
		{name: "no id", frame: idLessCall("echo")},
		{name: "null id", frame: nullIDCall("echo")},
		{name: "batch of an id-less call", frame: `[` + idLessCall("echo") + `]`},
		{name: "batch of a null-id call", frame: `[` + nullIDCall("echo") + `]`},
		{name: "batch with a notification", frame: `[{"jsonrpc":"2.0","method":"notifications/progress","params":{}},` + idLessCall("echo") + `]`},
		{name: "batch with a request", frame: `[{"jsonrpc":"2.0","id":"b1","method":"tools/list"},` + idLessCall("echo") + `]`, refusals: 1},
		{name: "ambiguous, no id", frame: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","NAME":"echo"}}`},
	}
	type status struct {
		name    string
		h       *hostile
		posture guard.Posture
		tool    string                            // the tool called
		setup   func(t *testing.T, r *hostileRig) // brings the server to the status
	}
	statuses := []status{
		{name: "quarantined", h: &hostile{after: 100}, posture: guard.PostureDiscovery, tool: "echo", setup: func(t *testing.T, r *hostileRig) {
			r.start(t)
			if _, _, err := r.store.Quarantine("drifting", "", "alice", time.Now()); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "changed", h: &hostile{after: 2}, posture: guard.PostureDiscovery, tool: "echo", setup: func(t *testing.T, r *hostileRig) {
			r.start(t)
			recheckTo(t, r, guard.StatusChanged)
		}},
		{name: "pending", h: &hostile{after: 100}, posture: guard.PostureStrict, tool: "echo", setup: func(t *testing.T, r *hostileRig) {
			r.peer.roundTrip(t, hostileInit)
			r.peer.roundTrip(t, hostileList)
			waitStatus(t, r.store, guard.StatusPending)
		}},
		{name: "verified, tool not approved", h: &hostile{after: 100}, posture: guard.PostureDiscovery, tool: "hidden_delete_all", setup: func(t *testing.T, r *hostileRig) {
			r.start(t)
		}},
	}
	for _, st := range statuses {
		t.Run(st.name, func(t *testing.T) {
			eachRig(t, hostileRigs(t, st.h, st.posture, 0), func(t *testing.T, r *hostileRig) {
				st.setup(t, r)
				dropped := r.g.Dropped()
				for _, fr := range frames {
					frame := strings.ReplaceAll(fr.frame, `"echo"`, `"`+st.tool+`"`)
					before := len(r.calls(t))
					got := r.exchange(t, frame)
					if calls := r.calls(t)[before:]; len(calls) > 0 {
						t.Errorf("%s: the server received %q", fr.name, calls)
					}
					for _, b := range got {
						if bytes.Contains(b, []byte("ran ")) {
							t.Errorf("%s: the server ran the call: %.300s", fr.name, b)
						}
					}
					switch {
					case fr.refusals == 0 && len(got) > 0:
						t.Errorf("%s: an id-less call was answered: %.300s", fr.name, got[0])
					case fr.refusals > 0:
						var elems []json.RawMessage
						if len(got) != 1 || json.Unmarshal(got[0], &elems) != nil || len(elems) != fr.refusals {
							t.Errorf("%s: want a batch of %d refusal(s), got %q", fr.name, fr.refusals, got)
							continue
						}
						for _, e := range elems {
							requireGuardError(t, e)
						}
					}
					dropped++
					if n := r.g.Dropped(); n != dropped {
						t.Errorf("%s: %d id-less calls counted as dropped, want %d", fr.name, n, dropped)
					}
				}
			})
		})
	}
	// The control: an approved tool on a verified server, with no id,
	// reaches the server (and is not counted).
	t.Run("verified, tool approved", func(t *testing.T) {
		eachRig(t, hostileRigs(t, &hostile{after: 100}, guard.PostureDiscovery, 0), func(t *testing.T, r *hostileRig) {
			r.start(t)
			r.exchange(t, idLessCall("echo"))
			if calls := r.calls(t); len(calls) != 1 || !strings.Contains(calls[0], `"echo" id absent`) {
				t.Fatalf("an approved id-less call: the server received %q", calls)
			}
			if n := r.g.Dropped(); n != 0 {
				t.Errorf("%d calls counted as dropped, want 0", n)
			}
		})
	})
}

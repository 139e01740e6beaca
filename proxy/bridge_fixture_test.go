package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// bridgeFixture is the stdio server of the bridge's isolation tests
// (role "bridge-fixture"). It handles every request on a goroutine of its
// own, so requests of several clients are in flight at once, and answers
// a batch with one array once all its members are done (with
// MCPDRILL_BATCH_SPLIT, each member on its own, as it is done). Its tools:
//
//   - echo {text}: answers with the text and the id it saw the request
//     under (structuredContent.id): what the bridge wrote;
//   - hold {key, release}: releases the key release (if any), logs
//     "holding KEY as ID" (notifications/message), then waits until a
//     release of its key and answers "held KEY";
//   - release {key}: releases key;
//   - stray: writes an answer to an id nobody sent and a line that is not
//     JSON, then answers;
//   - chatty {tag, after, ask}: logs "chatty started", waits for the key
//     after (if any), then
//     sends notifications/progress for the request's progressToken and a
//     log, both carrying tag, and with ask a sampling/createMessage
//     request carrying tag, whose answer (or error) it quotes in its own.
//
// initialize and server/discover are answered as a dual-era server would;
// other methods get -32601. A notifications/cancelled releases the key
// "cancelled ID" (ID as sent), and the call it names is not answered.
func bridgeFixture() int {
	f := &fixture{keys: map[string]chan struct{}{}, asks: map[string]chan json.RawMessage{}, out: bufio.NewWriter(os.Stdout)}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if line[0] == '[' {
			var batch []json.RawMessage
			if json.Unmarshal(line, &batch) != nil {
				continue
			}
			if os.Getenv("MCPDRILL_BATCH_SPLIT") != "" { // members answered one by one
				for _, raw := range batch {
					var m fixtureMsg
					if json.Unmarshal(raw, &m) == nil && m.ID != nil {
						go func() {
							if b := f.handle(m); b != nil {
								f.write(b)
							}
						}()
					}
				}
				continue
			}
			go f.batch(batch)
			continue
		}
		var m fixtureMsg
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch {
		case m.Method == "" && m.ID != nil: // an answer to one of ours
			f.mu.Lock()
			ch := f.asks[string(m.ID)]
			f.mu.Unlock()
			if ch != nil {
				ch <- bytes.Clone(line)
			}
		case m.ID != nil:
			go func() {
				if b := f.handle(m); b != nil {
					f.write(b)
				}
			}()
		case m.Method == "notifications/cancelled":
			// A cancelled call is not answered (the spec's SHOULD); a
			// cancellation releases the key "cancelled RID" (RID as
			// sent, quotes included).
			f.release("cancelled " + string(m.Params.RequestID))
		}
	}
	return 0
}

type fixtureMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string `json:"name"`
		Arguments struct {
			Text, Key, Release, Tag, After string
			Ask                            bool
		} `json:"arguments"`
		ProtocolVersion string          `json:"protocolVersion"`
		RequestID       json.RawMessage `json:"requestId"`
		Meta            struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	} `json:"params"`
}

type fixture struct {
	mu   sync.Mutex
	keys map[string]chan struct{}
	asks map[string]chan json.RawMessage
	seq  int

	wmu sync.Mutex
	out *bufio.Writer
}

// key returns the channel that a release of k closes.
func (f *fixture) key(k string) chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.keys[k] == nil {
		f.keys[k] = make(chan struct{})
	}
	return f.keys[k]
}

func (f *fixture) release(k string) {
	ch := f.key(k)
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

func (f *fixture) write(frame []byte) {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	f.out.Write(frame)
	f.out.WriteByte('\n')
	f.out.Flush()
}

func (f *fixture) notify(method string, params any) {
	b, _ := jsonrpc.NewNotification(method, params)
	f.write(b)
}

func (f *fixture) batch(members []json.RawMessage) {
	answers := make([][]byte, len(members))
	var wg sync.WaitGroup
	for i, raw := range members {
		var m fixtureMsg
		if json.Unmarshal(raw, &m) != nil || m.ID == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = f.handle(m)
		}()
	}
	wg.Wait()
	var out [][]byte
	for _, a := range answers {
		if a != nil {
			out = append(out, a)
		}
	}
	f.write(append(append([]byte("["), bytes.Join(out, []byte(","))...), ']'))
}

func (f *fixture) handle(m fixtureMsg) []byte {
	result := func(v any) []byte {
		b, _ := jsonrpc.NewResult(m.ID, v)
		return b
	}
	text := func(s string) []byte {
		return result(map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}, "structuredContent": map[string]any{"id": m.ID, "text": s}})
	}
	a := m.Params.Arguments
	switch m.Method {
	case "initialize":
		return result(map[string]any{"protocolVersion": m.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "bridge-fixture", "version": "1"}})
	case "server/discover":
		return result(map[string]any{"supportedVersions": []string{"2026-07-28", "2025-11-25"}, "capabilities": map[string]any{"tools": map[string]any{}}})
	case "tools/call":
		switch m.Params.Name {
		case "echo":
			return text(a.Text)
		case "release":
			f.release(a.Key)
			return text("released " + a.Key)
		case "stray":
			f.write([]byte(`{"jsonrpc":"2.0","id":"nobody's","result":{"text":"stray answer"}}`))
			f.write([]byte("stray line, not JSON"))
			return text("strayed")
		case "hold":
			if a.Release != "" {
				f.release(a.Release)
			}
			f.notify("notifications/message", map[string]any{"level": "info", "data": fmt.Sprintf("holding %s as %s", a.Key, m.ID)})
			select {
			case <-f.key(a.Key):
				return text("held " + a.Key)
			case <-f.key("cancelled " + string(m.ID)):
				return nil
			}
		case "chatty":
			f.notify("notifications/message", map[string]any{"level": "info", "data": "chatty started"})
			if a.After != "" {
				<-f.key(a.After)
			}
			if m.Params.Meta.ProgressToken != nil {
				f.notify("notifications/progress", map[string]any{"progressToken": m.Params.Meta.ProgressToken, "progress": 1, "message": a.Tag})
			}
			f.notify("notifications/message", map[string]any{"level": "info", "data": "log of " + a.Tag})
			if !a.Ask {
				return text("chatty " + a.Tag)
			}
			f.mu.Lock()
			f.seq++
			id := fmt.Sprintf(`"ask-%d"`, f.seq)
			ch := make(chan json.RawMessage, 1)
			f.asks[id] = ch
			f.mu.Unlock()
			ask, _ := jsonrpc.NewRequest(json.RawMessage(id), "sampling/createMessage", map[string]any{"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "ask of " + a.Tag}}}, "maxTokens": 1})
			f.write(ask)
			answer := <-ch
			return text(fmt.Sprintf("chatty %s answered %s", a.Tag, answer))
		}
	}
	b, _ := jsonrpc.NewErrorResponse(m.ID, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"})
	return b
}

// modernHeaders are the headers of a 2026-07-28 POST of method (and name,
// for a call).
func modernHeaders(method, name string) http.Header {
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {method}}
	if name != "" {
		h.Set("Mcp-Name", name)
	}
	return h
}

// modernCall is a 2026-07-28 tools/call of tool with args under id, with
// a progress token when token is not "".
func modernCall(t testing.TB, id any, tool string, args map[string]any, token string) []byte {
	t.Helper()
	meta := map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{"sampling": map[string]any{}}}
	if token != "" {
		meta["progressToken"] = token
	}
	b, err := jsonrpc.NewRequest(id, "tools/call", map[string]any{"name": tool, "arguments": args, "_meta": meta})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sseRead is an event-stream (or JSON) response read as it comes: every
// event's data on events, then the status and any JSON body on done.
type sseRead struct {
	events chan []byte
	done   chan exchange
}

// post sends body and reads the response as it comes.
func post(url string, hdr http.Header, body []byte) *sseRead {
	r := &sseRead{events: make(chan []byte, 64), done: make(chan exchange, 1)}
	go func() {
		defer close(r.events)
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			r.done <- exchange{err: err}
			return
		}
		req.Header = hdr.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			r.done <- exchange{err: err}
			return
		}
		defer resp.Body.Close()
		ex := exchange{status: resp.StatusCode, header: resp.Header}
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			var buf bytes.Buffer
			_, ex.err = buf.ReadFrom(resp.Body)
			ex.body = buf.Bytes()
			r.done <- ex
			return
		}
		br := bufio.NewReader(resp.Body)
		for {
			ev, err := jsonrpc.ReadEvent(br, 1<<20, func([]byte) {})
			if err != nil {
				break
			}
			r.events <- bytes.Clone(ev.Data)
			ex.body = append(append(ex.body, ev.Data...), '\n')
		}
		r.done <- ex
	}()
	return r
}

package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// TestHTTPStreamMatchesStore: JSON replies streamed because no rule can
// fire on them reach the client unchanged and leave the same events,
// indices and correlation state as the store-and-forward path.
func TestHTTPStreamMatchesStore(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				Arguments struct {
					Size  int  `json:"size"`
					Late  bool `json:"late"`
					Chunk bool `json:"chunk"`
				} `json:"arguments"`
			} `json:"params"`
		}
		_ = json.Unmarshal(b, &req)
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		a := req.Params.Arguments
		text := strings.Repeat("x", a.Size)
		body := `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`
		if a.Late {
			body = `{"jsonrpc":"2.0","result":{"text":"` + text + `"},"id":` + string(req.ID) + `}`
		}
		w.Header().Set("Content-Type", "application/json")
		if !a.Chunk {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		}
		_, _ = io.WriteString(w, body)
	}))
	defer up.Close()
	plans := map[string]string{
		"c2s-live":  "rules:\n  - fault: drop\n    direction: c2s\n    tool: nomatch\n",
		"s2c-limit": "seed: 2\nrules:\n  - fault: error\n    method: tools/call\n    probability: 0.5\n    limit: 2\n  - fault: drop\n    direction: c2s\n    tool: nomatch\n",
		"dead":      "rules:\n  - fault: corrupt\n    probability: 0\n",
		// Live for good on replies to calls of one tool: the others stream.
		"s2c-tool": "rules:\n  - fault: error\n    tool: search\n",
	}
	for name, src := range plans {
		t.Run(name, func(t *testing.T) {
			var streamed int64
			run := func(storeOnly bool) (string, string, [3]uint64, string) {
				var log bytes.Buffer
				h, err := NewHTTP(HTTPOptions{Config: Config{Plan: plan(t, src), Recorder: NewJSONL(&log), MaxFrame: 100 << 10}, Upstream: up.URL + "/mcp"})
				if err != nil {
					t.Fatal(err)
				}
				h.eng.storeOnly = storeOnly
				px := httptest.NewServer(h)
				defer px.Close()
				rng := rand.New(rand.NewPCG(7, 7))
				var got strings.Builder
				for i := 0; i < 40; i++ {
					size := []int{10, 1000, 70 << 10, 200 << 10}[rng.IntN(4)]
					tool := []string{"blob", "search", "other"}[rng.IntN(3)]
					frame := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"size":%d,"late":%v,"chunk":%v}}}`,
						rng.IntN(5), tool, size, rng.IntN(3) == 0, rng.IntN(4) == 0)
					if rng.IntN(6) == 0 {
						frame = `{"jsonrpc":"2.0","method":"notifications/progress"}`
					}
					resp, err := http.Post(px.URL, "application/json", strings.NewReader(frame))
					if err != nil {
						t.Fatal(err)
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					fmt.Fprintf(&got, "%d %d %x\n", resp.StatusCode, len(b), b[:min(len(b), 80)])
				}
				next, pend, n := books(t, h.eng)
				streamed = n
				return got.String(), log.String(), next, pend
			}
			wb, wl, wn, wp := run(true)
			gb, gl, gn, gp := run(false)
			if name == "s2c-tool" && (streamed == 0 || wl == "") {
				t.Errorf("%d replies streamed, events %q: want some of each", streamed, wl)
			}
			if gb != wb {
				t.Errorf("client saw different replies:\n%s\nwant\n%s", gb, wb)
			}
			if gl != wl {
				t.Errorf("event logs differ:\n%s\nwant\n%s", gl, wl)
			}
			if name != "dead" {
				if gn != wn || gp != wp {
					t.Errorf("books differ: %v %s, want %v %s", gn, gp, wn, wp)
				}
			} else if wl != "" {
				t.Errorf("a dead plan logged %s", wl)
			}
		})
	}
}

package drift

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// stepCtx is a context that is live for its first allow looks (Err calls)
// and cancelled from then on: it counts how often a loop looks, and shows
// what the loop does once it sees the end, without any clock.
type stepCtx struct {
	context.Context
	allow int
	calls atomic.Int64
}

func (c *stepCtx) Err() error {
	if c.calls.Add(1) > int64(c.allow) {
		return context.Canceled
	}
	return nil
}

func manyTools(t testing.TB, n int) []mcp.Tool {
	t.Helper()
	out := make([]mcp.Tool, n)
	for i := range out {
		out[i] = valueTool(t, map[string]any{"name": fmt.Sprintf("t%05d", i),
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}})
	}
	return out
}

// diffContext looks at its context once per ctxStride tools and stops at
// the first look that finds it ended: no further tool is compared and no
// partial result is returned.
func TestDiffContextStops(t *testing.T) {
	const n = 10 * ctxStride
	tools := manyTools(t, n)
	ctx := &stepCtx{Context: context.Background(), allow: 3}
	cs, err := diffContext(ctx, tools, tools)
	if !errors.Is(err, context.Canceled) || cs != nil {
		t.Fatalf("diffContext = %d changes, %v; want none and context.Canceled", len(cs), err)
	}
	if got := ctx.calls.Load(); got != 4 {
		t.Errorf("looked at the context %d times, want 4 (three live looks, then the one that stopped it)", got)
	}
	// Never cancelled: one look per stride and one at the end, and the
	// whole comparison.
	live := &stepCtx{Context: context.Background(), allow: 1 << 30}
	cs, err = diffContext(live, tools, manyTools(t, n-1))
	if err != nil || len(cs) != 1 || cs[0].Kind != KindToolRemoved {
		t.Fatalf("diffContext = %v, %v; want the one removed tool", cs, err)
	}
	if got, want := live.calls.Load(), int64(n/ctxStride+1); got != want {
		t.Errorf("looked at the context %d times, want %d", got, want)
	}
	// compareContext passes the end on, with no findings.
	if fs, err := compareContext(&stepCtx{Context: context.Background()}, Side{Tools: tools}, Side{Tools: tools}); !errors.Is(err, context.Canceled) || fs != nil {
		t.Errorf("compareContext = %v, %v", fs, err)
	}
}

// A server that pages its tools one at a time: when the run's context ends
// while the listing is under way, Run asks for no further page, compares
// nothing and returns the context's error.
func TestRunStopsAtDeadlineWhilePaging(t *testing.T) {
	h, err := testbed.NewHandler(testbed.Options{Profile: "good", PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	pages := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"tools/list"`) {
			mu.Lock()
			pages++
			if pages == 2 {
				cancel() // the deadline ends while the second page is served
			}
			mu.Unlock()
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	m := Manifest{Tools: manyTools(t, 3)}
	rep, err := Run(ctx, mcp.Config{URL: srv.URL + testbed.PathMCP, RequestTimeout: 5 * time.Second, MaxListPages: 50}, &m, RunOptions{})
	if !errors.Is(err, context.Canceled) || rep != nil {
		t.Fatalf("Run = %v, %v; want no report and context.Canceled", rep, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if pages != 2 {
		t.Errorf("the server was asked for %d pages, want 2 (none after the end)", pages)
	}
}

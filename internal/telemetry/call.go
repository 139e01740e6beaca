package telemetry

import "sync"

// Call is one traced MCP request: what was asked and the span that recorded
// it. It never holds a header value, an argument or a result.
type Call struct {
	// Method is the JSON-RPC method ("" when the body did not parse).
	Method string
	// Tool is the tool name of a tools/call.
	Tool string
	// Status is the HTTP status (0 when no response arrived).
	Status int
	// TraceID and SpanID are the hex W3C ids of the call's span.
	TraceID, SpanID string
}

// IDs returns the call's trace and span ids, both empty for a zero Call
// (an untraced run).
func (c Call) IDs() (traceID, spanID string) { return c.TraceID, c.SpanID }

// Traced reports whether the call carries span ids.
func (c Call) Traced() bool { return c.SpanID != "" }

// callLog is the ordered record of the calls a run made.
type callLog struct {
	mu    sync.Mutex
	calls []Call
}

// maxCalls bounds the call log (and the number of spans kept for export).
const maxCalls = 100000

func (l *callLog) add(c Call) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.calls) < maxCalls {
		l.calls = append(l.calls, c)
	}
}

func (l *callLog) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.calls)
}

func (l *callLog) since(mark int) []Call {
	l.mu.Lock()
	defer l.mu.Unlock()
	if mark < 0 || mark > len(l.calls) {
		mark = len(l.calls)
	}
	return append([]Call(nil), l.calls[mark:]...)
}

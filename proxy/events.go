package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
)

// Event is one line of the event log (events.jsonl): a fault that fired on
// one frame. It carries no timestamp and no payload bytes, so two runs with
// the same seed and the same traffic write the same lines.
type Event struct {
	Seed    uint64 `json:"seed"`
	Session string `json:"session"`
	// Dir is "c2s" (client→server) or "s2c" (server→client).
	Dir string `json:"dir"`
	// Index is the frame's 0-based position in its direction.
	Index uint64 `json:"index"`
	// Rule is the index of the plan rule that fired; RuleName its name.
	Rule     int    `json:"rule"`
	RuleName string `json:"rule_name"`
	Fault    string `json:"fault"`
	// Action is what the proxy did: forward (the fault found nothing to act
	// on), replace, drop, withhold, delay, duplicate, slow, close, kill.
	Action string `json:"action"`
	// Applied is false when the fault fired but the frame was forwarded
	// untouched (see Note).
	Applied bool   `json:"applied"`
	Kind    string `json:"kind"`
	Method  string `json:"method,omitempty"`
	Tool    string `json:"tool,omitempty"`
	// ID is the JSON-RPC id of the frame (of its request, for a response).
	ID          json.RawMessage `json:"id,omitempty"`
	BytesBefore int             `json:"bytes_before"`
	BytesAfter  int             `json:"bytes_after"`
	Note        string          `json:"note,omitempty"`
}

// Recorder receives every fault that fires. Implementations must be safe
// for concurrent use.
type Recorder interface {
	Record(Event)
}

// JSONL writes events as JSON lines. Write errors are kept and reported by
// Err; recording never blocks the relay on a failed log.
type JSONL struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

// NewJSONL returns a recorder writing to w.
func NewJSONL(w io.Writer) *JSONL { return &JSONL{w: w} }

// Record writes one event line.
func (j *JSONL) Record(e Event) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return
	}
	_, j.err = j.w.Write(b.Bytes())
}

// Err returns the first write error.
func (j *JSONL) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/mcpdrill/mcpdrill/faults"
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

// logHeader is the first line of an event log written by NewJSONLog: the
// plan the events were decided by, seed and session resolved, in the
// plan-file format.
type logHeader struct {
	Plan *faults.Plan `json:"plan"`
}

// NewJSONLog returns a recorder writing to w, after a first line that holds
// plan (`{"plan":{...}}`), so that the log names everything needed to
// decide the same faults again: PlanFromLog reads it back.
func NewJSONLog(w io.Writer, plan *faults.Plan) (*JSONL, error) {
	line, err := json.Marshal(logHeader{Plan: plan})
	if err != nil {
		return nil, fmt.Errorf("proxy: event log header: %w", err)
	}
	if _, err := w.Write(append(line, '\n')); err != nil {
		return nil, fmt.Errorf("proxy: event log header: %w", err)
	}
	return NewJSONL(w), nil
}

// PlanFromLog reads the plan from the header line of an event log written
// by NewJSONLog. ok is false when data does not begin with such a line (a
// plan file, say); err reports a header whose plan is invalid.
func PlanFromLog(data []byte) (p *faults.Plan, ok bool, err error) {
	first, _, _ := bytes.Cut(data, []byte("\n"))
	var h struct {
		Plan json.RawMessage `json:"plan"`
	}
	if json.Unmarshal(first, &h) != nil || len(h.Plan) == 0 || string(h.Plan) == "null" {
		return nil, false, nil
	}
	p, err = faults.ParsePlan(h.Plan)
	if err != nil {
		return nil, true, fmt.Errorf("event log header: %w", err)
	}
	return p, true, nil
}

// PlanOfSession reads the plan of one session of an event log: each
// session starts with a plan line (see NewJSONLog), and
// the one chosen is the last, or with session not empty the last whose
// plan has that session name. isLog is false when data does not start
// with a plan line (a plan file, say).
func PlanOfSession(data []byte, session string) (p *faults.Plan, isLog bool, err error) {
	if _, isLog, err = PlanFromLog(data); !isLog || err != nil {
		return nil, isLog, err
	}
	var names []string
	for n, line := range bytes.Split(data, []byte("\n")) {
		if !bytes.Contains(line, []byte(`"plan"`)) {
			continue // an event line
		}
		lp, ok, err := PlanFromLog(line)
		if err != nil {
			return nil, true, fmt.Errorf("line %d: %w", n+1, err)
		}
		if !ok {
			continue
		}
		names = append(names, lp.Session)
		if session == "" || lp.Session == session {
			p = lp
		}
	}
	if p == nil {
		slices.Sort(names)
		return nil, true, fmt.Errorf("no session %q in the log (its sessions: %s)", session, strings.Join(slices.Compact(names), ", "))
	}
	return p, true, nil
}

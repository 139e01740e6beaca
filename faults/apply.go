package faults

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

// ActionKind is what the proxy does with a frame.
type ActionKind uint8

// Actions.
const (
	// Forward delivers the original bytes untouched.
	Forward ActionKind = iota
	// Replace delivers Action.Bytes instead (cut short when Action.Cut).
	Replace
	// Drop discards the frame (and sends Action.Reply back, if any).
	Drop
	// Withhold discards the frame and, where the transport has a pending
	// exchange for it (an HTTP POST), keeps that exchange open.
	Withhold
	// Delay delivers the frame after Action.Delay on its own timer.
	Delay
	// Duplicate delivers the frame twice.
	Duplicate
	// Slow delivers the frame in writes of Action.Chunk bytes, Action.Gap apart.
	Slow
	// Close ends the connection without delivering the frame.
	Close
	// Kill ends the server process (stdio) without delivering the frame.
	Kill
)

var actionNames = [...]string{"forward", "replace", "drop", "withhold", "delay", "duplicate", "slow", "close", "kill"}

// String returns the action's name as written in the event log.
func (k ActionKind) String() string {
	if int(k) < len(actionNames) {
		return actionNames[k]
	}
	return "unknown"
}

// Action is what [Apply] asks the proxy to do with one frame.
type Action struct {
	Kind ActionKind
	// Bytes is the frame to deliver for Replace (nil otherwise: the original).
	Bytes []byte
	// Cut marks Bytes as a frame cut short: the transport must end it
	// abnormally (stdio: newline after the cut; HTTP: close the connection).
	Cut   bool
	Delay time.Duration
	Chunk int
	Gap   time.Duration
	// Reply is a frame to send back to the sender instead of delivering the
	// frame (an injected error for a request the server never sees).
	Reply []byte
	// Extra is a frame to deliver right after this one, same direction
	// (notifications/tools/list_changed after a changed tools/list).
	Extra []byte
	// Applied is false when the fault fired but found nothing to act on; the
	// frame is then forwarded untouched.
	Applied bool
	// Note is a deterministic detail for the event log ("offset=57",
	// "delay=1.2s", "variant=missing-id", "tool=search").
	Note string
}

// Out returns the bytes to deliver for the frame orig.
func (a Action) Out(orig []byte) []byte {
	if a.Kind == Replace {
		return a.Bytes
	}
	return orig
}

func notApplied(why string) Action { return Action{Kind: Forward, Note: "not applied: " + why} }

// Apply returns the action for a frame and its decision. It is pure: the
// same frame and decision always give the same action, and a decision that
// did not fire always gives Forward.
func Apply(f *Frame, d Decision) Action {
	if !d.Fire {
		return Action{Kind: Forward}
	}
	rng := newStream(d.Roll)
	p := d.Params
	a := applyFault(f, d.Fault, p, rng)
	if a.Kind != Forward || a.Reply != nil {
		a.Applied = true
	}
	return a
}

func applyFault(f *Frame, fault string, p Params, rng *stream) Action {
	switch fault {
	case FaultTimeout:
		return Action{Kind: Withhold}
	case FaultLatency:
		base, jit := p.Duration("latency"), p.Duration("jitter")
		d := base + time.Duration(rng.between(-int64(jit), int64(jit)))
		if d < 0 {
			d = 0
		}
		return Action{Kind: Delay, Delay: d, Note: "delay=" + d.String()}
	case FaultTruncate:
		return truncate(f, p, rng)
	case FaultMalformed:
		return malformed(f, p, rng)
	case FaultError:
		return injectError(f, p)
	case FaultDrop:
		return Action{Kind: Drop}
	case FaultDuplicate:
		return Action{Kind: Duplicate}
	case FaultCorrupt, FaultSchemaBreak:
		return mutatePayload(f, fault, rng)
	case FaultDropTool, FaultRugPull:
		return toolsList(f, fault, p, rng)
	case FaultDisconnect:
		if p.String("mode") == "kill" {
			return Action{Kind: Kill}
		}
		return Action{Kind: Close}
	case FaultSlow:
		chunk := int(p.Int("chunk"))
		if chunk < 1 {
			chunk = 1
		}
		return Action{Kind: Slow, Chunk: chunk, Gap: p.Duration("gap"), Note: fmt.Sprintf("chunk=%d gap=%s", chunk, p.Duration("gap"))}
	}
	return notApplied("unknown fault " + strconv.Quote(fault))
}

func truncate(f *Frame, p Params, rng *stream) Action {
	n := len(f.Raw)
	if n < 2 {
		return notApplied("frame too short to cut")
	}
	var off int
	if k := p.Float("keep"); k > 0 {
		off = int(k * float64(n))
	} else {
		off = int(rng.between(1, int64(n-1)))
	}
	off = max(1, min(off, n-1))
	return Action{Kind: Replace, Bytes: f.Raw[:off:off], Cut: true, Note: fmt.Sprintf("offset=%d", off)}
}

func malformed(f *Frame, p Params, rng *stream) Action {
	variant := p.String("variant")
	if variant == "" || variant == "random" {
		variant = malformedVariants[rng.intn(len(malformedVariants))]
	}
	note := "variant=" + variant
	if variant == "invalid-json" {
		return Action{Kind: Replace, Bytes: breakJSON(f.Raw), Note: note}
	}
	obj, err := decodeObject(f.Raw)
	if err != nil {
		// Not an object: the only violation left to add is broken syntax.
		return Action{Kind: Replace, Bytes: breakJSON(f.Raw), Note: "variant=invalid-json"}
	}
	switch variant {
	case "wrong-version":
		obj["jsonrpc"] = "1.0"
	case "unknown-id":
		obj["id"] = "mcpdrill-unknown-" + strconv.FormatUint(rng.next()&0xffffffff, 16)
	case "missing-id":
		delete(obj, "id")
	case "result-and-error":
		if _, ok := obj["result"]; !ok {
			obj["result"] = map[string]any{}
		}
		if _, ok := obj["error"]; !ok {
			obj["error"] = map[string]any{"code": int64(-32603), "message": "mcpdrill: malformed"}
		}
	}
	return Action{Kind: Replace, Bytes: encode(obj), Note: note}
}

// breakJSON makes a frame unparseable while keeping its length: the last
// closing brace becomes a bracket (or a brace is appended).
func breakJSON(raw []byte) []byte {
	out := bytes.TrimRight(append([]byte(nil), raw...), " \t\r\n")
	if n := len(out); n > 0 && out[n-1] == '}' {
		out[n-1] = ']'
		return out
	}
	return append(out, '}')
}

func injectError(f *Frame, p Params) Action {
	obj, err := decodeObject(f.Raw)
	if err != nil {
		return notApplied("not a JSON object")
	}
	id, hasID := obj["id"]
	if !hasID || id == nil {
		return notApplied("frame has no id to answer")
	}
	code, msg := p.Int("code"), p.String("message")
	resp := encode(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error":   map[string]any{"code": code, "message": msg},
	})
	note := fmt.Sprintf("code=%d", code)
	if f.Kind == KindRequest {
		// The server never sees the request; the proxy answers it.
		return Action{Kind: Drop, Reply: resp, Note: note}
	}
	return Action{Kind: Replace, Bytes: resp, Note: note}
}

func toolsList(f *Frame, fault string, p Params, rng *stream) Action {
	obj, err := decodeObject(f.Raw)
	if err != nil {
		return notApplied("not a JSON object")
	}
	result, _ := obj["result"].(map[string]any)
	tools, _ := result["tools"].([]any)
	if len(tools) == 0 {
		return notApplied("no tools in result")
	}
	var picked []int
	if glob := p.String("name"); glob != "" {
		for i, t := range tools {
			if m, ok := t.(map[string]any); ok {
				if name, _ := m["name"].(string); globMatch(glob, name) {
					picked = append(picked, i)
				}
			}
		}
		if len(picked) == 0 {
			return notApplied("no tool matches " + strconv.Quote(glob))
		}
	} else {
		picked = []int{rng.intn(len(tools))}
	}
	var names []string
	for _, i := range picked {
		if m, ok := tools[i].(map[string]any); ok {
			name, _ := m["name"].(string)
			names = append(names, name)
		}
	}
	if fault == FaultDropTool {
		kept := make([]any, 0, len(tools))
		j := 0
		for i, t := range tools {
			if j < len(picked) && picked[j] == i {
				j++
				continue
			}
			kept = append(kept, t)
		}
		result["tools"] = kept
	} else {
		change := p.String("change")
		for _, i := range picked {
			m, ok := tools[i].(map[string]any)
			if !ok {
				continue
			}
			if change == "description" || change == "both" {
				desc, _ := m["description"].(string)
				m["description"] = desc + " (changed by mcpdrill rug-pull)"
			}
			if change == "schema" || change == "both" {
				m["inputSchema"] = rugPullSchema(m["inputSchema"])
			}
		}
	}
	a := Action{Kind: Replace, Bytes: encode(obj), Note: "tools=" + joinQuoted(names)}
	if p.Bool("notify") {
		a.Extra = []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	}
	return a
}

// rugPullSchema adds a required string property to an input schema.
func rugPullSchema(v any) any {
	s, ok := v.(map[string]any)
	if !ok {
		s = map[string]any{"type": "object"}
	}
	props, ok := s["properties"].(map[string]any)
	if !ok {
		props = map[string]any{}
	}
	props["mcpdrill_rugpull"] = map[string]any{"type": "string", "description": "added by mcpdrill rug-pull"}
	s["properties"] = props
	req, _ := s["required"].([]any)
	s["required"] = append(req, "mcpdrill_rugpull")
	return s
}

func joinQuoted(names []string) string {
	var b bytes.Buffer
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(n))
	}
	return b.String()
}

// maxDecodeContainers bounds the objects and arrays a frame may hold for a
// fault to decode and rewrite it: decoded, a frame of many tiny objects
// costs some thirty times its size (a million tools in 56 MB took 2 GB).
const maxDecodeContainers = 250_000

// errTooManyValues reports a frame with more containers than a fault
// rewrites.
var errTooManyValues = errors.New("faults: the frame holds too many objects and arrays to rewrite")

// decodeObject decodes a JSON object keeping numbers exact. A frame with
// more than maxDecodeContainers brackets (counted inside strings too: an
// upper bound, cheaply) is not decoded.
func decodeObject(raw []byte) (map[string]any, error) {
	if bytes.Count(raw, []byte("{"))+bytes.Count(raw, []byte("[")) > maxDecodeContainers {
		return nil, errTooManyValues
	}
	v, err := jsonvalue.DecodeJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("faults: %w", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("faults: not a JSON object")
	}
	return obj, nil
}

// encode writes v as compact JSON without HTML escaping.
func encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Values come from decodeObject and plain Go maps: cannot fail.
		panic(fmt.Sprintf("faults: encode: %v", err))
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

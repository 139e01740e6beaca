package guard

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzDecodeRecord: any bytes either decode to a valid record that
// re-encodes and decodes to the same record, or fail; never panic.
func FuzzDecodeRecord(f *testing.F) {
	a := mustSet(f, toolsA)
	good, _ := json.Marshal(rec(StatusChanged, &a, &a))
	f.Add(good)
	f.Add([]byte(`{"format":1,"server":"srv","status":"pending","updated_at":"2026-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"format":1`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeRecord(b)
		if err != nil {
			return
		}
		again, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := DecodeRecord(again)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if !sameRecord(r, r2) {
			t.Fatalf("round trip changed the record")
		}
	})
}

// FuzzReadAudit: never panics; every returned event has a server and action.
func FuzzReadAudit(f *testing.F) {
	f.Add([]byte(`{"time":"2026-01-01T00:00:00Z","actor":"a","server":"s","action":"drift","from":"verified","to":"changed"}` + "\n"))
	f.Add([]byte("\n\n{\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		evs, err := ReadAudit(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, ev := range evs {
			if ev.Server == "" || ev.Action == "" {
				t.Fatalf("event without server/action: %+v", ev)
			}
		}
	})
}

// FuzzObserve: for any tool-set document, observing it twice from no
// record never reports drift, and the record is always valid.
func FuzzObserve(f *testing.F) {
	f.Add([]byte(toolsA), []byte(toolsAReordered))
	f.Add([]byte(toolsA), []byte(toolsB))
	f.Fuzz(func(t *testing.T, x, y []byte) {
		sx, ok := parseSet(x)
		if !ok {
			return
		}
		r, ev := Observe(nil, "srv", sx, PostureDiscovery, "p", t0)
		if ev == nil || r.Validate() != nil {
			t.Fatalf("first use: %+v %v", ev, r.Validate())
		}
		if _, ev := Observe(&r, "srv", sx, PostureDiscovery, "p", t1); ev != nil {
			t.Fatalf("same set drifted: %+v", ev)
		}
		sy, ok := parseSet(y)
		if !ok {
			return
		}
		next, ev := Observe(&r, "srv", sy, PostureDiscovery, "p", t1)
		if (sx.Fingerprint != sy.Fingerprint) != (ev != nil && next.Status == StatusChanged) {
			t.Fatalf("fingerprints %s/%s, event %+v", sx.Fingerprint, sy.Fingerprint, ev)
		}
		if err := next.Validate(); err != nil {
			t.Fatal(err)
		}
	})
}

func parseSet(b []byte) (ToolSet, bool) {
	m, err := manifest(b)
	if err != nil {
		return ToolSet{}, false
	}
	return NewToolSet(m), true
}

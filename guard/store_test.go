package guard

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestStoreLifecycleAndAudit(t *testing.T) {
	st := mustOpen(t, filepath.Join(t.TempDir(), "guard"))
	a, b := mustSet(t, toolsA), mustSet(t, toolsB)
	if r, err := st.Get("srv"); r != nil || err != nil {
		t.Fatalf("empty store: %v %v", r, err)
	}
	steps := []struct {
		do   func() (*Record, *Event, error)
		want Status
		act  Action
	}{
		{func() (*Record, *Event, error) { return st.Observe("srv", a, PostureDiscovery, "proxy", t0) }, StatusVerified, ActionFirstUse},
		{func() (*Record, *Event, error) { return st.Observe("srv", a, PostureDiscovery, "proxy", t0) }, StatusVerified, ""},
		{func() (*Record, *Event, error) { return st.Observe("srv", b, PostureDiscovery, "proxy", t1) }, StatusChanged, ActionDrift},
		{func() (*Record, *Event, error) { return st.Quarantine("srv", "looks hostile", "alice", t1) }, StatusQuarantined, ActionQuarantine},
		{func() (*Record, *Event, error) { return st.Release("srv", "alice", t1) }, StatusChanged, ActionRelease},
		{func() (*Record, *Event, error) { return st.Approve("srv", b.Fingerprint, "alice", t1) }, StatusVerified, ActionApprove},
		{func() (*Record, *Event, error) { return st.Observe("srv", b, PostureDiscovery, "proxy", t1) }, StatusVerified, ""},
	}
	var acts []Action
	for i, s := range steps {
		r, ev, err := s.do()
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if r.Status != s.want {
			t.Fatalf("step %d: status %s, want %s", i, r.Status, s.want)
		}
		if (ev == nil) != (s.act == "") || (ev != nil && ev.Action != s.act) {
			t.Fatalf("step %d: event %+v, want %q", i, ev, s.act)
		}
		got, err := st.Get("srv")
		if err != nil || got.Status != s.want {
			t.Fatalf("step %d: stored %v, %v", i, got, err)
		}
		if s.act != "" {
			acts = append(acts, s.act)
		}
	}
	evs, err := st.Audit("")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != len(acts) {
		t.Fatalf("audit has %d events, want %d: %+v", len(evs), len(acts), evs)
	}
	for i, ev := range evs {
		if ev.Action != acts[i] {
			t.Errorf("audit[%d] = %s, want %s", i, ev.Action, acts[i])
		}
	}
	if evs[1].OldFingerprint != a.Fingerprint || evs[1].NewFingerprint != b.Fingerprint || evs[1].From != "verified" || evs[1].To != "changed" {
		t.Errorf("drift event %+v", evs[1])
	}
	if evs[2].Note != "looks hostile" || evs[2].Actor != "alice" {
		t.Errorf("quarantine event %+v", evs[2])
	}
	if other, _ := st.Audit("nobody"); len(other) != 0 {
		t.Errorf("filter: %+v", other)
	}
	list, err := st.List()
	if err != nil || len(list) != 1 || list[0].Server != "srv" {
		t.Fatalf("list %v %v", list, err)
	}
	// No temp files left behind.
	ents, _ := os.ReadDir(st.Dir())
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temp file left: %s", e.Name())
		}
	}
}

func TestStoreCorruptIsAnError(t *testing.T) {
	a := mustSet(t, toolsA)
	for _, tc := range []struct{ name, content string }{
		{"truncated", `{"format":1,"server":"srv","status":"verif`},
		{"not json", "garbage\n"},
		{"bad status", `{"format":1,"server":"srv","status":"trusted","updated_at":"2026-01-01T00:00:00Z"}`},
		{"verified without baseline", `{"format":1,"server":"srv","status":"verified","updated_at":"2026-01-01T00:00:00Z"}`},
		{"wrong server", `{"format":1,"server":"other","status":"pending","updated_at":"2026-01-01T00:00:00Z"}`},
		{"future format", `{"format":2,"server":"srv","status":"pending","updated_at":"2026-01-01T00:00:00Z"}`},
		{"unknown field", `{"format":1,"server":"srv","status":"pending","updated_at":"2026-01-01T00:00:00Z","trust":true}`},
		{"tampered fingerprint", `{"format":1,"server":"srv","status":"verified","baseline":{"fingerprint":"sha256:00","tools":[]},"updated_at":"2026-01-01T00:00:00Z"}`},
		{"empty", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(st.Dir(), "srv.json")
			if err := os.WriteFile(p, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Get("srv"); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Get: %v, want ErrCorrupt", err)
			}
			// Observing must not reset it to first use.
			if _, _, err := st.Observe("srv", a, PostureDiscovery, "proxy", t0); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Observe: %v, want ErrCorrupt", err)
			}
			if b, _ := os.ReadFile(p); string(b) != tc.content {
				t.Fatalf("corrupt file was rewritten: %q", b)
			}
			if _, err := st.List(); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("List: %v", err)
			}
			if evs, _ := st.Audit(""); len(evs) != 0 {
				t.Fatalf("audit written: %+v", evs)
			}
		})
	}
}

func TestAuditCorrupt(t *testing.T) {
	st, _ := Open(t.TempDir())
	a := mustSet(t, toolsA)
	if _, _, err := st.Observe("srv", a, PostureDiscovery, "proxy", t0); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(filepath.Join(st.Dir(), AuditFile), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{\"time\":\"2026-\n")
	f.Close()
	_, err := st.Audit("")
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("err %v", err)
	}
}

func TestServerNames(t *testing.T) {
	for _, ok := range []string{"a", "weather-1", "npx@2.1.0", "A.b_c+d"} {
		if err := ValidServerName(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".hidden", "../x", "a/b", "a b", strings.Repeat("x", 129), "-x", "lock\x00"} {
		if err := ValidServerName(bad); !errors.Is(err, ErrBadServerName) {
			t.Errorf("%q accepted", bad)
		}
	}
	st, _ := Open(t.TempDir())
	if _, err := st.Get("../etc"); !errors.Is(err, ErrBadServerName) {
		t.Errorf("Get(../etc): %v", err)
	}
	for _, tc := range []struct {
		parts  []string
		prefix string
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"}, "npx-"},
		{[]string{"http://127.0.0.1:3000/mcp"}, "127.0.0.1-3000-"},
		{[]string{"/usr/bin/weather"}, "weather-"},
		{[]string{"///"}, "server-"},
		// Only the base name or the host: never an argument, user info,
		// path or query.
		{[]string{"/opt/srv", "--token", "SECRETARG", "API_KEY=SECRETKV"}, "srv-"},
		{[]string{"https://alice:SECRETPW@mcp.example.com:8443/SECRETPATH/mcp?api_key=SECRETQ#SECRETF"}, "mcp.example.com-8443-"},
		{[]string{"http://alice:SECRET/PW@host/mcp"}, "server-"}, // unparsable
	} {
		id := ServerID(tc.parts...)
		if !strings.HasPrefix(id, tc.prefix) || ValidServerName(id) != nil || len(id) != len(tc.prefix)+8 {
			t.Errorf("ServerID(%q) = %q, want prefix %q, 8 hex digits and valid", tc.parts, id, tc.prefix)
		}
		if strings.Contains(id, "SECRET") {
			t.Errorf("ServerID(%q) = %q carries a secret", tc.parts, id)
		}
		if id != ServerID(tc.parts...) {
			t.Errorf("ServerID not stable")
		}
	}
	if ServerID("srv", "a b") == ServerID("srv", "a-b") || ServerID("srv", "--token", "A") == ServerID("srv", "--token", "B") {
		t.Error("ids of different command lines collide")
	}
}

// TestStoreConcurrent runs many proxies' worth of updates on one store from
// separate Store values (separate lock descriptors, as separate processes
// would have): exactly one first use, exactly one drift, a consistent record.
func TestStoreConcurrent(t *testing.T) {
	dir := t.TempDir()
	a, b := mustSet(t, toolsA), mustSet(t, toolsB)
	const n = 8
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := Open(dir)
			if err != nil {
				t.Error(err)
				return
			}
			actor := fmt.Sprintf("proxy-%d", i)
			for range 5 {
				if _, _, err := st.Observe("srv", a, PostureDiscovery, actor, t0); err != nil {
					t.Error(err)
				}
			}
			for range 5 {
				if _, _, err := st.Observe("srv", b, PostureDiscovery, actor, t1); err != nil {
					t.Error(err)
				}
				if _, err := st.Get("srv"); err != nil { // readers never see half a file
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	st, _ := Open(dir)
	r, err := st.Get("srv")
	if err != nil || r.Status != StatusChanged || r.Baseline.Fingerprint != a.Fingerprint || r.LastSeen.Fingerprint != b.Fingerprint {
		t.Fatalf("final record %+v, %v", r, err)
	}
	evs, err := st.Audit("srv")
	if err != nil {
		t.Fatal(err)
	}
	count := map[Action]int{}
	for _, ev := range evs {
		count[ev.Action]++
	}
	// Some proxy may see b before another sees a for the first time: then
	// a sees "reseen". Either way exactly one first use and one drift.
	if count[ActionFirstUse] != 1 || count[ActionDrift] != 1 {
		t.Fatalf("audit %v", count)
	}
}

// TestStoreCacheFollowsTheFile: the decoded-record cache never serves a
// stale, changed or corrupted record, and callers cannot change it.
func TestStoreCacheFollowsTheFile(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a, b := mustSet(t, toolsA), mustSet(t, toolsB)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, _, err := st.Observe("srv", a, PostureDiscovery, "proxy", t0); err != nil {
		t.Fatal(err)
	}
	r1, err := st.Get("srv")
	if err != nil || r1.Status != StatusVerified {
		t.Fatalf("first Get: %+v %v", r1, err)
	}
	// A caller that edits its copy does not edit the next Get's.
	r1.Status = StatusQuarantined
	r1.Baseline.Tools[0] = []byte(`{}`)
	r2, err := st.Get("srv")
	if err != nil || r2.Status != StatusVerified || string(r2.Baseline.Tools[0]) == `{}` {
		t.Fatalf("cached record was changed through a returned copy: %+v %v", r2, err)
	}
	// A change through the store (a new file) is seen at once.
	if _, _, err := st.Observe("srv", b, PostureDiscovery, "proxy", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if r3, err := st.Get("srv"); err != nil || r3.Status != StatusChanged {
		t.Fatalf("after drift: %+v %v", r3, err)
	}
	// So is a file another process or an operator replaced, and a corrupted one.
	p := filepath.Join(st.Dir(), "srv.json")
	other, err := Open(st.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := other.Approve("srv", "", "op", t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if r4, err := st.Get("srv"); err != nil || r4.Status != StatusVerified {
		t.Fatalf("after another store's approve: %+v %v", r4, err)
	}
	if err := os.WriteFile(p, []byte("garbage\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get("srv"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupted file served from the cache: %v", err)
	}
}

func BenchmarkStoreGet(b *testing.B) {
	st, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := st.Observe("srv", mustSet(b, toolsA), PostureDiscovery, "proxy", time.Now()); err != nil {
		b.Fatal(err)
	}
	r, err := st.Get("srv")
	if err != nil {
		b.Fatal(err)
	}
	name := r.Baseline.Names()[len(r.Baseline.Names())-1]
	for b.Loop() {
		if r, err := st.Get("srv"); err != nil || !r.Baseline.Has(name) {
			b.Fatal(r, err)
		}
	}
}

// TestStoreRecoversFromAStop: a store that stopped between a transition's
// audit line and its record (simulated: the line is appended, the record
// is not written) is reconciled by the next writer, in this process or
// another: a rollback line follows, once, and the record keeps its status.
// A torn last line (an append cut short) is skipped by readers and cut
// off by the next writer.
func TestStoreRecoversFromAStop(t *testing.T) {
	dir := t.TempDir()
	st, _ := Open(dir)
	a, b := mustSet(t, toolsA), mustSet(t, toolsB)
	if _, _, err := st.Observe("srv", a, PostureDiscovery, "proxy", t0); err != nil {
		t.Fatal(err)
	}
	cur, _ := st.Get("srv")
	_, ev := Observe(cur, "srv", b, PostureDiscovery, "proxy", t1) // a drift …
	if err := st.appendAudit(ev); err != nil {                     // … whose record is never written
		t.Fatal(err)
	}
	for _, writer := range []*Store{mustOpen(t, dir), st} { // a new process, then the one that stopped
		if _, _, err := writer.Observe("srv", a, PostureDiscovery, "proxy", t1); err != nil {
			t.Fatal(err)
		}
	}
	evs, acts := auditActions(t, st, "srv")
	if fmt.Sprint(acts) != fmt.Sprint([]Action{ActionFirstUse, ActionDrift, ActionRollback}) {
		t.Fatalf("audit %v", acts)
	}
	rb := evs[2]
	if rb.Rule != RuleRollback || rb.From != "changed" || rb.To != "verified" || !strings.Contains(rb.Note, "drift") {
		t.Fatalf("rollback %+v", rb)
	}
	if r, _ := st.Get("srv"); r.Status != StatusVerified || r.Baseline.Fingerprint != a.Fingerprint {
		t.Fatalf("record %+v", r)
	}

	// A torn append: readers skip it, the next writer cuts it off.
	p := filepath.Join(dir, AuditFile)
	before, _ := os.ReadFile(p)
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"time":"2026-`)
	f.Close()
	if got, err := st.Audit("srv"); err != nil || len(got) != 3 {
		t.Fatalf("audit with a torn tail: %d events, %v", len(got), err)
	}
	if _, _, err := mustOpen(t, dir).Quarantine("srv", "", "alice", t1); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(p)
	if !strings.HasPrefix(string(after), string(before)) || strings.Contains(string(after), `{"time":"2026-{`) {
		t.Fatalf("the torn line was not cut off:\n%s", after)
	}
	if got, err := st.Audit("srv"); err != nil || len(got) != 4 || got[3].Action != ActionQuarantine {
		t.Fatalf("audit after the cut: %v, %v", got, err)
	}
}

func mustOpen(t *testing.T, dir string) *Store {
	t.Helper()
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// auditActions reads server's audit log from st and returns its events and
// their actions, in log order.
func auditActions(t *testing.T, st *Store, server string) ([]Event, []Action) {
	t.Helper()
	evs, err := st.Audit(server)
	if err != nil {
		t.Fatal(err)
	}
	acts := make([]Action, len(evs))
	for i, e := range evs {
		acts[i] = e.Action
	}
	return evs, acts
}

// TestStoreRollbackIgnoresClocks: a dangling audit line is found by the
// record's digest of its last line, not by comparing times, so a clock
// that stepped back (the dangling event earlier than the record's last
// update) still gets its rollback; a record from before digests is still
// judged by time.
func TestStoreRollbackIgnoresClocks(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		dir := t.TempDir()
		st := mustOpen(t, dir)
		a, b := mustSet(t, toolsA), mustSet(t, toolsB)
		if _, _, err := st.Observe("srv", a, PostureDiscovery, "proxy", t1); err != nil {
			t.Fatal(err)
		}
		cur, _ := st.Get("srv")
		if !auditDigest.MatchString(cur.AuditLine) {
			t.Fatalf("the record does not carry its line's digest: %q", cur.AuditLine)
		}
		when := t0 // the clock stepped back an hour
		if legacy {
			cur.AuditLine = "" // a record written before digests
			b, err := encodeRecord(cur)
			if err == nil {
				err = st.writeRecord(cur.Server, b)
			}
			if err != nil {
				t.Fatal(err)
			}
			when = t1.Add(time.Minute)
		}
		_, ev := Observe(cur, "srv", b, PostureDiscovery, "proxy", when) // a drift …
		if err := st.appendAudit(ev); err != nil {                       // … whose record is never written
			t.Fatal(err)
		}
		if _, _, err := mustOpen(t, dir).Observe("srv", a, PostureDiscovery, "proxy", t1); err != nil {
			t.Fatal(err)
		}
		evs, err := st.Audit("srv")
		if err != nil {
			t.Fatal(err)
		}
		if n := len(evs); n != 3 || evs[2].Action != ActionRollback {
			t.Fatalf("legacy=%v: audit %+v, want first-use, drift, rollback", legacy, evs)
		}
		// A transition whose record was written gets no rollback.
		if _, _, err := mustOpen(t, dir).Quarantine("srv", "", "alice", t0); err != nil {
			t.Fatal(err)
		}
		if _, _, err := mustOpen(t, dir).Observe("srv", a, PostureDiscovery, "proxy", t0); err != nil {
			t.Fatal(err)
		}
		if evs, _ := st.Audit("srv"); len(evs) != 4 || evs[3].Action != ActionQuarantine {
			t.Fatalf("legacy=%v: a recorded transition was rolled back: %+v", legacy, evs)
		}
	}
}

// TestStoreDeletedRecordIsNotFirstUse: a record removed by hand, whose
// server the audit log knows, does not re-baseline the next set seen in
// discovery posture: the server is held until approved.
func TestStoreDeletedRecordIsNotFirstUse(t *testing.T) {
	st := mustOpen(t, filepath.Join(t.TempDir(), "guard"))
	a, b := mustSet(t, toolsA), mustSet(t, toolsB)
	if _, _, err := st.Observe("srv", a, PostureDiscovery, "proxy", t0); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(st.Dir(), "srv.json")); err != nil {
		t.Fatal(err)
	}
	r, ev, err := st.Observe("srv", b, PostureDiscovery, "proxy", t1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != StatusPending || ev == nil || ev.Action != ActionHold || ev.Note == "" {
		t.Fatalf("after deletion: status %s, event %+v", r.Status, ev)
	}
	// A server the log has never seen is still a first use.
	if r, _, err := st.Observe("other", b, PostureDiscovery, "proxy", t1); err != nil || r.Status != StatusVerified {
		t.Fatalf("a new server: %+v %v", r, err)
	}
}

// TestStoreCutsALongTornLine (F6): a torn append longer than the 64 KiB
// the recovery used to look at is cut whole, the cut is marked in the
// log, and the log reads cleanly after it.
func TestStoreCutsALongTornLine(t *testing.T) {
	dir := t.TempDir()
	st := mustOpen(t, dir)
	if _, _, err := st.Observe("srv", mustSet(t, toolsA), PostureDiscovery, "proxy", t0); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, AuditFile)
	before, _ := os.ReadFile(p)
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"time":"2026-12-01T00:00:00Z","actor":"proxy","server":"srv","action":"drift","note":"` + strings.Repeat("n", 200<<10))
	f.Close()
	if _, _, err := mustOpen(t, dir).Quarantine("srv", "", "alice", t1); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(p)
	if !strings.HasPrefix(string(after), string(before)) || strings.Contains(string(after), "nnnn") {
		t.Fatalf("the torn line was not cut whole (%d bytes before, %d after)", len(before), len(after))
	}
	evs, acts := auditActions(t, st, "srv")
	if fmt.Sprint(acts) != fmt.Sprint([]Action{ActionFirstUse, ActionRollback, ActionQuarantine}) || !strings.Contains(evs[1].Note, "torn") {
		t.Fatalf("audit %v (%+v)", acts, evs)
	}
}

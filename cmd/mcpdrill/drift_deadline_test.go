package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// beforeDeadline returns when its work is done, or at the deadline with
// the context's error if the work is not: a clock in a bubble, no sleeps.
func TestBeforeDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		stuck := make(chan struct{})
		defer close(stuck)
		err := beforeDeadline(ctx, func() { <-stuck })
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err %v, want the deadline", err)
		}
		if el := time.Since(start); el != 10*time.Second {
			t.Errorf("returned after %v of bubble time, want exactly the 10s deadline", el)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ran := false
		if err := beforeDeadline(ctx, func() { time.Sleep(time.Second); ran = true }); err != nil || !ran {
			t.Fatalf("err %v, ran %v: work done before the deadline is used", err, ran)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := beforeDeadline(ctx, func() { t.Error("work started after the end") }); !errors.Is(err, context.Canceled) {
		t.Errorf("err %v", err)
	}
}

// drift's deadline counts from the start of the command: reading and
// decoding the manifest is part of the run it bounds, and a deadline that
// ends there ends the run with exit 3, before any server is started.
func TestDriftDeadlineCoversManifest(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(`{"tools":[`)
	for i := range 2000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"t%d","inputSchema":{"type":"object"}}`, i)
	}
	b.WriteString(`]}`)
	manifest := filepath.Join(dir, "tools.json")
	if err := os.WriteFile(manifest, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "started")
	code, out, errOut := runCLI(t, "drift", manifest, "--deadline", "1ns", "--", "sh", "-c", "touch "+marker)
	if code != exitUnreachable || !strings.Contains(errOut, "reading the manifest") || !strings.Contains(errOut, "deadline") {
		t.Errorf("exit %d, stderr %q; want 3 and the deadline named while reading the manifest", code, errOut)
	}
	if out != "" {
		t.Errorf("wrote a report: %q", out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the server was started after the deadline ended")
	}
}

// The tools of both sides are gathered once each, in first-seen order,
// whatever their number (a set, not a scan of the list per name).
func TestDriftPlaceAdd(t *testing.T) {
	p := newDriftPlace("m.json", []byte(`[]`), nil, time.Now)
	p.add([]string{"b", "a", "b"})
	p.add([]string{"c", "a"})
	if got := strings.Join(p.tools, ","); got != "b,a,c" {
		t.Errorf("tools %s", got)
	}
}

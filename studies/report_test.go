package studies

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fixture is the fake study's results: deterministic outside Meta.
func fixture(t *testing.T) *Results {
	t.Helper()
	var active, peak atomic.Int32
	res, err := Run(context.Background(), parseFake(t), fakeOptions(&active, &peak, 4))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the golden file (run with -update to accept):\n%s", name, got)
	}
}

func TestMarkdownGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, fixture(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.md", b.Bytes())
}

func TestHTMLGolden(t *testing.T) {
	var b bytes.Buffer
	res := fixture(t)
	if err := HTML(&b, res); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	golden(t, "scoreboard.html", b.Bytes())
	// Self-contained: nothing is loaded from anywhere.
	for _, bad := range []string{"src=", "href=", "@import", "url(", "<link", "<iframe"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page references an external asset (%q)", bad)
		}
	}
	if n := strings.Count(page, "<tr data-server="); n != len(res.Servers) {
		t.Errorf("%d table rows, want %d", n, len(res.Servers))
	}
	if n := strings.Count(page, `<svg class="axis"`); n != 6 {
		t.Errorf("%d axis charts, want 6", n)
	}
}

func TestReportsIgnoreMeta(t *testing.T) {
	a := fixture(t)
	b := fixture(t)
	b.Meta = Meta{ToolVersion: "other", DurationMS: 99, StartedAt: "2030-01-01T00:00:00Z"}
	for _, render := range []func(*Results) string{
		func(r *Results) string { var w bytes.Buffer; _ = Markdown(&w, r); return w.String() },
		func(r *Results) string { var w bytes.Buffer; _ = HTML(&w, r); return w.String() },
	} {
		if render(a) != render(b) {
			t.Fatal("a report depends on meta")
		}
	}
}

// chromium returns the path of a headless-capable Chromium, skipping the test
// when there is none unless MCPDRILL_REQUIRE_CHROMIUM is set.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("MCPDRILL_REQUIRE_CHROMIUM") != "" {
		t.Fatal("chromium not found (apt-get install -y chromium)")
	}
	t.Skip("chromium not found (apt-get install -y chromium); set MCPDRILL_REQUIRE_CHROMIUM to fail instead")
	return ""
}

// TestScoreboardInChromium loads the page in headless Chromium and checks
// what it renders after its script ran: one row per server, and the sort
// requested in the URL fragment applied.
func TestScoreboardInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("browser")
	}
	bin := chromium(t)
	res := fixture(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "index.html")
	var b bytes.Buffer
	if err := HTML(&b, res); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--dump-dom", "file://"+page+"#sort=tools:desc")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	s := string(dom)
	rows := regexp.MustCompile(`<tr data-server="([^"]+)"`).FindAllStringSubmatch(s, -1)
	if len(rows) != len(res.Servers) {
		t.Fatalf("rendered %d rows, want %d (one per server)", len(rows), len(res.Servers))
	}
	if !strings.Contains(s, `data-rows="`+strconv.Itoa(len(res.Servers))+`"`) {
		t.Fatal("the page script did not run to the end (no data-rows on <html>)")
	}
	if !strings.Contains(s, `data-sorted="tools:desc"`) {
		t.Fatal("the #sort fragment was not applied")
	}
	// alpha has the most tools (10) and must come first when sorted by tools.
	if rows[0][1] != "alpha" {
		t.Fatalf("first row after sorting by tools: %q, want alpha", rows[0][1])
	}
	// Failed servers (tools -1) sink to the bottom in descending order.
	last := rows[len(rows)-1][1]
	for _, r := range res.Servers {
		if r.Name == last && r.Status == StatusScanned {
			t.Fatalf("a scanned server (%s) sorted below the failed ones", last)
		}
	}
}

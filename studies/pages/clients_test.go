package pages

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/clientdrill"
	"github.com/mcpdrill/mcpdrill/studies"
)

// clientFixture is a client study of ten clients with every cell filled.
func clientFixture() *studies.ClientResults {
	r := &studies.ClientResults{SchemaVersion: 1, Meta: studies.ClientMeta{Seed: 0, TimeoutMS: 2000, Revision: "2025-11-25"}}
	for _, sc := range clientdrill.Catalogue() {
		r.Scenarios = append(r.Scenarios, sc.ID)
	}
	outcomes := []clientdrill.Outcome{clientdrill.Surfaced, clientdrill.TimedOut, clientdrill.Accepted, clientdrill.Hung, clientdrill.Delivered}
	for i := range 10 {
		row := studies.ClientRow{ClientEntry: studies.ClientEntry{Name: "client-with-a-long-name-" + strconv.Itoa(i), Package: "@scope/package-" + strconv.Itoa(i), Version: "1.2.3", Kind: "library"}}
		for j, s := range r.Scenarios {
			for _, t := range clientTransports {
				o := outcomes[(i+j)%len(outcomes)]
				row.Results = append(row.Results, clientdrill.Result{Scenario: s, Transport: t, Outcome: o, Expected: o == clientdrill.Surfaced,
					Tags:     []clientdrill.Tag{clientdrill.TagCancelled, clientdrill.TagBlindRetry, clientdrill.TagReconnected, clientdrill.TagRecovered},
					Evidence: clientdrill.Evidence{App: "faulted call: ok <b>carrying</b> the lie", Exit: "exit status 0", Wire: []string{"c1 tools/call lookup (the faulted call)"}}})
			}
		}
		r.Clients = append(r.Clients, row)
	}
	return r
}

// Every cell of the matrix links to its evidence, and the evidence is
// escaped.
func TestClientsPage(t *testing.T) {
	r := clientFixture()
	var b bytes.Buffer
	if err := ClientsHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	links := regexp.MustCompile(`href="#(e-[^"]+)"`).FindAllStringSubmatch(page, -1)
	if want := 10 * len(r.Scenarios) * 2; len(links) != want {
		t.Fatalf("%d cell links, want %d", len(links), want)
	}
	for _, l := range links {
		if !strings.Contains(page, `id="`+l[1]+`"`) {
			t.Fatalf("cell link %s has no evidence", l[1])
		}
	}
	if strings.Contains(page, "<b>carrying</b>") {
		t.Error("evidence reached the page unescaped")
	}
	var md bytes.Buffer
	if err := ClientsMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "300 cells observed") {
		t.Errorf("summary lacks the cell count:\n%s", md.String())
	}
}

// The page fits a 1400-px window in headless Chromium, and a cell's link
// makes its (visible) evidence row the target.
func TestClientsPageInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("runs chromium")
	}
	bin := chromium(t)
	dir := t.TempDir()
	var b bytes.Buffer
	if err := ClientsHTML(&b, clientFixture()); err != nil {
		t.Fatal(err)
	}
	probe := `<script>
var r = document.documentElement;
r.dataset.scrollWidth = String(r.scrollWidth);
r.dataset.innerWidth = String(window.innerWidth);
var a = document.querySelector('#matrix a');
var target = document.getElementById(a.getAttribute('href').slice(1));
a.click();
r.dataset.evidenceInView = String(document.querySelector(':target') === target && target.checkVisibility());
</script></body>`
	page := filepath.Join(dir, "index.html")
	if err := os.WriteFile(page, []byte(strings.Replace(b.String(), "</body>", probe, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars", "--window-size=1400,1000",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--dump-dom", "file://"+page)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	attr := func(name string) string {
		m := regexp.MustCompile(name + `="([^"]*)"`).FindStringSubmatch(string(dom))
		if m == nil {
			t.Fatalf("no %s on <html>: the probe did not run", name)
		}
		return m[1]
	}
	sw, _ := strconv.Atoi(attr("data-scroll-width"))
	iw, _ := strconv.Atoi(attr("data-inner-width"))
	if sw > iw || iw != 1400 {
		t.Errorf("page is %d px wide in a %d-px window", sw, iw)
	}
	if attr("data-evidence-in-view") != "true" {
		t.Error("a cell's link does not bring its evidence into view")
	}
}

package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcpdrill/mcpdrill/guard"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/hostile"
	"github.com/mcpdrill/mcpdrill/internal/safetext"
)

// The abuse list of text a server controls (what internal/safetext
// defends against), each fed to every command and format by
// TestHostileText through the hostile fixture (internal/mcptest/hostile):
//
//   - terminal escapes in a server name, a tool name, a description, an
//     error message, stderr, a workspace file's argv: OSC 52 writes the
//     clipboard, CSI 2J clears the screen, OSC 8 plants a hyperlink, a C1
//     CSI does the same in 8-bit form;
//   - CR and backspace rewrite what was printed before them on the line;
//   - bidirectional overrides (U+202E, U+2066–2069) reorder what is read;
//   - NUL and DEL, and bytes that are not UTF-8;
//   - a line starting "::" (or "  ::", or after a line break) is a GitHub
//     Actions workflow command (::error, ::add-mask::, ::set-output);
//     "##[" anywhere in a line is the runner's older form;
//   - Markdown links and images, raw HTML and autolinks in a summary;
//   - HTML in a scoreboard page.

// outputKind is how an output is read, which decides what it may hold.
type outputKind int

const (
	// terminal: a table, a progress line, an error (stdout and stderr).
	terminal outputKind = iota
	// annotations: the github format, read by the Actions runner.
	annotations
	// jsonOut: JSON and SARIF documents.
	jsonOut
	// junitOut: JUnit XML.
	junitOut
	// markdownOut: a study summary.
	markdownOut
	// htmlOut: a study scoreboard.
	htmlOut
)

// annotationLine is one of the github format's own workflow commands.
var annotationLine = regexp.MustCompile(`^::(error|warning|notice) file=[^:]*,line=\d+,title=[^:]*::`)

// hostileChecker checks outputs for what the corpus must never bring.
type hostileChecker struct {
	t    *testing.T
	seen map[outputKind]int
	// escaped counts outputs in which a corpus string showed up escaped,
	// so that the test is known to have carried the corpus through.
	escaped int
}

func (hc *hostileChecker) check(what string, kind outputKind, out string) {
	t := hc.t
	t.Helper()
	hc.seen[kind]++
	if !utf8.ValidString(out) {
		t.Errorf("%s: not UTF-8", what)
	}
	if strings.Contains(out, `\x1b`) || strings.Contains(out, `\u202e`) || strings.Contains(out, `\\x1b`) || strings.Contains(out, `u202e`) {
		hc.escaped++
	}
	for i, r := range out {
		if r == '\n' {
			continue
		}
		if safetext.Unsafe(r) {
			t.Errorf("%s: unsafe character %U at byte %d: …%q…", what, r, i, out[max(0, i-40):min(len(out), i+40)])
			break
		}
	}
	if strings.Contains(out, "##[") {
		t.Errorf("%s: a ##[ workflow command", what)
	}
	for n, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(strings.TrimLeftFunc(line, unicode.IsSpace), "::") {
			continue
		}
		if kind != annotations || !annotationLine.MatchString(line) {
			t.Errorf("%s: line %d is a workflow command: %q", what, n+1, line)
		}
	}
	switch kind {
	case jsonOut:
		if !json.Valid([]byte(out)) {
			t.Errorf("%s: not JSON", what)
		}
		var doc struct {
			Runs []struct {
				Results []struct {
					Message struct{ Text string } `json:"message"`
				} `json:"results"`
			} `json:"runs"`
		}
		if json.Unmarshal([]byte(out), &doc) == nil {
			for _, run := range doc.Runs {
				for _, r := range run.Results {
					hc.checkSARIFText(what, r.Message.Text)
				}
			}
		}
	case junitOut:
		hc.checkJUnit(what, out)
	case markdownOut:
		for _, raw := range []string{"[click](", "![img](", "<img", "<script", "www.evil", "me@evil", "https://evil", "\\[click\\](https://"} {
			if strings.Contains(out, raw) {
				t.Errorf("%s: %q reached the Markdown as it is", what, raw)
			}
		}
	case htmlOut:
		for _, raw := range []string{"<img src=x", "<script>alert"} {
			if strings.Contains(out, raw) {
				t.Errorf("%s: %q reached the page as it is", what, raw)
			}
		}
	}
}

// checkSARIFText: a SARIF message is plain text whose "[text](target)"
// viewers turn into a link; every bracket must be escaped.
func (hc *hostileChecker) checkSARIFText(what, text string) {
	hc.t.Helper()
	for _, r := range text {
		if r != '\n' && safetext.Unsafe(r) {
			hc.t.Errorf("%s: SARIF message holds %U: %q", what, r, text)
			return
		}
	}
	for i := 0; i < len(text); i++ {
		if text[i] != '[' && text[i] != ']' {
			continue
		}
		n := 0
		for j := i - 1; j >= 0 && text[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			hc.t.Errorf("%s: SARIF message with an unescaped bracket: %q", what, text)
			return
		}
	}
}

// checkJUnit decodes a JUnit document and checks every attribute and text
// as a CI log would show it.
func (hc *hostileChecker) checkJUnit(what, out string) {
	hc.t.Helper()
	dec := xml.NewDecoder(strings.NewReader(out))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			hc.t.Errorf("%s: not XML: %v", what, err)
			return
		}
		var texts []string
		switch v := tok.(type) {
		case xml.StartElement:
			for _, a := range v.Attr {
				texts = append(texts, a.Value)
			}
		case xml.CharData:
			texts = append(texts, string(v))
		}
		for _, s := range texts {
			for _, r := range s {
				if r != '\n' && safetext.Unsafe(r) {
					hc.t.Errorf("%s: JUnit text holds %U: %q", what, r, s)
					return
				}
			}
			for _, l := range strings.Split(s, "\n") {
				if strings.HasPrefix(strings.TrimLeftFunc(l, unicode.IsSpace), "::") {
					hc.t.Errorf("%s: JUnit text with a workflow command line: %q", what, l)
				}
			}
		}
	}
}

// formatKind is how an output of --format f is read.
func formatKind(f string) outputKind {
	switch f {
	case "github":
		return annotations
	case "json", "sarif":
		return jsonOut
	case "junit":
		return junitOut
	}
	return terminal
}

// TestHostileText runs the hostile server (its name, version, tool names,
// descriptions, error messages and stderr are the corpus) through scan,
// drift, fingerprint, guard diff and status, scan --config of a workspace
// file naming it (with a hostile server name and argv), configs, study run
// and study report, in every format and in the table's compact layout,
// and checks every stdout, stderr and file they write.
func TestHostileText(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	srv := httptest.NewServer(hostile.Handler())
	t.Cleanup(srv.Close)
	url := srv.URL + "/mcp"
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, v any) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var b []byte
		if s, ok := v.(string); ok {
			b = []byte(s)
		} else if b, err = json.MarshalIndent(v, "", "  "); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A manifest with the same tools, described otherwise and one renamed:
	// drift finds changes naming each tool.
	var manifestTools []map[string]any
	for i, tool := range hostile.Tools() {
		tool["description"] = "plain"
		if i == 0 {
			tool["name"] = "gone" + hostile.Strings[2]
		}
		manifestTools = append(manifestTools, tool)
	}
	manifest := write("tools.json", map[string]any{"tools": manifestTools})
	// A workspace file naming the stdio server (this binary) with a
	// hostile name and argv, and the HTTP one.
	// A server name: a few of the strings (a name has at most 200 bytes
	// and no NUL or line break).
	name := hostile.Strings[0] + hostile.Strings[6] + hostile.Strings[10] + hostile.Strings[14] + hostile.Strings[16]
	ws := write("ws/.vscode/mcp.json", map[string]any{"servers": map[string]any{
		name:   map[string]any{"command": self, "args": append([]string{"-test.run=^$"}, hostile.Strings...), "env": map[string]string{hostile.EnvChild: "serve"}},
		"http": map[string]any{"url": url},
	}})
	// servers.json for a study: the same, and a server that dies during
	// the handshake after writing the corpus on stderr.
	spec := write("servers.json", map[string]any{"mcpServers": map[string]any{
		name:    map[string]any{"command": self, "args": []string{"-test.run=^$"}, "env": map[string]string{hostile.EnvChild: "serve"}},
		"crash": map[string]any{"command": self, "args": []string{"-test.run=^$"}, "env": map[string]string{hostile.EnvChild: "crash"}},
		"http":  map[string]any{"url": url},
	}})
	// A guard store whose approved set is the manifest's; the live server
	// differs from it in every description.
	store := filepath.Join(dir, "guard")
	st, err := guard.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	var approved []mcp.Tool
	for _, tool := range manifestTools {
		b, _ := json.Marshal(tool)
		approved = append(approved, mcp.ParseTool(b))
	}
	if _, _, err := st.Observe("srv", guard.NewToolSet(approved), guard.PostureDiscovery, "test", time.Now()); err != nil {
		t.Fatal(err)
	}

	hc := &hostileChecker{t: t, seen: map[outputKind]int{}}
	run := func(kind outputKind, args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(t, args...)
		what := strings.Join(args[:min(len(args), 3)], " ")
		if code == exitInternal || code == exitUsage {
			t.Errorf("%s: exit %d\n%s", what, code, errOut)
		}
		hc.check(what+" stdout", kind, out)
		hc.check(what+" stderr", terminal, errOut)
		return out
	}
	for _, f := range []string{"table", "json", "sarif", "junit", "github"} {
		k := formatKind(f)
		run(k, "scan", "--url", url, "--format", f, "--fail-on", "never", "--no-second-connection")
		run(k, "scan", "--trust-workspace", "--config", ws, "--format", f, "--fail-on", "never", "--no-second-connection")
		run(k, "drift", manifest, "--url", url, "--format", f, "--fail-on", "never")
		run(k, "study", "run", spec, "--format", f, "-q", "--no-second-connection", "--timeout", "30s")
	}
	t.Setenv("COLUMNS", "80") // the compact layout: records, wrapped
	run(terminal, "scan", "--url", url, "--fail-on", "never", "--no-second-connection")
	run(terminal, "scan", "--trust-workspace", "--config", ws, "--fail-on", "never", "--no-second-connection")
	run(terminal, "drift", manifest, "--url", url, "--fail-on", "never")
	run(terminal, "study", "run", spec, "--format", "table", "--no-second-connection", "--timeout", "30s")
	t.Setenv("COLUMNS", "")
	run(terminal, "fingerprint", "--url", url, "--tools")
	run(jsonOut, "fingerprint", "--url", url, "--json")
	run(terminal, "guard", "diff", "--dir", store, "srv", "--url", url)
	run(jsonOut, "guard", "diff", "--dir", store, "--json", "srv", "--url", url)
	run(terminal, "configs", "--workspace", filepath.Join(dir, "ws"))
	run(jsonOut, "configs", "--workspace", filepath.Join(dir, "ws"), "--json")

	results := filepath.Join(dir, "results.json")
	run(terminal, "study", "run", spec, "-o", results, "--no-second-connection", "--timeout", "30s")
	hc.check("results.json", jsonOut, string(mustRead(t, results)))
	pages := filepath.Join(dir, "pages")
	run(terminal, "study", "report", results, "-o", pages)
	hc.check("SUMMARY.md", markdownOut, string(mustRead(t, filepath.Join(pages, "SUMMARY.md"))))
	hc.check("index.html", htmlOut, string(mustRead(t, filepath.Join(pages, "index.html"))))

	// The guard sees the hostile set last: status shows it.
	if _, _, err := runCLIQuiet(t, "guard", "diff", "--dir", store, "srv", "--url", url); err != nil {
		t.Fatal(err)
	}
	run(terminal, "guard", "status", "--dir", store)
	run(jsonOut, "guard", "status", "--dir", store, "--json")

	if hc.escaped < 10 {
		t.Errorf("the corpus showed up escaped in only %d outputs: is it reaching them?", hc.escaped)
	}
	for _, k := range []outputKind{terminal, annotations, jsonOut, junitOut, markdownOut, htmlOut} {
		if hc.seen[k] == 0 {
			t.Errorf("no output of kind %d checked", k)
		}
	}
	t.Logf("checked %d outputs, the corpus escaped in %d", func() (n int) {
		for _, c := range hc.seen {
			n += c
		}
		return
	}(), hc.escaped)
}

// runCLIQuiet runs the CLI for its side effects.
func runCLIQuiet(t *testing.T, args ...string) (int, string, error) {
	t.Helper()
	code, _, errOut := runCLI(t, args...)
	if code == exitInternal || code == exitUsage {
		return code, errOut, fmt.Errorf("exit %d: %s", code, errOut)
	}
	return code, errOut, nil
}

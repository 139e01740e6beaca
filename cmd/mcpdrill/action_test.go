package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

// The GitHub Action (action.yml), its shell steps (scripts/action.sh) and
// the example workflow (examples/github/mcpdrill-drift.yml).

// workflowStep is a step of a composite action or of a workflow job.
type workflowStep struct {
	ID    string            `yaml:"id"`
	Name  string            `yaml:"name"`
	If    string            `yaml:"if"`
	Uses  string            `yaml:"uses"`
	Run   string            `yaml:"run"`
	Shell string            `yaml:"shell"`
	With  map[string]string `yaml:"with"`
	Env   map[string]string `yaml:"env"`
}

type actionFile struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Author      string `yaml:"author"`
	Branding    struct {
		Icon  string `yaml:"icon"`
		Color string `yaml:"color"`
	} `yaml:"branding"`
	Inputs map[string]struct {
		Description string  `yaml:"description"`
		Required    bool    `yaml:"required"`
		Default     *string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
		Value       string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string         `yaml:"using"`
		Steps []workflowStep `yaml:"steps"`
	} `yaml:"runs"`
}

// readYAML decodes a YAML file strictly (an unknown key is an error) and
// returns its node tree too, for the comments.
func readYAML(t *testing.T, path string, v any) *yaml.Node {
	t.Helper()
	data := mustRead(t, path)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &n
}

var (
	// pinnedUses is a third-party action pinned by a full commit SHA.
	pinnedUses = regexp.MustCompile(`^[\w.-]+/[\w./-]+@[0-9a-f]{40}$`)
	// expr is a ${{ … }} expression; inputRef and stepRef what it reads.
	expr     = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)
	inputRef = regexp.MustCompile(`\binputs\.([\w-]+)`)
	stepRef  = regexp.MustCompile(`\bsteps\.([\w-]+)\.outputs\.([\w-]+)`)
)

// usesComments maps each "uses:" value of a YAML tree to its line comment.
func usesComments(n *yaml.Node, out map[string]string) {
	for i := 0; i+1 < len(n.Content); i++ {
		if k := n.Content[i]; n.Kind == yaml.MappingNode && i%2 == 0 && k.Value == "uses" {
			out[n.Content[i+1].Value] = n.Content[i+1].LineComment
		}
	}
	for _, c := range n.Content {
		usesComments(c, out)
	}
}

// scriptSteps are the subcommands of scripts/action.sh the action runs.
var scriptSteps = []string{"install", "run", "finish"}

func TestActionYAML(t *testing.T) {
	root := testutil.ModuleRoot(t)
	var a actionFile
	node := readYAML(t, filepath.Join(root, "action.yml"), &a)
	if a.Name == "" || a.Description == "" || a.Runs.Using != "composite" {
		t.Fatalf("name %q, description %q, runs.using %q: want a named, described composite action", a.Name, a.Description, a.Runs.Using)
	}
	for _, in := range []string{"command", "args", "sarif-file", "fail-on", "upload"} {
		if i, ok := a.Inputs[in]; !ok || i.Description == "" {
			t.Errorf("input %s missing or undescribed", in)
		}
	}
	if !a.Inputs["args"].Required {
		t.Error("input args is not required")
	}
	for name, want := range map[string]string{"command": "drift", "sarif-file": "mcpdrill.sarif", "fail-on": "error", "upload": "true"} {
		if d := a.Inputs[name].Default; d == nil || *d != want {
			t.Errorf("input %s: default %v, want %q", name, d, want)
		}
	}

	comments := map[string]string{}
	usesComments(node, comments)
	ids := map[string]bool{}
	var ran []string
	upload := false
	for _, s := range a.Runs.Steps {
		if s.ID != "" {
			ids[s.ID] = true
		}
		switch {
		case s.Uses != "":
			// Third-party code runs pinned to a commit, its tag in a comment.
			if !pinnedUses.MatchString(s.Uses) || !regexp.MustCompile(`^v\d+(\.\d+)*$`).MatchString(strings.TrimSpace(strings.TrimPrefix(comments[s.Uses], "#"))) {
				t.Errorf("step %q: uses %q %q, want owner/repo@<40-hex commit> # vX.Y.Z", s.Name, s.Uses, comments[s.Uses])
			}
			if strings.HasPrefix(s.Uses, "github/codeql-action/upload-sarif@") {
				upload = s.With["sarif_file"] == "${{ steps.run.outputs.sarif-file }}"
			}
		case s.Run != "":
			// Shell steps are the script's subcommands; inputs reach them
			// through env, never written into the script text.
			if s.Shell != "bash" || strings.Contains(s.Run, "${{") {
				t.Errorf("step %q: shell %q, run %q: want bash and no ${{ }} in run", s.Name, s.Shell, s.Run)
			}
			sub, ok := strings.CutPrefix(s.Run, `bash "$ACTION_PATH/scripts/action.sh" `)
			if !ok || !slices.Contains(scriptSteps, sub) || s.Env["ACTION_PATH"] != "${{ github.action_path }}" {
				t.Errorf("step %q runs %q (ACTION_PATH %q): want scripts/action.sh install|run|finish", s.Name, s.Run, s.Env["ACTION_PATH"])
			}
			ran = append(ran, sub)
		default:
			t.Errorf("step %q neither uses nor runs anything", s.Name)
		}
	}
	if !slices.Equal(ran, scriptSteps) || !upload {
		t.Errorf("script steps %v, upload-sarif of the run step's file %v: want %v and an upload", ran, upload, scriptSteps)
	}

	// Every expression reads a declared input and an existing step.
	for _, m := range expr.FindAllStringSubmatch(string(mustRead(t, filepath.Join(root, "action.yml"))), -1) {
		for _, r := range inputRef.FindAllStringSubmatch(m[1], -1) {
			if _, ok := a.Inputs[r[1]]; !ok {
				t.Errorf("%s reads an undeclared input %q", m[0], r[1])
			}
		}
		for _, r := range stepRef.FindAllStringSubmatch(m[1], -1) {
			if !ids[r[1]] {
				t.Errorf("%s reads a step %q that is not there", m[0], r[1])
			}
		}
	}
	for name, o := range a.Outputs {
		if o.Description == "" || !stepRef.MatchString(o.Value) {
			t.Errorf("output %s: %+v", name, o)
		}
	}
	st, err := os.Stat(filepath.Join(root, "scripts", "action.sh"))
	if err != nil || st.Mode()&0o111 == 0 {
		t.Errorf("scripts/action.sh is not an executable file: %v", err)
	}
}

type workflowFile struct {
	Name        string            `yaml:"name"`
	On          map[string]any    `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Jobs        map[string]struct {
		RunsOn      string            `yaml:"runs-on"`
		Permissions map[string]string `yaml:"permissions"`
		Steps       []workflowStep    `yaml:"steps"`
	} `yaml:"jobs"`
}

// exampleWorkflow is the example's step that uses the action.
func exampleWorkflow(t *testing.T) workflowStep {
	t.Helper()
	var w workflowFile
	node := readYAML(t, filepath.Join(testutil.ModuleRoot(t), "examples", "github", "mcpdrill-drift.yml"), &w)
	if _, ok := w.On["pull_request"]; !ok || w.Name == "" {
		t.Fatalf("name %q, on %v: want a named workflow that runs on pull_request", w.Name, w.On)
	}
	comments := map[string]string{}
	usesComments(node, comments)
	var found []workflowStep
	for name, job := range w.Jobs {
		if job.RunsOn == "" || job.Permissions["security-events"] != "write" {
			t.Errorf("job %s: runs-on %q, permissions %v: want a runner and security-events: write", name, job.RunsOn, job.Permissions)
		}
		for _, s := range job.Steps {
			switch {
			case strings.HasPrefix(s.Uses, "mcpdrill/mcpdrill@"):
				found = append(found, s)
			case s.Uses != "" && !pinnedUses.MatchString(s.Uses):
				t.Errorf("job %s: %s is not pinned by a commit", name, s.Uses)
			}
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d steps use mcpdrill/mcpdrill, want 1", len(found))
	}
	return found[0]
}

func TestExampleWorkflow(t *testing.T) {
	s := exampleWorkflow(t)
	manifest, server, ok := strings.Cut(s.With["args"], " -- ")
	if s.With["command"] != "drift" || !strings.HasSuffix(manifest, ".json") || server == "" || s.With["fail-on"] == "" {
		t.Errorf("the example runs %q with args %q: want drift of a committed MANIFEST.json -- SERVER, and a fail-on", s.With["command"], s.With["args"])
	}
	if !ok {
		t.Error("the example's args have no server command after --")
	}
}

// actionEnv is a runner's environment for one step of the action: the
// inputs, and files for GITHUB_OUTPUT and GITHUB_PATH.
type actionEnv struct {
	t       *testing.T
	dir     string // GITHUB_WORKSPACE: the step's working directory
	path    string // PATH, with what install added
	outputs string
	ghPath  string
}

func newActionEnv(t *testing.T) *actionEnv {
	dir := t.TempDir()
	work := filepath.Join(dir, "workspace")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	return &actionEnv{t: t, dir: work, path: os.Getenv("PATH"), outputs: filepath.Join(dir, "output"), ghPath: filepath.Join(dir, "path")}
}

// step runs scripts/action.sh SUB with the inputs and returns its exit
// status, its output and the step outputs it wrote (from a fresh
// GITHUB_OUTPUT).
func (e *actionEnv) step(sub string, inputs map[string]string) (int, string, map[string]string) {
	t := e.t
	t.Helper()
	os.Remove(e.outputs)
	cmd := exec.Command("bash", filepath.Join(testutil.ModuleRoot(t), "scripts", "action.sh"), sub)
	cmd.Dir = e.dir
	cmd.Env = append(os.Environ(), "PATH="+e.path, "GITHUB_OUTPUT="+e.outputs, "GITHUB_PATH="+e.ghPath,
		"RUNNER_TEMP="+filepath.Dir(e.dir))
	for k, v := range inputs {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("action.sh %s: %v", sub, err)
		}
		code = ee.ExitCode()
	}
	outputs := map[string]string{}
	if f, err := os.Open(e.outputs); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), "="); ok {
				outputs[k] = v
			}
		}
		f.Close()
	}
	return code, string(out), outputs
}

// TestActionScript runs the action's shell steps as the runner would, in
// order, against the testbed: install builds mcpdrill from this checkout
// onto the PATH of the later steps; run writes SARIF that code scanning
// accepts and records the exit code without failing the step; finish
// fails the job on findings at or above fail-on.
func TestActionScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcpdrill")
	}
	e := newActionEnv(t)

	code, out, outputs := e.step("install", map[string]string{"ACTION_PATH": testutil.ModuleRoot(t), "ACTION_REF": "v0.0.0-action-test"})
	if code != 0 || !strings.Contains(out, "mcpdrill version v0.0.0-action-test") {
		t.Fatalf("install: exit %d\n%s", code, out)
	}
	added := strings.TrimSpace(string(mustRead(t, e.ghPath)))
	if outputs["path"] != filepath.Join(added, "mcpdrill") {
		t.Fatalf("install added %q to GITHUB_PATH, output path %q", added, outputs["path"])
	}
	e.path = added + string(os.PathListSeparator) + e.path

	// The example's drift: its committed manifest (here the drifting
	// profile's first tool set) against the live server.
	example := exampleWorkflow(t).With
	manifest, _, _ := strings.Cut(example["args"], " -- ")
	spec := filepath.Join(e.dir, "spec.yaml")
	if err := os.WriteFile(spec, []byte("server:\n  command: mcpdrill\n  args: [testbed, --profile, drifting, --version, \"1\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	capture := exec.Command(outputs["path"], "drift", "capture", spec, "-o", manifest)
	capture.Dir, capture.Env = e.dir, append(os.Environ(), "PATH="+e.path)
	if b, err := capture.CombinedOutput(); err != nil {
		t.Fatalf("capture: %v\n%s", err, b)
	}
	drift := func(version string) map[string]string {
		t.Helper()
		in := map[string]string{"INPUT_COMMAND": example["command"], "INPUT_FAIL_ON": example["fail-on"],
			"INPUT_ARGS": manifest + " -- mcpdrill testbed --profile drifting --version " + version, "INPUT_SARIF_FILE": "out/drift.sarif"}
		code, out, outputs := e.step("run", in)
		if code != 0 || outputs["sarif-written"] != "true" || outputs["sarif-file"] != "out/drift.sarif" {
			t.Fatalf("run (version %s): exit %d, outputs %v\n%s", version, code, outputs, out)
		}
		log := testutil.CheckSARIF(t, mustRead(t, filepath.Join(e.dir, "out", "drift.sarif")))
		for _, r := range log.Runs[0].Results {
			if r.URI() != manifest {
				t.Errorf("%s at %s, want the manifest %s", r.RuleID, r.URI(), manifest)
			}
		}
		return outputs
	}
	if o := drift("1"); o["exit-code"] != "0" {
		t.Errorf("no drift: exit-code %q", o["exit-code"])
	}
	o := drift("2")
	if o["exit-code"] != "1" {
		t.Fatalf("drift: exit-code %q, want 1", o["exit-code"])
	}
	code, out, _ = e.step("finish", map[string]string{"EXIT_CODE": o["exit-code"], "INPUT_FAIL_ON": "error", "INPUT_SARIF_FILE": o["sarif-file"]})
	if code != 1 || !strings.Contains(out, "::error title=mcpdrill::findings at or above error") {
		t.Errorf("finish after drift: exit %d\n%s", code, out)
	}
	if code, out, _ := e.step("finish", map[string]string{"EXIT_CODE": "0"}); code != 0 {
		t.Errorf("finish after a clean run: exit %d\n%s", code, out)
	}

	// A scan, its server command quoted into one argument of sh -c.
	code, out, outputs = e.step("run", map[string]string{"INPUT_COMMAND": "scan", "INPUT_FAIL_ON": "never",
		"INPUT_ARGS": `--no-second-connection -- sh -c "exec mcpdrill testbed --profile sloppy-errors"`})
	if code != 0 || outputs["exit-code"] != "0" || outputs["sarif-file"] != "mcpdrill.sarif" {
		t.Fatalf("scan: exit %d, outputs %v\n%s", code, outputs, out)
	}
	if log := testutil.CheckSARIF(t, mustRead(t, filepath.Join(e.dir, "mcpdrill.sarif"))); len(log.Runs[0].Results) == 0 {
		t.Error("the sloppy-errors scan has no results")
	}
	if strings.Contains(string(mustRead(t, filepath.Join(e.dir, "mcpdrill.sarif"))), "automationDetails") {
		t.Error("without a category the SARIF names one: the upload's own category would be ignored")
	}

	// The category input reaches the SARIF: GitHub's upload-sarif applies
	// its category only to a run without automationDetails, so the run
	// carries it itself, as the upload would have written it.
	code, out, outputs = e.step("run", map[string]string{"INPUT_COMMAND": "scan", "INPUT_FAIL_ON": "never", "INPUT_CATEGORY": "mcp/sloppy",
		"INPUT_SARIF_FILE": "cat.sarif", "INPUT_ARGS": `--no-second-connection -- sh -c "exec mcpdrill testbed --profile sloppy-errors"`})
	if code != 0 || outputs["exit-code"] != "0" {
		t.Fatalf("scan with a category: exit %d, outputs %v\n%s", code, outputs, out)
	}
	var cat struct {
		Runs []struct {
			AutomationDetails struct{ ID string } `json:"automationDetails"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(mustRead(t, filepath.Join(e.dir, "cat.sarif")), &cat); err != nil || cat.Runs[0].AutomationDetails.ID != "mcp/sloppy/" {
		t.Errorf("category mcp/sloppy: automationDetails %+v (%v), want id mcp/sloppy/", cat.Runs, err)
	}

	// Inputs the action refuses, and mcpdrill's usage errors, fail the run
	// step itself: there is nothing to upload.
	for _, c := range []struct {
		in   map[string]string
		want string
	}{
		{map[string]string{"INPUT_COMMAND": "wrap", "INPUT_ARGS": "x"}, "command: want scan, drift or drift check"},
		{map[string]string{"INPUT_FAIL_ON": "sometimes", "INPUT_ARGS": "x"}, "fail-on: want"},
		{map[string]string{"INPUT_ARGS": "tools.json --format json -- mcpdrill testbed"}, "args: --format is the action's"},
		{map[string]string{"INPUT_ARGS": `tools.json -- sh -c "unterminated`}, "args: cannot split"},
		{map[string]string{"INPUT_ARGS": "no-such-manifest.json -- mcpdrill testbed"}, "mcpdrill drift exited 2 (usage error)"},
	} {
		code, out, _ := e.step("run", c.in)
		if code != 2 || !strings.Contains(out, "::error title=mcpdrill::"+c.want) {
			t.Errorf("run %v: exit %d, want 2 and %q\n%s", c.in, code, c.want, out)
		}
	}
	// A --format after "--" is the server command's, not the action's.
	code, out, outputs = e.step("run", map[string]string{"INPUT_FAIL_ON": "never",
		"INPUT_ARGS": manifest + ` -- sh -c "exec mcpdrill testbed --profile drifting --version 1" --format`})
	if code != 0 || outputs["exit-code"] != "0" {
		t.Errorf("a flag after --: exit %d, outputs %v\n%s", code, outputs, out)
	}
}

// TestActionInputs: the action refuses a line break (or another control
// character) in any input before anything runs or is written to
// GITHUB_OUTPUT; it recognises its own flags in every spelling the CLI
// accepts; input text it shows in a workflow command is escaped, and no
// "##[" of an input reaches the log. A stub mcpdrill stands in for the
// real one: nothing here needs a server.
func TestActionInputs(t *testing.T) {
	e := newActionEnv(t)
	bin := filepath.Join(filepath.Dir(e.dir), "stub")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "mcpdrill"), []byte("#!/bin/sh\necho '{}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.path = bin + string(os.PathListSeparator) + e.path
	// checkLog fails for a log line that is a workflow command other than
	// the action's own error annotation, or that holds "##[".
	checkLog := func(what, out string) {
		t.Helper()
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "##[") {
				t.Errorf("%s: a ##[ command in the log: %q", what, l)
			}
			if trimmed := strings.TrimLeft(l, " \t"); strings.HasPrefix(trimmed, "::") && !strings.HasPrefix(l, "::error title=mcpdrill::") {
				t.Errorf("%s: a workflow command in the log: %q", what, l)
			}
		}
	}
	for _, c := range []struct {
		name string
		in   map[string]string
		want string
	}{
		{"a line break in sarif-file", map[string]string{"INPUT_ARGS": "x", "INPUT_SARIF_FILE": "out.sarif\nexit-code=0"}, "sarif-file: a line break"},
		{"a carriage return in sarif-file", map[string]string{"INPUT_ARGS": "x", "INPUT_SARIF_FILE": "out.sarif\r"}, "sarif-file: a line break"},
		{"a line break in command", map[string]string{"INPUT_ARGS": "x", "INPUT_COMMAND": "scan\n::add-mask::x"}, "command: a line break"},
		{"a line break in args", map[string]string{"INPUT_ARGS": "x\n::set-output name=a::b"}, "args: a line break"},
		{"an escape in args", map[string]string{"INPUT_ARGS": "x \x1b]52;c;x\x07"}, "args: a line break"},
		{"a line break in fail-on", map[string]string{"INPUT_ARGS": "x", "INPUT_FAIL_ON": "error\n::error::x"}, "fail-on: a line break"},
		{"-fail-on", map[string]string{"INPUT_ARGS": "tools.json -fail-on never -- srv"}, "args: -fail-on is the action's"},
		{"--fail-on=never", map[string]string{"INPUT_ARGS": "tools.json --fail-on=never -- srv"}, "args: --fail-on=never is the action's"},
		{"-fail-on=never", map[string]string{"INPUT_ARGS": "-fail-on=never tools.json"}, "args: -fail-on=never is the action's"},
		{"---fail-on", map[string]string{"INPUT_ARGS": "tools.json ---fail-on never"}, "args: ---fail-on is the action's"},
		{"-format", map[string]string{"INPUT_ARGS": "-format json tools.json"}, "args: -format is the action's"},
		{"--format=json", map[string]string{"INPUT_ARGS": "--format=json tools.json"}, "args: --format=json is the action's"},
		{"-json", map[string]string{"INPUT_ARGS": "-json tools.json"}, "args: -json is the action's"},
		{"--json=false", map[string]string{"INPUT_ARGS": "--json=false tools.json"}, "args: --json=false is the action's"},
		{"--sarif-category", map[string]string{"INPUT_ARGS": "--sarif-category x tools.json"}, "args: --sarif-category is the action's"},
		{"a line break in category", map[string]string{"INPUT_ARGS": "x", "INPUT_CATEGORY": "a\n::error::b"}, "category: a line break"},
		{"an escaped line break is shown escaped", map[string]string{"INPUT_ARGS": "x", "INPUT_COMMAND": "wr%0A::error::ap"}, `command: want scan, drift or drift check, got "wr%250A::error::ap"`},
		{"##[ in command", map[string]string{"INPUT_ARGS": "x", "INPUT_COMMAND": "##[set-env name=A;]b"}, `command: want scan, drift or drift check, got "#%2523[set-env name=A;]b"`},
	} {
		code, out, outputs := e.step("run", c.in)
		if code != 2 || !strings.Contains(out, "::error title=mcpdrill::"+c.want) {
			t.Errorf("%s: exit %d, want 2 and %q\n%s", c.name, code, c.want, out)
		}
		if len(outputs) > 0 {
			t.Errorf("%s: refused, but GITHUB_OUTPUT holds %v", c.name, outputs)
		}
		if strings.Count(out, "\n") != 1 {
			t.Errorf("%s: want one log line, got\n%s", c.name, out)
		}
		checkLog(c.name, out)
	}
	// A sarif-file with "##[" runs, and the log shows it broken.
	code, out, outputs := e.step("run", map[string]string{"INPUT_ARGS": "x", "INPUT_SARIF_FILE": "a##[set-env name=A;]b.sarif"})
	if code != 0 || outputs["sarif-file"] != "a##[set-env name=A;]b.sarif" || outputs["exit-code"] != "0" || len(outputs) != 3 {
		t.Errorf("##[ in sarif-file: exit %d, outputs %v\n%s", code, outputs, out)
	}
	checkLog("##[ in sarif-file", out)
	// finish shows what run recorded escaped, and refuses a line break.
	code, out, _ = e.step("finish", map[string]string{"EXIT_CODE": "1", "INPUT_SARIF_FILE": "x%0A::error::y##[z"})
	if code != 1 || !strings.Contains(out, "x%250A::error::y#%2523[z") {
		t.Errorf("finish: exit %d\n%s", code, out)
	}
	checkLog("finish", out)
	if code, out, _ := e.step("finish", map[string]string{"EXIT_CODE": "1", "INPUT_SARIF_FILE": "x\n::add-mask::y"}); code != 2 || strings.Contains(out, "\n::add-mask") {
		t.Errorf("finish with a line break: exit %d\n%s", code, out)
	}
}

package studies_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/studies"
)

func TestParseShard(t *testing.T) {
	env := func(kv ...string) func(string) (string, bool) {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	none := env()
	idx, cnt := studies.EnvShardIndex, studies.EnvShardCount
	tests := []struct {
		in   string
		env  func(string) (string, bool)
		want studies.Shard
		err  string // a word the error must hold; "" for success
	}{
		{"1/3", none, studies.Shard{Index: 1, Count: 3}, ""},
		{"3/3", none, studies.Shard{Index: 3, Count: 3}, ""},
		{"1/1", none, studies.Shard{Index: 1, Count: 1}, ""},
		{"0/3", none, studies.Shard{}, "1 <= K <= N"},
		{"4/3", none, studies.Shard{}, "1 <= K <= N"},
		{"1/0", none, studies.Shard{}, "1 <= K <= N"},
		{"a/b", none, studies.Shard{}, "want K/N"},
		{"1/3x", none, studies.Shard{}, "want K/N"},
		{"01/3", none, studies.Shard{}, "want K/N"},
		{"+1/3", none, studies.Shard{}, "want K/N"},
		{"13", none, studies.Shard{}, "want K/N, auto or auto/N"},
		// K/N ignores the environment.
		{"2/3", env(idx, "0", cnt, "5"), studies.Shard{Index: 2, Count: 3}, ""},

		// auto: the index is Kubernetes' 0-based completion index.
		{"auto", env(idx, "0", cnt, "4"), studies.Shard{Index: 1, Count: 4}, ""},
		{"auto", env(idx, "3", cnt, "4"), studies.Shard{Index: 4, Count: 4}, ""},
		{"auto/4", env(idx, "2"), studies.Shard{Index: 3, Count: 4}, ""},
		{"auto/4", env(idx, "2", cnt, "4"), studies.Shard{Index: 3, Count: 4}, ""},
		{"auto/1", env(idx, "0"), studies.Shard{Index: 1, Count: 1}, ""},
		{"auto", env(idx, "4", cnt, "4"), studies.Shard{}, "want 0 to 3"},
		{"auto", env(idx, "-1", cnt, "4"), studies.Shard{}, "want 0 to 3"},
		{"auto", env(idx, "01", cnt, "4"), studies.Shard{}, "want 0 to 3"},
		{"auto", env(cnt, "4"), studies.Shard{}, idx + " is not set"},
		{"auto", env(idx, "", cnt, "4"), studies.Shard{}, idx + " is not set"},
		{"auto", env(idx, "0"), studies.Shard{}, cnt + " is not set"},
		{"auto", env(idx, "0", cnt, "0"), studies.Shard{}, "want a count >= 1"},
		{"auto", env(idx, "0", cnt, "many"), studies.Shard{}, "want a count >= 1"},
		{"auto/3", env(idx, "0", cnt, "4"), studies.Shard{}, "says otherwise"},
		{"auto/0", env(idx, "0"), studies.Shard{}, "auto/N with N >= 1"},
		{"auto/", env(idx, "0"), studies.Shard{}, "auto/N with N >= 1"},
		{"auto/x", env(idx, "0"), studies.Shard{}, "auto/N with N >= 1"},
		{"autox", env(idx, "0", cnt, "2"), studies.Shard{}, "want K/N, auto or auto/N"},
	}
	for _, tt := range tests {
		got, err := studies.ParseShard(tt.in, tt.env)
		switch {
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("ParseShard(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseShard(%q) = %v, %v; want an error saying %q", tt.in, got, err, tt.err)
		}
	}
}

// shardFixture writes a servers.json of five servers: four testbed
// profiles and a command that is not installed (skipped under -short).
func shardFixture(t *testing.T) (bin, dir, spec string) {
	t.Helper()
	bin = studyBinary(t, "subprocess study")
	dir = t.TempDir()
	servers := map[string]any{"missing": map[string]any{"command": "bin/not-installed"}}
	for _, p := range []string{"good", "vacuous", "legacy", "modern"} {
		servers[p] = map[string]any{"command": bin, "args": []string{"testbed", "--profile", p}, "sdk": "testbed"}
	}
	spec = filepath.Join(dir, "servers.json")
	writeJSON(t, spec, map[string]any{"mcpServers": servers})
	return bin, dir, spec
}

// TestShardProcesses runs every shard of a study as its own process at
// the same time, as the pods of a Kubernetes Indexed Job do (--shard auto
// with JOB_COMPLETION_INDEX), merges the parts with the CLI and checks the
// merge equals an unsharded run outside meta. Six shards of five servers
// leave one shard empty.
func TestShardProcesses(t *testing.T) {
	bin, dir, spec := shardFixture(t)
	flags := []string{"-q", "-j", "2", "--timeout", testutil.Hang.String(), "--request-timeout", testutil.Hang.String()}
	whole := filepath.Join(dir, "whole.json")
	runCLI(t, bin, append([]string{"study", "run", spec, "-o", whole}, flags...)...)
	res, _ := readResults(t, whole)
	if len(res.Servers) != 5 {
		t.Fatalf("unsharded run: %d rows, want 5", len(res.Servers))
	}

	for _, tc := range []struct {
		shard string // the --shard value
		count int
		env   bool // MCPDRILL_SHARD_COUNT set
	}{
		{"auto", 3, true},
		{"auto/6", 6, false},
	} {
		t.Run(fmt.Sprintf("%s of %d", tc.shard, tc.count), func(t *testing.T) {
			parts := make([]string, tc.count)
			errs := make([]error, tc.count)
			var wg sync.WaitGroup
			for i := range tc.count {
				parts[i] = filepath.Join(dir, fmt.Sprintf("%s-%d-%d.json", strings.ReplaceAll(tc.shard, "/", "-"), tc.count, i))
				cmd := exec.Command(bin, append([]string{"study", "run", spec, "--shard", tc.shard, "-o", parts[i]}, flags...)...)
				cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", studies.EnvShardIndex, i))
				if tc.env {
					cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d", studies.EnvShardCount, tc.count))
				}
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := cmd.Wait(); err != nil {
						errs[i] = fmt.Errorf("shard index %d: %w\n%s", i, err, stderr.String())
					}
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			rows := 0
			for i, p := range parts {
				r, _ := readResults(t, p)
				if r.Shard == nil || r.Shard.Index != i+1 || r.Shard.Count != tc.count {
					t.Fatalf("%s: shard %+v, want %d/%d", p, r.Shard, i+1, tc.count)
				}
				rows += len(r.Servers)
			}
			if rows != len(res.Servers) {
				t.Fatalf("the shards hold %d rows, want %d", rows, len(res.Servers))
			}
			merged := filepath.Join(dir, "merged-"+strings.ReplaceAll(tc.shard, "/", "-")+".json")
			runCLI(t, bin, append([]string{"study", "merge", "-o", merged}, parts...)...)
			m, _ := readResults(t, merged)
			if got, want := withoutMeta(t, m), withoutMeta(t, res); got != want {
				t.Fatalf("merged shards differ from the unsharded run:\n--- merged\n%s\n--- whole\n%s", got, want)
			}
			if len(m.Meta.Shards) != tc.count {
				t.Errorf("merge meta records %d shards, want %d", len(m.Meta.Shards), tc.count)
			}
		})
	}
}

// The parts of the study workflow the tests read.
type ghStep struct {
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	With map[string]string `yaml:"with"`
}

type ghJob struct {
	Needs    any `yaml:"needs"`
	Strategy struct {
		FailFast *bool `yaml:"fail-fast"`
		Matrix   struct {
			Shard []int `yaml:"shard"`
		} `yaml:"matrix"`
	} `yaml:"strategy"`
	Steps []ghStep `yaml:"steps"`
}

type ghWorkflow struct {
	Env  map[string]string `yaml:"env"`
	Jobs map[string]ghJob  `yaml:"jobs"`
}

func readWorkflow(t *testing.T) ghWorkflow {
	t.Helper()
	var wf ghWorkflow
	b, err := os.ReadFile(filepath.Join(testutil.ModuleRoot(t), ".github", "workflows", "study.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	return wf
}

// TestStudyWorkflowRuns runs the workflow's study steps as the runners
// would, in bash on this machine: each shard job's scan step with its
// matrix values and the workflow's environment, the parts gathered as the
// download step does, then the merge and report steps (go run
// ./cmd/mcpdrill replaced by the built binary). The merge equals an
// unsharded run with the workflow's flags outside meta.
func TestStudyWorkflowRuns(t *testing.T) {
	bin, dir, spec := shardFixture(t)
	wf := readWorkflow(t)
	script := func(job, what string) string {
		for _, s := range wf.Jobs[job].Steps {
			if strings.Contains(s.Run, what) {
				return s.Run
			}
		}
		t.Fatalf("job %s has no step running %q", job, what)
		return ""
	}
	env := append(os.Environ(), "SERVERS="+spec, "STUDY_FLAGS="+wf.Env["STUDY_FLAGS"], "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	bash := func(wd, s string) {
		t.Helper()
		cmd := exec.Command("bash", "-e", "-c", strings.ReplaceAll(s, "go run ./cmd/mcpdrill ", "mcpdrill "))
		cmd.Dir, cmd.Env = wd, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", s, err, out)
		}
	}
	bash(dir, "mcpdrill study run \"$SERVERS\" $STUDY_FLAGS -q -o whole.json")
	res, _ := readResults(t, filepath.Join(dir, "whole.json"))

	shards := wf.Jobs["shard"].Strategy.Matrix.Shard
	parts := filepath.Join(dir, "parts")
	if err := os.Mkdir(parts, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, k := range shards {
		run := strings.NewReplacer("${{ matrix.shard }}", fmt.Sprint(k), "${{ strategy.job-total }}", fmt.Sprint(len(shards))).Replace(script("shard", "study run"))
		runner := filepath.Join(dir, fmt.Sprintf("runner-%d", k))
		if err := os.Mkdir(runner, 0o755); err != nil {
			t.Fatal(err)
		}
		bash(runner, run)
		// download-artifact with merge-multiple: every part in parts/.
		name := fmt.Sprintf("shard-%d.json", k)
		b, err := os.ReadFile(filepath.Join(runner, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(parts, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bash(dir, script("merge", "study merge"))
	bash(dir, script("report", "study report"))
	m, _ := readResults(t, filepath.Join(dir, "results.json"))
	if got, want := withoutMeta(t, m), withoutMeta(t, res); got != want {
		t.Fatalf("the workflow's merge differs from the unsharded run:\n--- merged\n%s\n--- whole\n%s", got, want)
	}
	for _, f := range []string{"SUMMARY.md", "index.html"} {
		if _, err := os.Stat(filepath.Join(dir, "report", f)); err != nil {
			t.Error(err)
		}
	}
}

// TestStudyWorkflow checks the GitHub Actions workflow hangs together: a
// matrix of shards 1..N, each job scanning shard K of the matrix's size and
// uploading its part; a merge job after them that downloads the parts and
// merges them; a report job after the merge.
func TestStudyWorkflow(t *testing.T) {
	wf := readWorkflow(t)
	runs := func(j ghJob, what string) []ghStep {
		var out []ghStep
		for _, s := range j.Steps {
			if strings.Contains(s.Run, what) || strings.HasPrefix(s.Uses, what) {
				out = append(out, s)
			}
		}
		return out
	}
	shard, merge, report := wf.Jobs["shard"], wf.Jobs["merge"], wf.Jobs["report"]
	for k, s := range shard.Strategy.Matrix.Shard {
		if s != k+1 {
			t.Errorf("matrix.shard = %v, want 1..N", shard.Strategy.Matrix.Shard)
			break
		}
	}
	if len(shard.Strategy.Matrix.Shard) < 2 || shard.Strategy.FailFast == nil || *shard.Strategy.FailFast {
		t.Errorf("the shard job wants a matrix of 2 or more shards, fail-fast off")
	}
	if r := runs(shard, "study run"); len(r) != 1 || !strings.Contains(r[0].Run, `--shard "${{ matrix.shard }}/${{ strategy.job-total }}"`) ||
		!strings.Contains(r[0].Run, `-o "shard-${{ matrix.shard }}.json"`) {
		t.Errorf("the shard job's study run: %+v", r)
	}
	if len(runs(shard, "study install")) != 1 {
		t.Error("the shard job does not install the servers")
	}
	if u := runs(shard, "actions/upload-artifact@"); len(u) != 1 || u[0].With["path"] != "shard-${{ matrix.shard }}.json" || u[0].With["name"] != "study-shard-${{ matrix.shard }}" {
		t.Errorf("the shard job's upload: %+v", u)
	}
	if merge.Needs != "shard" || report.Needs != "merge" {
		t.Errorf("needs: merge %v, report %v; want shard, merge", merge.Needs, report.Needs)
	}
	if d := runs(merge, "actions/download-artifact@"); len(d) != 1 || d[0].With["pattern"] != "study-shard-*" || d[0].With["path"] != "parts" {
		t.Errorf("the merge job's download: %+v", d)
	}
	if m := runs(merge, "study merge"); len(m) != 1 || !strings.Contains(m[0].Run, "-o results.json parts/shard-*.json") {
		t.Errorf("the merge job's study merge: %+v", m)
	}
	if r := runs(report, "study report"); len(r) != 1 || len(runs(report, "actions/upload-artifact@")) != 1 {
		t.Errorf("the report job: %+v", report.Steps)
	}
}

// The parts of a Kubernetes manifest the tests read.
type k8sContainer struct {
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom struct {
			FieldRef struct {
				FieldPath string `yaml:"fieldPath"`
			} `yaml:"fieldRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}
type k8sObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    int    `yaml:"completions"`
		Parallelism    int    `yaml:"parallelism"`
		Template       struct {
			Spec struct {
				RestartPolicy string         `yaml:"restartPolicy"`
				Containers    []k8sContainer `yaml:"containers"`
				Volumes       []struct {
					Name string `yaml:"name"`
					PVC  struct {
						ClaimName string `yaml:"claimName"`
					} `yaml:"persistentVolumeClaim"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// readManifest decodes the objects of a manifest in deploy/kubernetes.
func readManifest(t *testing.T, name string) []k8sObject {
	t.Helper()
	f, err := os.Open(filepath.Join(testutil.ModuleRoot(t), "deploy", "kubernetes", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []k8sObject
	dec := yaml.NewDecoder(f)
	for {
		var o k8sObject
		if err := dec.Decode(&o); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, o)
	}
}

// TestStudyJobManifest checks the Kubernetes manifests: an Indexed Job
// whose pods run study run --shard auto with MCPDRILL_SHARD_COUNT equal to
// completions and JOB_COMPLETION_INDEX from the pod's annotation, writing
// their part to the volume the merge job reads.
func TestStudyJobManifest(t *testing.T) {
	read := func(name string) []k8sObject { return readManifest(t, name) }
	var claim string
	for _, o := range read("study-job.yaml") {
		switch o.Kind {
		case "PersistentVolumeClaim":
			claim = o.Metadata.Name
		case "Job":
			s := o.Spec
			if s.CompletionMode != "Indexed" || s.Completions < 2 || s.Parallelism < 1 || s.Parallelism > s.Completions || s.Template.Spec.RestartPolicy != "Never" {
				t.Errorf("job %+v", s)
			}
			if len(s.Template.Spec.Containers) != 1 {
				t.Fatalf("%d containers", len(s.Template.Spec.Containers))
			}
			c := s.Template.Spec.Containers[0]
			args := strings.Join(c.Args, " ")
			if !strings.HasPrefix(args, "study run ") || !strings.Contains(args, " --shard auto ") || !strings.HasSuffix(args, " -o /results/shard-$(JOB_COMPLETION_INDEX).json") {
				t.Errorf("args %q", args)
			}
			env := map[string]string{}
			for _, e := range c.Env {
				env[e.Name] = e.Value + e.ValueFrom.FieldRef.FieldPath
			}
			if env[studies.EnvShardCount] != fmt.Sprint(s.Completions) {
				t.Errorf("%s=%q, completions %d", studies.EnvShardCount, env[studies.EnvShardCount], s.Completions)
			}
			if env[studies.EnvShardIndex] != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
				t.Errorf("%s from %q", studies.EnvShardIndex, env[studies.EnvShardIndex])
			}
			if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/results" || len(s.Template.Spec.Volumes) != 1 || s.Template.Spec.Volumes[0].PVC.ClaimName == "" {
				t.Errorf("results volume: %+v %+v", c.VolumeMounts, s.Template.Spec.Volumes)
			}
			if claim != "" && s.Template.Spec.Volumes[0].PVC.ClaimName != claim {
				t.Errorf("the job mounts %q, the manifest claims %q", s.Template.Spec.Volumes[0].PVC.ClaimName, claim)
			}
		}
	}
	merge := read("study-merge-job.yaml")
	if len(merge) != 1 || len(merge[0].Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("study-merge-job.yaml: %+v", merge)
	}
	c := merge[0].Spec.Template.Spec.Containers[0]
	if cmd := strings.Join(append(c.Command, c.Args...), " "); !strings.Contains(cmd, "study merge -o /results/results.json /results/shard-*.json") || !strings.Contains(cmd, "study report /results/results.json") {
		t.Errorf("merge command %q", cmd)
	}
	if v := merge[0].Spec.Template.Spec.Volumes; claim == "" || len(v) != 1 || v[0].PVC.ClaimName != claim {
		t.Errorf("the merge job mounts %+v, want claim %q", v, claim)
	}
}

// TestStudyJobRuns runs the Kubernetes manifests' commands as the cluster
// would, on this machine: every index of the Indexed Job with its pod's
// environment and $(VAR) expanded in its arguments (four pods at a time),
// then the merge job's shell command, the image's paths (/study, /results)
// and binary replaced by the test's. The merged results equal an unsharded
// run with the same flags outside meta, and the report is written.
func TestStudyJobRuns(t *testing.T) {
	bin, dir, spec := shardFixture(t)
	results := filepath.Join(dir, "results")
	if err := os.Mkdir(results, 0o755); err != nil {
		t.Fatal(err)
	}
	local := strings.NewReplacer("/study/servers.json", spec, "/results/", results+string(filepath.Separator))
	var job, merge k8sObject
	for _, o := range readManifest(t, "study-job.yaml") {
		if o.Kind == "Job" {
			job = o
		}
	}
	if m := readManifest(t, "study-merge-job.yaml"); len(m) == 1 {
		merge = m[0]
	}
	if len(job.Spec.Template.Spec.Containers) != 1 || len(merge.Spec.Template.Spec.Containers) != 1 {
		t.Fatal("the manifests do not hold the two jobs")
	}
	pod := job.Spec.Template.Spec.Containers[0]
	var wholeArgs []string
	for i := 0; i < len(pod.Args); i++ {
		switch pod.Args[i] {
		case "--shard", "-o":
			i++
		default:
			wholeArgs = append(wholeArgs, local.Replace(pod.Args[i]))
		}
	}
	whole := filepath.Join(dir, "whole.json")
	runCLI(t, bin, append(wholeArgs, "-o", whole)...)
	res, _ := readResults(t, whole)

	sem := make(chan struct{}, 4)
	errs := make([]error, job.Spec.Completions)
	var wg sync.WaitGroup
	for i := range job.Spec.Completions {
		env := map[string]string{}
		for _, e := range pod.Env {
			env[e.Name] = e.Value
			if e.ValueFrom.FieldRef.FieldPath == "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
				env[e.Name] = fmt.Sprint(i)
			}
		}
		var args []string
		for _, a := range pod.Args {
			args = append(args, local.Replace(os.Expand(strings.NewReplacer("$(", "${", ")", "}").Replace(a), func(k string) string { return env[k] })))
		}
		cmd := exec.Command(bin, args...)
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Env = append(os.Environ(), cmd.Env...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("index %d: %w\n%s", i, err, out)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	c := merge.Spec.Template.Spec.Containers[0]
	if len(c.Command) != 2 || c.Command[0] != "sh" || c.Command[1] != "-c" || len(c.Args) != 1 {
		t.Fatalf("merge job command %q %q: want sh -c SCRIPT", c.Command, c.Args)
	}
	script := strings.ReplaceAll(local.Replace(c.Args[0]), "mcpdrill ", bin+" ")
	if out, err := exec.Command("sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("merge job: %v\n%s", err, out)
	}
	m, _ := readResults(t, filepath.Join(results, "results.json"))
	if got, want := withoutMeta(t, m), withoutMeta(t, res); got != want {
		t.Fatalf("the jobs' merge differs from the unsharded run:\n--- merged\n%s\n--- whole\n%s", got, want)
	}
	if len(m.Meta.Shards) != job.Spec.Completions {
		t.Errorf("%d shards merged, want %d", len(m.Meta.Shards), job.Spec.Completions)
	}
	for _, f := range []string{"SUMMARY.md", "index.html"} {
		if _, err := os.Stat(filepath.Join(results, "report", f)); err != nil {
			t.Error(err)
		}
	}
}

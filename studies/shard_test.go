package studies_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/testutil"
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

// TestShardProcesses runs every shard of a study as its own process at
// the same time, as the pods of a Kubernetes Indexed Job do (--shard auto
// with JOB_COMPLETION_INDEX), merges the parts with the CLI and checks the
// merge equals an unsharded run outside meta. Six shards of five servers
// leave one shard empty.
func TestShardProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess study")
	}
	bin := testutil.Binary(t)
	dir := t.TempDir()
	servers := map[string]any{"missing": map[string]any{"command": "bin/not-installed"}}
	for _, p := range []string{"good", "vacuous", "legacy", "modern"} {
		servers[p] = map[string]any{"command": bin, "args": []string{"testbed", "--profile", p}, "sdk": "testbed"}
	}
	b, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dir, "servers.json")
	if err := os.WriteFile(spec, b, 0o644); err != nil {
		t.Fatal(err)
	}
	flags := []string{"-q", "-j", "2", "--timeout", "30s", "--request-timeout", "3s"}
	whole := filepath.Join(dir, "whole.json")
	runCLI(t, bin, append([]string{"study", "run", spec, "-o", whole}, flags...)...)
	res, _ := readResults(t, whole)
	if len(res.Servers) != len(servers) {
		t.Fatalf("unsharded run: %d rows, want %d", len(res.Servers), len(servers))
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
			if rows != len(servers) {
				t.Fatalf("the shards hold %d rows, want %d", rows, len(servers))
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

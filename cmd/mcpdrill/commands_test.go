package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/guard"
	"github.com/mcpdrill/mcpdrill/proxy"
	"github.com/mcpdrill/mcpdrill/scan"
)

// parseCase is one argv a command's parse is given and what the options
// it gives must hold (nil check: a usage error before anything runs).
type parseCase[O any] struct {
	name  string
	argv  []string
	check func(*O) bool
}

// checkParses runs each case through parseInto with mk's command: a case
// with a check must parse and pass it, one without must be refused with a
// usage error before the run.
func checkParses[O any](t *testing.T, mk func(func(context.Context, *O) error) *cli.Command, cases []parseCase[O]) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			o, code, stderr := parseInto(t, mk, tt.argv...)
			switch {
			case tt.check == nil && (code != exitUsage || o != nil):
				t.Errorf("%q: exit %d, options %+v; want a usage error before running", tt.argv, code, o)
			case tt.check != nil && (code != exitOK || o == nil):
				t.Errorf("%q: exit %d: %s", tt.argv, code, stderr)
			case tt.check != nil && !tt.check(o):
				t.Errorf("%q: options %+v", tt.argv, o)
			}
		})
	}
}

// TestWrapFlagsParseIntoOptions: wrap's argv becomes wrapOptions (plan,
// mode, guard) before anything listens or starts.
func TestWrapFlagsParseIntoOptions(t *testing.T) {
	store := t.TempDir()
	checkParses(t, wrapCommand, []parseCase[wrapOptions]{
		{"stdio pass-through", []string{"wrap", "--", "srv", "-x"}, func(o *wrapOptions) bool {
			return strings.Join(o.argv, " ") == "srv -x" && o.plan == nil && o.http == nil && o.guard == nil && o.log == "" && !o.quiet
		}},
		{"short fault flags", []string{"wrap", "--faults", "drop", "--rate", "0.5", "--only", "tools/call", "--seed", "7", "--session", "s", "-q", "--log", "l.jsonl", "--max-frame", "99", "--", "srv"}, func(o *wrapOptions) bool {
			return o.plan != nil && o.plan.Seed == 7 && o.plan.Session == "s" && len(o.plan.Rules) == 1 && o.quiet && o.log == "l.jsonl" && o.maxFrame == 99
		}},
		{"http upstream", []string{"wrap", "--listen", "7070", "--upstream", "http://127.0.0.1:3000/mcp", "--allow-origin", "http://x.test"}, func(o *wrapOptions) bool {
			return o.http != nil && o.http.addr == "127.0.0.1:7070" && o.http.upstream == "http://127.0.0.1:3000/mcp" && o.http.budget == proxy.DefaultMemoryBudget &&
				strings.Join(o.http.allowOrigins, ",") == "http://x.test" && len(o.argv) == 0
		}},
		{"bridge", []string{"wrap", "--listen", ":7070", "--memory-budget", "1024", "--", "srv"}, func(o *wrapOptions) bool {
			return o.http != nil && o.http.addr == "127.0.0.1:7070" && o.http.budget == 1024 && strings.Join(o.argv, " ") == "srv"
		}},
		{"guard", []string{"wrap", "--guard", store, "--posture", "strict", "--recheck", "1m", "--", "/bin/srv", "a"}, func(o *wrapOptions) bool {
			return o.guard != nil && o.guard.dir == store && o.guard.posture == guard.PostureStrict && o.guard.recheck == time.Minute && o.guard.id == guard.ServerID("/bin/srv", "a")
		}},
		{"guard server id", []string{"wrap", "--guard", store, "--server-id", "mine", "--listen", "7070", "--upstream", "http://127.0.0.1:3000/mcp"}, func(o *wrapOptions) bool {
			return o.guard != nil && o.guard.id == "mine" && o.http != nil
		}},
		{"no server", []string{"wrap"}, nil},
		{"rate without faults", []string{"wrap", "--rate", "0.5", "--", "srv"}, nil},
		{"plan and faults", []string{"wrap", "--plan", "p.yaml", "--faults", "drop", "--", "srv"}, nil},
		{"unknown fault", []string{"wrap", "--faults", "nope", "--", "srv"}, nil},
		{"no plan file", []string{"wrap", "--plan", "no-such-plan.yaml", "--", "srv"}, nil},
		{"posture without guard", []string{"wrap", "--posture", "strict", "--", "srv"}, nil},
		{"bad posture", []string{"wrap", "--guard", store, "--posture", "lax", "--", "srv"}, nil},
		{"bad server id", []string{"wrap", "--guard", store, "--server-id", "../x", "--", "srv"}, nil},
		{"guard on a bridge", []string{"wrap", "--guard", store, "--listen", "7070", "--", "srv"}, nil},
		{"upstream and command", []string{"wrap", "--listen", "7070", "--upstream", "http://127.0.0.1:3000/mcp", "--", "srv"}, nil},
		{"upstream without listen", []string{"wrap", "--upstream", "http://127.0.0.1:3000/mcp"}, nil},
		{"listen without upstream", []string{"wrap", "--listen", "7070"}, nil},
		{"remote listen", []string{"wrap", "--listen", "0.0.0.0:7070", "--upstream", "http://127.0.0.1:3000/mcp"}, nil},
		{"negative budget", []string{"wrap", "--listen", "7070", "--memory-budget", "-1", "--", "srv"}, nil},
		{"bad flag", []string{"wrap", "--nope", "--", "srv"}, nil},
	})
}

// guardSubcommand is the guard subcommand named name, with run.
func guardSubcommand(name string) func(func(context.Context, *guardOptions) error) *cli.Command {
	return func(run func(context.Context, *guardOptions) error) *cli.Command {
		for _, c := range guardCommands(run) {
			if c.Name == name {
				return c
			}
		}
		return nil
	}
}

// TestGuardFlagsParseIntoOptions: each guard subcommand's argv becomes
// guardOptions, the store opened and SERVER checked, before anything is
// read from the store or changed in it.
func TestGuardFlagsParseIntoOptions(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(guardDirEnv, "")
	t.Setenv("USER", "tester")
	in := func(o *guardOptions) bool { return o.store != nil && o.store.Dir() == dir && o.hint != "" }
	for _, sub := range []struct {
		name  string
		cases []parseCase[guardOptions]
	}{
		{"status", []parseCase[guardOptions]{
			{"every server", []string{"--dir", dir}, func(o *guardOptions) bool { return in(o) && o.server == "" && !o.json }},
			{"one server, flags after it", []string{"srv", "--dir", dir, "--json"}, func(o *guardOptions) bool { return in(o) && o.server == "srv" && o.json }},
			{"no store", []string{"srv"}, nil},
			{"not a directory", []string{"--dir", ciBase}, nil},
			{"two servers", []string{"--dir", dir, "a", "b"}, nil},
			{"bad server", []string{"--dir", dir, "../x"}, nil},
			{"bad flag", []string{"--dir", dir, "--nope"}, nil},
		}},
		{"diff", []parseCase[guardOptions]{
			{"last seen", []string{"--dir", dir, "srv"}, func(o *guardOptions) bool {
				return in(o) && o.server == "srv" && o.live == nil && o.deadline == 2*time.Minute
			}},
			{"live command", []string{"--dir", dir, "--deadline", "5s", "srv", "--", "cmd", "-a"}, func(o *guardOptions) bool {
				return in(o) && o.live != nil && strings.Join(o.live.Command, " ") == "cmd -a" && o.deadline == 5*time.Second
			}},
			{"live url", []string{"--dir", dir, "srv", "--url", "http://127.0.0.1:9/mcp", "--json"}, func(o *guardOptions) bool {
				return in(o) && o.live != nil && o.live.URL == "http://127.0.0.1:9/mcp" && o.json
			}},
			{"no server", []string{"--dir", dir}, nil},
			{"bad url", []string{"--dir", dir, "srv", "--url", "ftp://127.0.0.1/mcp"}, nil},
		}},
		{"approve", []parseCase[guardOptions]{
			{"actor and fingerprint", []string{"--dir", dir, "srv", "--actor", " me ", "--fingerprint", "sha256:ab"}, func(o *guardOptions) bool {
				return in(o) && o.server == "srv" && o.actor == "me" && o.fingerprint == "sha256:ab"
			}},
			{"actor from USER", []string{"--dir", dir, "srv", "--current"}, func(o *guardOptions) bool { return o.actor == "tester" && o.current }},
			{"no server", []string{"--dir", dir, "--current"}, nil},
			{"two servers", []string{"--dir", dir, "a", "b", "--current"}, nil},
			{"no set named", []string{"--dir", dir, "srv"}, nil},
			{"two sets named", []string{"--dir", dir, "srv", "--current", "--fingerprint", "sha256:ab"}, nil},
		}},
		{"quarantine", []parseCase[guardOptions]{
			{"note", []string{"--dir", dir, "srv", "--note", "why"}, func(o *guardOptions) bool { return in(o) && o.note == "why" }},
			{"no server", []string{"--dir", dir}, nil},
		}},
		{"release", []parseCase[guardOptions]{
			{"server", []string{"srv", "--dir", dir}, func(o *guardOptions) bool { return in(o) && o.server == "srv" }},
			{"note is quarantine's", []string{"--dir", dir, "srv", "--note", "x"}, nil},
		}},
		{"audit", []parseCase[guardOptions]{
			{"all", []string{"--dir", dir, "--json"}, func(o *guardOptions) bool { return in(o) && o.server == "" && o.json }},
			{"one server", []string{"--dir", dir, "srv"}, func(o *guardOptions) bool { return o.server == "srv" }},
		}},
	} {
		for i := range sub.cases {
			sub.cases[i].argv = append([]string{"guard", sub.name}, sub.cases[i].argv...)
		}
		t.Run(sub.name, func(t *testing.T) { checkParses(t, guardSubcommand(sub.name), sub.cases) })
	}
	t.Setenv(guardDirEnv, dir)
	if o, code, stderr := parseInto(t, guardSubcommand("status"), "guard", "status"); o == nil || o.store.Dir() != dir || o.hint != "" {
		t.Errorf("$%s: exit %d, options %+v: %s", guardDirEnv, code, o, stderr)
	}
}

// TestFingerprintFlagsParseIntoOptions: a manifest is read and loaded, a
// live target checked, before anything connects.
func TestFingerprintFlagsParseIntoOptions(t *testing.T) {
	checkParses(t, fingerprintCommand, []parseCase[fingerprintOptions]{
		{"manifest, flags after it", []string{"fingerprint", ciBase, "--tools"}, func(o *fingerprintOptions) bool {
			return o.manifest == ciBase && len(o.tools) > 0 && o.live == nil && o.perTool && !o.json
		}},
		{"--manifest", []string{"fingerprint", "--manifest", ciBase, "--json"}, func(o *fingerprintOptions) bool {
			return o.manifest == ciBase && len(o.tools) > 0 && o.json
		}},
		{"live url", []string{"fingerprint", "--url", "http://127.0.0.1:9/mcp", "--deadline", "3s"}, func(o *fingerprintOptions) bool {
			return o.live != nil && o.live.URL == "http://127.0.0.1:9/mcp" && o.deadline == 3*time.Second && o.tools == nil
		}},
		{"live command", []string{"fingerprint", "--", "srv", "-a"}, func(o *fingerprintOptions) bool {
			return o.live != nil && strings.Join(o.live.Command, " ") == "srv -a"
		}},
		{"no target", []string{"fingerprint"}, nil},
		{"manifest and url", []string{"fingerprint", "--manifest", ciBase, "--url", "http://127.0.0.1:9/mcp"}, nil},
		{"two manifests", []string{"fingerprint", "--manifest", ciBase, ciBase}, nil},
		{"no such manifest", []string{"fingerprint", "--manifest", "no-such.json"}, nil},
		{"not a manifest", []string{"fingerprint", "--manifest", "testdata/transcripts/help.txtar"}, nil},
		{"bad url", []string{"fingerprint", "--url", "ftp://127.0.0.1/mcp"}, nil},
		{"bad flag", []string{"fingerprint", ciBase, "--nope"}, nil},
	})
}

// TestSmallCommandsParseIntoOptions: faults, testbed, configs, rules and
// completion check what they are asked for before printing or serving.
func TestSmallCommandsParseIntoOptions(t *testing.T) {
	ws := t.TempDir()
	t.Run("faults", func(t *testing.T) {
		checkParses(t, faultsCommand, []parseCase[faultsOptions]{
			{"table", []string{"faults"}, func(o *faultsOptions) bool { return o.one == nil && !o.json }},
			{"one", []string{"faults", "drop"}, func(o *faultsOptions) bool { return o.one != nil && o.one.Name == "drop" }},
			{"json", []string{"faults", "--json"}, func(o *faultsOptions) bool { return o.json && o.one == nil }},
			{"unknown", []string{"faults", "nope"}, nil},
			{"two", []string{"faults", "drop", "corrupt"}, nil},
			{"bad flag", []string{"faults", "--nope"}, nil},
		})
	})
	t.Run("testbed", func(t *testing.T) {
		checkParses(t, testbedCommand, []parseCase[testbedOptions]{
			{"defaults", []string{"testbed"}, func(o *testbedOptions) bool {
				return !o.list && o.addr == "" && o.server.Profile == "good" && o.server.Reply == ""
			}},
			{"list", []string{"testbed", "--list"}, func(o *testbedOptions) bool { return o.list }},
			{"http", []string{"testbed", "--profile", "sloppy-errors", "--http", "127.0.0.1:0", "--reply", "sse", "--seed", "3", "--page-size", "2", "--version", "2"}, func(o *testbedOptions) bool {
				return o.addr == "127.0.0.1:0" && o.server.Profile == "sloppy-errors" && o.server.Reply == "sse" && o.server.Seed == 3 && o.server.PageSize == 2 && o.server.Version == "2"
			}},
			{"remote allowed", []string{"testbed", "--http", "0.0.0.0:0", "--allow-remote"}, func(o *testbedOptions) bool { return o.addr == "0.0.0.0:0" }},
			{"remote", []string{"testbed", "--http", "0.0.0.0:0"}, nil},
			{"unknown profile", []string{"testbed", "--profile", "nope"}, nil},
			{"bad reply", []string{"testbed", "--reply", "xml"}, nil},
			{"argument", []string{"testbed", "x"}, nil},
		})
	})
	t.Run("configs", func(t *testing.T) {
		checkParses(t, configsCommand, []parseCase[configsOptions]{
			{"workspace", []string{"configs", "--workspace", ws, "--all", "--json"}, func(o *configsOptions) bool { return o.platform.Workspace == ws && o.all && o.json }},
			{"defaults", []string{"configs"}, func(o *configsOptions) bool { return o.platform.Workspace != "" && !o.all && !o.json }},
			{"argument", []string{"configs", "x"}, nil},
		})
	})
	t.Run("rules", func(t *testing.T) {
		rev := scan.RequirementRevisions()[0]
		checkParses(t, rulesCommand, []parseCase[rulesOptions]{
			{"all", []string{"rules"}, func(o *rulesOptions) bool { return len(o.cat) > 0 && o.rule == nil && o.rev == "" }},
			{"one", []string{"rules", "--json", "MCP-DRIFT-PROTOCOL-UNSUPPORTED"}, func(o *rulesOptions) bool {
				return o.rule != nil && o.rule.ID == "MCP-DRIFT-PROTOCOL-UNSUPPORTED" && o.json
			}},
			{"a change id by its kind", []string{"rules", "CHG-PROPERTY-REMOVED-1a2b3c4d"}, func(o *rulesOptions) bool { return o.rule != nil && o.rule.ID == "CHG-PROPERTY-REMOVED" }},
			{"requirements", []string{"rules", "--requirements", rev}, func(o *rulesOptions) bool { return o.rev == rev && len(o.reqs) > 0 }},
			{"unknown rule", []string{"rules", "NOPE-1"}, nil},
			{"two rules", []string{"rules", "A", "B"}, nil},
			{"unknown revision", []string{"rules", "--requirements", "1999-01-01"}, nil},
			{"requirements and a rule", []string{"rules", "--requirements", rev, "MCP-DRIFT-PROTOCOL-UNSUPPORTED"}, nil},
		})
	})
	t.Run("completion", func(t *testing.T) {
		checkParses(t, completionCommand, []parseCase[completionOptions]{
			{"bash", []string{"completion", "bash"}, func(o *completionOptions) bool { return o.shell == "bash" }},
			{"fish", []string{"completion", "fish"}, func(o *completionOptions) bool { return o.shell == "fish" }},
			{"none", []string{"completion"}, nil},
			{"unknown", []string{"completion", "tcsh"}, nil},
			{"two", []string{"completion", "bash", "zsh"}, nil},
		})
	})
}

package studies

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mcpdrill/mcpdrill/drift"
	"github.com/mcpdrill/mcpdrill/internal/clientconfig"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/scan"
)

// Configuration is a setting under which a server lists another tool set
// than by default (a toolset switch), known for its package: servers.json's
// "configurations" key. The study lists the server's tools once more under
// each, so that a tool missing from a newer release's default listing is
// called removed only when no known configuration lists it.
//
// Abuse list (servers.json is a file the user may not have written): a
// configuration's env and args only add to the entry's own (no other
// command runs); names are plain identifiers, at most maxConfigurations per
// entry, values bounded; env names must be environment variable names;
// HTTP entries take none (their server is not started by the row).
// Values are recorded in results.json: a configuration holds switches,
// never a secret.
type Configuration struct {
	// Name names the configuration in reports ("all toolsets").
	Name string `json:"name"`
	// Env is added to the entry's environment (overriding its values);
	// Args are appended to its arguments.
	Env  map[string]string `json:"env,omitempty"`
	Args []string          `json:"args,omitempty"`
	// Source says where the switch is documented (the package's README or
	// source file), for a reader to check.
	Source string `json:"source,omitempty"`
}

// Bounds of the configurations of one entry.
const (
	maxConfigurations = 8
	maxConfigValue    = 256
)

var (
	configName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 ._=,+-]{0,63}$`)
	envVarName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
)

// validateConfigurations checks an entry's configurations.
func (e Entry) validateConfigurations() error {
	if len(e.Configurations) == 0 {
		return nil
	}
	if e.Command == "" {
		return errors.New(`"configurations" apply to stdio entries (a "command") only`)
	}
	if len(e.Configurations) > maxConfigurations {
		return fmt.Errorf(`"configurations": at most %d`, maxConfigurations)
	}
	seen := map[string]bool{}
	for _, c := range e.Configurations {
		switch {
		case !configName.MatchString(c.Name):
			return fmt.Errorf("configuration name %q: want 1 to 64 letters, digits, spaces or ._=,+-", c.Name)
		case seen[c.Name]:
			return fmt.Errorf("configuration %q named twice", c.Name)
		case len(c.Env) == 0 && len(c.Args) == 0:
			return fmt.Errorf("configuration %q sets nothing (no env, no args)", c.Name)
		}
		seen[c.Name] = true
		for k, v := range c.Env {
			if !envVarName.MatchString(k) {
				return fmt.Errorf("configuration %q: %q is not an environment variable name", c.Name, k)
			}
			if len(v) > maxConfigValue {
				return fmt.Errorf("configuration %q: the value of %s is over %d bytes", c.Name, k, maxConfigValue)
			}
		}
		for _, a := range c.Args {
			if len(a) > maxConfigValue {
				return fmt.Errorf("configuration %q: an argument is over %d bytes", c.Name, maxConfigValue)
			}
		}
	}
	return nil
}

// ConfigScan is what listing the server under one of its configurations
// established (results.json: a row's "configurations").
type ConfigScan struct {
	Name string `json:"name"`
	// Env and Args are the configuration's settings, KEY=VALUE sorted, as
	// servers.json gives them.
	Env  []string `json:"env,omitempty"`
	Args []string `json:"args,omitempty"`
	// Status is scanned (the tool listing completed) or failed, with Reason.
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Complete is false when the listing was capped, looped or had entries
	// that could not be read: a tool missing from it may be unread.
	Complete bool `json:"complete"`
	// Tools are the names listed, sorted.
	Tools []string `json:"tools"`
}

// scanConfigurations lists the server's tools under each of the entry's
// configurations: cfg is the default run's client configuration, x its
// expander; each listing gets the study's per-server deadline, and
// messages are cleaned by cl as the row's are.
func scanConfigurations(ctx context.Context, e Entry, cfg mcp.Config, x *clientconfig.Expander, o Options, cl func(string) string) []ConfigScan {
	var out []ConfigScan
	for _, c := range e.Configurations {
		cs := ConfigScan{Name: c.Name, Args: slices.Clone(c.Args), Tools: []string{}}
		for _, k := range slices.Sorted(maps.Keys(c.Env)) {
			cs.Env = append(cs.Env, k+"="+c.Env[k])
		}
		ccfg := cfg
		ccfg.Command = append(slices.Clone(cfg.Command), x.All(c.Args)...)
		ccfg.Env = withEnv(cfg.Env, clientconfig.ExpandEnv(x, c.Env))
		if err := x.Err(); err != nil {
			cs.Status, cs.Reason = StatusFailed, err.Error()
			out = append(out, cs)
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, o.Deadline+5*time.Second)
		rep, err := o.Scan(sctx, ccfg, scan.Options{Deadline: o.Deadline, SkipSecondConnection: true, ToolVersion: o.ToolVersion, Now: o.Now})
		cancel()
		if err != nil {
			cs.Status, cs.Reason = StatusFailed, cl(err.Error())
			out = append(out, cs)
			continue
		}
		// The row the listing would make says whether it was established,
		// and if not why, in the row's own words.
		r := rowFromReport(Row{}, rep, cl)
		if r.Status != StatusScanned || r.base == nil {
			cs.Status, cs.Reason = StatusFailed, r.Reason
		} else {
			cs.Status, cs.Complete = StatusScanned, r.base.complete
			cs.Tools = slices.Compact(drift.ToolNames(r.base.tools))
		}
		out = append(out, cs)
	}
	return out
}

// withEnv is env (KEY=VALUE) with every key of add set to add's value.
func withEnv(env, add []string) []string {
	keys := map[string]bool{}
	for _, kv := range add {
		k, _, _ := strings.Cut(kv, "=")
		keys[k] = true
	}
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return keys[k]
	})
	return append(out, add...)
}

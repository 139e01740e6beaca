package drift

import (
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

// Spec is a capture spec (YAML): the server to watch and the canary calls
// to make.
//
//	server:
//	  url: https://server.example/mcp        # or: command: node, args: [server.js]
//	  headers: {Authorization: "Bearer ${TOKEN}"}
//	  env: {LOG_LEVEL: quiet}
//	canaries:
//	  - tool: search
//	    args: {query: widget}
type Spec struct {
	Server   SpecServer `yaml:"server"`
	Canaries []Canary   `yaml:"canaries"`
}

// SpecServer names the server. ${NAME} in header and env values is replaced
// from the environment; an unset variable is an error.
type SpecServer struct {
	URL string `yaml:"url"`
	// Command is a stdio server's command line. It is written as in
	// servers.json (command: node, args: [server.js]) or as one list
	// (command: [node, server.js]); ParseSpec appends Args to it and
	// leaves Args empty.
	Command Argv              `yaml:"command"`
	Args    []string          `yaml:"args"`
	Headers map[string]string `yaml:"headers"`
	Env     map[string]string `yaml:"env"`
}

// Argv is a command line in YAML: a string (the program alone) or a list
// of strings (the program, then its arguments).
type Argv []string

// UnmarshalYAML reads a string or a list of strings.
func (a *Argv) UnmarshalYAML(n *yaml.Node) error {
	var list []string
	switch n.Kind {
	case yaml.ScalarNode:
		var prog string
		if err := n.Decode(&prog); err != nil {
			return err
		}
		list = []string{prog}
	case yaml.SequenceNode:
		if err := n.Decode(&list); err != nil {
			return err
		}
	default:
		return fmt.Errorf("line %d: command: want a string or a list of strings", n.Line)
	}
	*a = list
	return nil
}

// Canary is one golden tool call.
type Canary struct {
	// Name identifies the canary; it defaults to the tool name (suffixed
	// with #2, #3 … when a tool has several canaries).
	Name string         `yaml:"name"`
	Tool string         `yaml:"tool"`
	Args map[string]any `yaml:"args"`
}

// ErrBadSpec reports an unusable spec.
var ErrBadSpec = errors.New("invalid drift spec")

// ParseSpec reads a YAML spec. lookup resolves ${NAME} (os.LookupEnv when nil).
func ParseSpec(b []byte, lookup func(string) (string, bool)) (Spec, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	var s Spec
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return Spec{}, fmt.Errorf("%w: %w", ErrBadSpec, err)
	}
	if len(s.Server.Args) > 0 && len(s.Server.Command) == 0 {
		return Spec{}, fmt.Errorf("%w: server.args needs server.command", ErrBadSpec)
	}
	s.Server.Command, s.Server.Args = append(s.Server.Command, s.Server.Args...), nil
	if len(s.Server.Command) > 0 && strings.TrimSpace(s.Server.Command[0]) == "" {
		return Spec{}, fmt.Errorf("%w: server.command names no program", ErrBadSpec)
	}
	if (s.Server.URL == "") == (len(s.Server.Command) == 0) {
		return Spec{}, fmt.Errorf("%w: server needs exactly one of url or command", ErrBadSpec)
	}
	if len(s.Server.Headers) > 0 && s.Server.URL == "" {
		return Spec{}, fmt.Errorf("%w: server.headers needs server.url", ErrBadSpec)
	}
	expand := func(where, v string) (string, error) {
		var missing []string
		out := os.Expand(v, func(k string) string {
			val, ok := lookup(k)
			if !ok {
				missing = append(missing, k)
			}
			return val
		})
		if len(missing) > 0 {
			return "", fmt.Errorf("%w: %s: environment variable %s is not set", ErrBadSpec, where, strings.Join(missing, ", "))
		}
		return out, nil
	}
	for k, v := range s.Server.Headers {
		e, err := expand("header "+k, v)
		if err != nil {
			return Spec{}, err
		}
		if strings.ContainsAny(e, "\r\n") {
			return Spec{}, fmt.Errorf("%w: header %s: value contains a line break", ErrBadSpec, k)
		}
		s.Server.Headers[k] = e
	}
	for k, v := range s.Server.Env {
		e, err := expand("env "+k, v)
		if err != nil {
			return Spec{}, err
		}
		s.Server.Env[k] = e
	}
	count := map[string]int{}
	names := map[string]bool{}
	for i := range s.Canaries {
		c := &s.Canaries[i]
		if strings.TrimSpace(c.Tool) == "" {
			return Spec{}, fmt.Errorf("%w: canaries[%d] has no tool", ErrBadSpec, i)
		}
		count[c.Tool]++
		if c.Name == "" {
			c.Name = c.Tool
			if count[c.Tool] > 1 {
				c.Name = fmt.Sprintf("%s#%d", c.Tool, count[c.Tool])
			}
		}
		if names[c.Name] {
			return Spec{}, fmt.Errorf("%w: canary name %q used twice", ErrBadSpec, c.Name)
		}
		names[c.Name] = true
		if c.Args == nil {
			c.Args = map[string]any{}
		}
	}
	return s, nil
}

// Config turns the spec's server into a client configuration; base supplies
// the limits (timeouts, page cap).
func (s Spec) Config(base mcp.Config) mcp.Config {
	cfg := base
	cfg.URL, cfg.Command = s.Server.URL, slices.Clone(s.Server.Command)
	cfg.Headers = nil
	if len(s.Server.Headers) > 0 {
		cfg.Headers = http.Header{}
		for _, k := range sortedKeys(s.Server.Headers) {
			cfg.Headers.Set(textproto.CanonicalMIMEHeaderKey(k), s.Server.Headers[k])
		}
	}
	cfg.Env = nil
	for _, k := range sortedKeys(s.Server.Env) {
		cfg.Env = append(cfg.Env, k+"="+s.Server.Env[k])
	}
	return cfg
}

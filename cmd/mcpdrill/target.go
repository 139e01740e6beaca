package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	tgt "github.com/mcpdrill/mcpdrill/internal/target"
	"github.com/mcpdrill/mcpdrill/internal/telemetry"
	"github.com/mcpdrill/mcpdrill/scan"
)

// targetFlags are the flags every command that talks to a live server shares.
// A stdio server is given as the arguments after "--".
func targetFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "url", Usage: "Streamable HTTP (or legacy HTTP+SSE) endpoint of the server"},
		&cli.StringSliceFlag{Name: "header", Usage: "HTTP header `NAME=VALUE` sent to the server (repeatable; VALUE may use ${ENV}; values are never printed)"},
		&cli.StringFlag{Name: "protocol", Usage: "force a protocol `REVISION` (" + strings.Join(mcp.Revisions, ", ") + "); default: detect"},
		&cli.DurationFlag{Name: "timeout", Value: 10 * time.Second, Usage: "per-request timeout"},
		startupTimeoutFlag(),
		&cli.DurationFlag{Name: "deadline", Value: 2 * time.Minute, Usage: "whole-run deadline"},
		&cli.IntFlag{Name: "max-list-pages", Value: 50, Usage: "tools/list page cap"},
		&cli.IntFlag{Name: "max-frame", Value: 64 << 20, Usage: "largest accepted message in bytes"},
		&cli.StringSliceFlag{Name: "env", Usage: "extra `KEY=VALUE` for a stdio server's environment (repeatable)"},
	}
}

// startupTimeoutFlag is a stdio server's start-up allowance
// (mcp.Config.StartupTimeout).
func startupTimeoutFlag() cli.Flag {
	return &cli.DurationFlag{Name: "startup-timeout", Value: mcp.DefaultStartupTimeout,
		Usage: "how long a stdio server may take to write its first line (a first npx or uvx run downloads the package); once it has, --timeout applies"}
}

// targetConfig builds the client configuration from the shared flags; the
// arguments are the stdio server's command.
func targetConfig(c *cmdLine) (mcp.Config, error) {
	return targetConfigFor(c, c.Args().Slice())
}

// targetConfigFor is targetConfig with the stdio command given apart, for
// commands whose arguments also hold something else (a server id, a manifest).
func targetConfigFor(c *cmdLine, command []string) (mcp.Config, error) {
	cfg, err := clientConfig(c)
	if err != nil {
		return cfg, err
	}
	cfg.URL, cfg.Command = c.String("url"), command
	switch {
	case cfg.URL == "" && len(cfg.Command) == 0 && hasFlag(c.cli, "config"):
		return cfg, usageErr("no target: give --url URL, a server command after --, or --config FILE (an MCP client's configuration; auto: yours, as `mcpdrill configs` lists them)")
	case cfg.URL == "" && len(cfg.Command) == 0:
		return cfg, usageErr("no target: give --url URL or a server command after --")
	case cfg.URL != "" && len(cfg.Command) > 0:
		return cfg, usageErr("give either --url or a server command after --, not both")
	}
	if cfg.URL != "" {
		if err := checkURL(cfg.URL); err != nil {
			return cfg, exitErr(exitUsage, err)
		}
	}
	if len(cfg.Headers) > 0 && cfg.URL == "" {
		return cfg, usageErr("--header needs --url")
	}
	return cfg, nil
}

// clientConfig is the client configuration the shared flags give, less
// the target: limits, protocol, and the extra --env and --header.
func clientConfig(c *cmdLine) (mcp.Config, error) {
	cfg := mcp.Config{
		Env:            c.StringSlice("env"),
		Protocol:       c.String("protocol"),
		RequestTimeout: c.Duration("timeout"),
		StartupTimeout: c.Duration("startup-timeout"),
		MaxListPages:   c.Int("max-list-pages"),
		MaxFrame:       c.Int("max-frame"),
		ClientName:     "mcpdrill",
		ClientVersion:  version,
	}
	if cfg.Protocol != "" && !mcp.IsKnown(cfg.Protocol) {
		return cfg, usageErr("unknown --protocol %q (known: %s)", cfg.Protocol, strings.Join(mcp.Revisions, ", "))
	}
	if cfg.RequestTimeout <= 0 || cfg.StartupTimeout <= 0 {
		return cfg, usageErr("--timeout and --startup-timeout must be positive")
	}
	if cfg.MaxListPages <= 0 || cfg.MaxFrame <= 0 {
		return cfg, usageErr("--max-list-pages and --max-frame must be positive")
	}
	for _, kv := range cfg.Env {
		if !strings.Contains(kv, "=") {
			return cfg, usageErr("--env %q: want KEY=VALUE", kv)
		}
	}
	h, err := parseHeaders(c.StringSlice("header"), c.lookupEnv)
	if err != nil {
		return cfg, exitErr(exitUsage, err)
	}
	cfg.Headers = h
	return cfg, nil
}

// checkURL refuses a --url that is not an absolute http(s) URL with a host.
// The error never repeats the URL: it may carry a credential.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("--url: not a valid URL: %w", err)
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return fmt.Errorf("--url: want an http:// or https:// URL")
	}
	if u.Hostname() == "" {
		return fmt.Errorf("--url: the URL names no host")
	}
	return nil
}

// parseHeaders reads NAME=VALUE (or "NAME: VALUE") pairs, expanding ${ENV}
// in values. A missing variable is an error naming the variable, never the value.
func parseHeaders(pairs []string, lookup func(string) (string, bool)) (http.Header, error) {
	h := http.Header{}
	for _, p := range pairs {
		name, value, ok := strings.Cut(p, "=")
		if i := strings.IndexByte(p, ':'); i >= 0 && (!ok || i < len(name)) {
			name, value, ok = p[:i], strings.TrimSpace(p[i+1:]), true
		}
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
			return nil, fmt.Errorf("--header: want NAME=VALUE, got a value without a valid name")
		}
		var missing []string
		value = os.Expand(value, func(k string) string {
			v, found := lookup(k)
			if !found {
				missing = append(missing, k)
			}
			return v
		})
		if len(missing) > 0 {
			return nil, fmt.Errorf("--header %s: environment variable %s is not set", name, strings.Join(missing, ", "))
		}
		if strings.ContainsAny(value, "\r\n") {
			return nil, fmt.Errorf("--header %s: value contains a line break", name)
		}
		h.Add(textproto.CanonicalMIMEHeaderKey(name), value)
	}
	return h, nil
}

// gateFlags are the flags of the authentication posture, the gated tool
// invocation and span export (scan and drift).
func gateFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "target-class", Usage: "override the target classification: `CLASS` local, dev, staging, production or unknown"},
		&cli.BoolFlag{Name: "skip-auth-probe", Usage: "with --header, do not send the extra tools/list with the headers stripped"},
		&cli.StringSliceFlag{Name: "invoke-tool", Usage: "plan a tools/call of the tool with this exact `NAME` (repeatable; arguments generated from its input schema; nothing is sent without --execute)"},
		&cli.BoolFlag{Name: "execute", Usage: "send the planned --invoke-tool calls (tools/call has side effects)"},
		&cli.BoolFlag{Name: "i-know-this-is-production", Usage: "allow --execute on a target not classified local, dev or staging"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed for generated tool arguments (recorded in the report)"},
		&cli.StringFlag{Name: "otlp-endpoint", Usage: "export one span per MCP call to this OTLP/HTTP collector `URL` (e.g. http://127.0.0.1:4318); findings then carry trace_id and span_id", DefaultText: "$OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or $OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces"},
	}
}

// gate is what the gate flags asked for.
type gate struct {
	class         tgt.Class
	skipAuthProbe bool
	invoke        scan.InvokeOptions
	tracer        *telemetry.Tracer
	// target is the classification the gate checked: the target's own,
	// with class applied over it.
	target tgt.Classification
}

// gateOptions reads and checks the gate flags; usage errors come back as
// exit-2 errors. The tracer (nil without --otlp-endpoint) must be flushed
// with flushTracer.
func gateOptions(c *cmdLine, cfg mcp.Config) (gate, error) {
	var g gate
	if s := c.String("target-class"); s != "" {
		k, err := tgt.ParseClass(s)
		if err != nil {
			return g, exitErr(exitUsage, err)
		}
		g.class = k
	}
	g.skipAuthProbe = c.Bool("skip-auth-probe")
	g.invoke = scan.InvokeOptions{
		Tools:           c.StringSlice("invoke-tool"),
		Execute:         c.Bool("execute"),
		AllowProduction: c.Bool("i-know-this-is-production"),
		Seed:            c.Uint64("seed"),
	}
	g.target = tgt.Stdio()
	if cfg.URL != "" {
		g.target = tgt.ClassifyURL(cfg.URL)
	}
	g.target = g.target.Override(g.class)
	if err := scan.CheckInvoke(g.invoke, g.target); err != nil {
		return g, exitErr(exitUsage, err)
	}
	if ep := c.String("otlp-endpoint"); ep != "" {
		tr, err := telemetry.New(c.ctx, telemetry.Options{Endpoint: ep, ServiceVersion: version})
		if err != nil {
			return g, exitErr(exitUsage, err)
		}
		g.tracer = tr
	} else {
		g.tracer = envTracer(c.ctx, c.env)
	}
	return g, nil
}

// envTracer is the tracer the OpenTelemetry environment asks for
// (OTEL_EXPORTER_OTLP_ENDPOINT and its kin), nil when it asks for none. An
// endpoint or protocol there that cannot be used is a warning, not a
// failed run: the variables may have been set for other programs.
func envTracer(ctx context.Context, e env) *telemetry.Tracer {
	ep, err := telemetry.EndpointFromEnv(e.getenv)
	if err == nil && ep != "" {
		var tr *telemetry.Tracer
		if tr, err = telemetry.New(ctx, telemetry.Options{Endpoint: ep, ServiceVersion: version}); err == nil {
			return tr
		}
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "warning: no spans exported: %v\n", err)
	}
	return nil
}

// flushTracer exports the run's spans; a collector that is down is a
// warning on stderr, never a failed run.
func flushTracer(stderr io.Writer, tr *telemetry.Tracer) {
	if err := tr.Flush(context.Background()); err != nil {
		fmt.Fprintf(stderr, "warning: %v\n", err)
	}
}

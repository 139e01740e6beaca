package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/clientdrill"
	"github.com/mcpdrill/mcpdrill/report"
)

// clientCommand is the `mcpdrill client` command; run (nil: runClient)
// drills what the parsed clientOptions ask for.
func clientCommand(run func(context.Context, *clientOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "client",
		ArgsUsage: "[--] CMD [ARGS...]",
		Usage:     "test an MCP client: play a misbehaving server and grade what the client does",
		Description: "Runs CMD once per scenario and transport. mcpdrill plays the server; the client\n" +
			"gets the conventions of the official conformance suite's client mode: for HTTP the server URL\n" +
			"as its last argument; MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_PROTOCOL_VERSION and\n" +
			"MCP_CONFORMANCE_CONTEXT (a JSON object: the steps to perform, timeoutMs, and server: {url}\n" +
			"or {command, args} for stdio) in its environment. It reports each call on stdout as a JSON\n" +
			"line: {\"call\": NAME, \"outcome\": \"ok\"|\"error\"|\"timeout\", \"value\" or \"error\"}.\n\n" +
			"Try: mcpdrill client --list; mcpdrill client -- node examples/client/sdk-client.mjs\n\n" +
			"The client command could not be started: exit 3.\n\n" +
			exitCodes("findings at or above --fail-on (default: error)", true),
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "list", Usage: "print the scenario catalogue"},
			&cli.StringSliceFlag{Name: "only", Usage: "run only scenario `ID` (repeatable)"},
			&cli.StringFlag{Name: "transport", Value: "both", Usage: "`MODE`: stdio, http or both"},
			&cli.Uint64Flag{Name: "seed", Usage: "seed `N` of the planted values and arguments"},
			&cli.DurationFlag{Name: "timeout", Value: clientdrill.DefaultTimeout, Usage: "request timeout `D` the client is asked to use (context timeoutMs)"},
			&cli.DurationFlag{Name: "startup", Value: clientdrill.DefaultStartup, Usage: "how long `D` the client may take to make the faulted call"},
			&cli.BoolFlag{Name: "client-stderr", Usage: "pass the client's standard error through to mcpdrill's"},
		}, formatFlags("the drill's JSON document", "error")...),
		Action: action(parseClientOptions, run, runClient),
	}
}

// clientServerCommand is the hidden stdio server a drilled client starts.
func clientServerCommand() *cli.Command {
	return &cli.Command{
		Name:   "client-server",
		Hidden: true,
		Usage:  "the stdio server of `mcpdrill client` (started by the drilled client)",
		Flags:  []cli.Flag{&cli.StringFlag{Name: "socket", Usage: "the drill's socket `PATH` (required)"}},
		Action: action(parseClientServerOptions, nil, runClientServer),
	}
}

// clientServerOptions is what the drilled client's `mcpdrill
// client-server` asks for: the drill's socket.
type clientServerOptions struct {
	env
	socket string
}

func parseClientServerOptions(c *cmdLine) (*clientServerOptions, error) {
	if err := noArguments(c); err != nil {
		return nil, err
	}
	if c.String("socket") == "" {
		return nil, usageErr("--socket is required")
	}
	return &clientServerOptions{socket: c.String("socket")}, nil
}

// runClientServer relays between stdin and stdout and the drill's socket.
func runClientServer(ctx context.Context, o *clientServerOptions) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := clientdrill.Relay(ctx, o.socket, o.stdin, o.stdout); err != nil {
		return exitErr(exitUnreachable, err)
	}
	return nil
}

// clientOptions is what one `mcpdrill client` asks for.
type clientOptions struct {
	env
	list       bool
	out        outputFormat
	drill      clientdrill.Options
	passStderr bool
}

func parseClientOptions(c *cmdLine) (*clientOptions, error) {
	o := &clientOptions{list: c.Bool("list")}
	out, err := outputOptions(c)
	if err != nil {
		return nil, err
	}
	o.out = out
	if o.list {
		return o, nil
	}
	argv := c.Args().Slice()
	if len(argv) == 0 {
		return nil, usageErr("client needs the client command after --: mcpdrill client -- CMD [ARGS...]")
	}
	d := clientdrill.Options{Command: argv, Seed: c.Uint64("seed"), Timeout: c.Duration("timeout"), Startup: c.Duration("startup")}
	if d.Timeout <= 0 || d.Startup <= 0 {
		return nil, usageErr("--timeout and --startup must be positive")
	}
	switch t := c.String("transport"); t {
	case "both":
	case "stdio", "http":
		d.Transports = []clientdrill.Transport{clientdrill.Transport(t)}
	default:
		return nil, usageErr("--transport must be stdio, http or both, got %q", t)
	}
	for _, v := range c.StringSlice("only") {
		for _, id := range strings.Split(v, ",") {
			sc, ok := clientdrill.Lookup(strings.TrimSpace(id))
			if !ok {
				return nil, usageErr("unknown scenario %q (see mcpdrill client --list)", id)
			}
			if !slices.ContainsFunc(d.Scenarios, func(s clientdrill.Scenario) bool { return s.ID == sc.ID }) {
				d.Scenarios = append(d.Scenarios, sc)
			}
		}
	}
	o.drill = d
	o.passStderr = c.Bool("client-stderr")
	return o, nil
}

func runClient(ctx context.Context, o *clientOptions) error {
	w := o.stdout
	if o.list {
		if o.out.format == "json" {
			return writeJSON(w, clientdrill.Catalogue())
		}
		return renderScenarios(w, outputWidth(w))
	}
	exe, err := os.Executable()
	if err != nil {
		return exitErr(exitInternal, fmt.Errorf("client: %w", err))
	}
	d := o.drill
	d.ServerArgv = []string{exe, "client-server"}
	if o.passStderr {
		d.Stderr = o.stderr
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := o.now()
	rep, err := clientdrill.Run(ctx, d)
	switch {
	case errors.Is(err, context.Canceled):
		return exitErr(exitInternal, errors.New("client: interrupted"))
	case err != nil && strings.Contains(err.Error(), "clientdrill: start "):
		return exitErr(exitUnreachable, err)
	case err != nil:
		return exitErr(exitInternal, err)
	}
	if err := renderClientReport(w, o.out, rep, o.now().Sub(start)); err != nil {
		return err
	}
	if report.Fails(rep.Findings, o.out.threshold) {
		return exitErr(exitFindings, nil)
	}
	return nil
}

// renderClientReport writes a drill in the asked format.
func renderClientReport(w io.Writer, format outputFormat, rep *clientdrill.Report, took time.Duration) error {
	switch format.format {
	case "json":
		return writeJSON(w, rep)
	case "table":
		return renderClientTable(w, rep, outputWidth(w))
	}
	out := report.Output{Command: "client", Duration: took}
	for _, f := range rep.Findings {
		out.Results = append(out.Results, report.Result{Finding: f, Location: report.Location{Path: ".mcpdrill/client", Line: 1}})
	}
	for _, r := range rep.Results {
		sc, _ := clientdrill.Lookup(r.Scenario)
		rule, ptr := sc.Rule(), "/"+string(r.Transport)
		out.Checks = append(out.Checks, report.Check{Class: "scenarios", Name: r.Scenario + " (" + string(r.Transport) + "): " + r.Verdict(),
			Claims: func(x report.Result) bool {
				return x.Pointer == ptr && (x.Rule == rule || (x.Rule == clientdrill.RuleBlindRetry && strings.Contains(x.Message, " "+sc.ID+",")))
			}})
	}
	_, err := writeFindings(w, format, out)
	return err
}

// renderClientTable writes one row per scenario and transport, then the
// counts.
func renderClientTable(w io.Writer, rep *clientdrill.Report, width int) error {
	g := newGrid(gridColumn{name: "scenario"}, gridColumn{name: "transport"}, gridColumn{name: "verdict"},
		gridColumn{name: "expected", label: true}, gridColumn{name: "evidence", long: true})
	for _, r := range rep.Results {
		exp := "yes"
		if !r.Expected {
			exp = "NO"
		}
		g.add(r.Scenario, string(r.Transport), r.Verdict(), exp, r.Evidence.App+"; "+r.Evidence.Exit)
	}
	if err := g.render(w, width); err != nil {
		return err
	}
	var parts []string
	for _, oc := range slices.Sorted(mapKeys(rep.Counts)) {
		parts = append(parts, fmt.Sprintf("%s %d", oc, rep.Counts[oc]))
	}
	_, err := fmt.Fprintf(w, "%d scenario runs: %s; %d findings\n", len(rep.Results), strings.Join(parts, ", "), len(rep.Findings))
	return err
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// renderScenarios writes the catalogue fitted to width.
func renderScenarios(w io.Writer, width int) error {
	g := newGrid(gridColumn{name: "scenario"}, gridColumn{name: "tool"}, gridColumn{name: "expect"}, gridColumn{name: "behaviour", long: true})
	for _, s := range clientdrill.Catalogue() {
		exp := make([]string, len(s.Expect))
		for i, e := range s.Expect {
			exp[i] = string(e)
		}
		g.add(s.ID, s.Tool, strings.Join(exp, "|"), s.Behaviour)
	}
	return g.render(w, width)
}

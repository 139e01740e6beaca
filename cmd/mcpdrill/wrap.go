package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/faults"
	"github.com/mcpdrill/mcpdrill/internal/inputfile"
	"github.com/mcpdrill/mcpdrill/internal/redact"
	"github.com/mcpdrill/mcpdrill/internal/safetext"
	tgt "github.com/mcpdrill/mcpdrill/internal/target"
	"github.com/mcpdrill/mcpdrill/proxy"
)

// wrapCommand is the `mcpdrill wrap` command; run (nil: runWrap) starts
// the proxy the parsed wrapOptions describe.
func wrapCommand(run func(context.Context, *wrapOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "wrap",
		ArgsUsage: "[-- SERVER COMMAND...]",
		Usage:     "put a seeded fault-injection proxy between an MCP client and a server",
		Description: "stdio: use `mcpdrill wrap [flags] -- server argv...` as the server command in the client's config.\n\n" +
			"HTTP: `mcpdrill wrap --listen 127.0.0.1:7070 --upstream http://127.0.0.1:3000/mcp` and point the client\n" +
			"at the listen address (same path as the upstream's).\n\n" +
			"Bridge: `mcpdrill wrap --listen 127.0.0.1:7070 -- server argv...` serves a stdio server as Streamable\n" +
			"HTTP on /mcp (one server process per session), so URL-only clients can test it.\n\n" +
			"Faults come from --plan FILE (YAML or JSON) or from --faults/--rate/--only/--tool. The same seed and\n" +
			"traffic give the same faults on the same messages; --log appends the session's plan, then each fault,\n" +
			"as JSON lines, and --plan LOG decides the same faults again (the log's last session, or the last one\n" +
			"named by --session). The seed and each injected fault are also one line on stderr (--quiet: none).\n" +
			"Lifecycle messages (initialize, notifications/initialized, ping, server/discover, and the replies\n" +
			"to them) are left alone unless a rule names them by method (--only initialize).\n" +
			"Run `mcpdrill faults` for the list. With no faults the proxy forwards every byte untouched.\n\n" +
			wrapExitCodesHelp,
		Flags:  append(wrapFlags(), wrapGuardFlags()...),
		Action: action(parseWrapOptions, run, runWrap),
	}
}

// wrapFlags are wrap's flags but for guard mode's.
func wrapFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "faults", Usage: "comma-separated `NAMES` (each NAME[:PARAM=VALUE...])"},
		&cli.Float64Flag{Name: "rate", Value: 1, Usage: "probability each fault fires on a matching message, in [0,1]"},
		&cli.StringFlag{Name: "only", Usage: "comma-separated method `GLOBS` to target (a response matches its request's method)"},
		&cli.StringFlag{Name: "tool", Usage: "tool name `GLOB` for tools/call requests and their responses"},
		&cli.StringFlag{Name: "direction", Usage: "c2s, s2c or any (default: each fault's own, mostly s2c)"},
		&cli.StringFlag{Name: "plan", Usage: "fault plan `FILE` (YAML or JSON), or the --log of an earlier run to decide the same faults again; excludes --faults"},
		&cli.Uint64Flag{Name: "seed", Usage: "seed `N` for every decision", DefaultText: "random, printed on stderr unless --quiet"},
		&cli.StringFlag{Name: "session", Usage: "session `NAME` mixed into every decision; with --plan LOG, also the session of the log to replay (default: the plan's, or \"default\"; for a log, its last session)"},
		&cli.StringFlag{Name: "log", Usage: "append this session to `FILE` as JSON lines: its plan, then every injected fault"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print nothing on stderr but errors: no seed line, no line per injected fault (--log still records both; HTTP mode still says a port it chose)"},
		&cli.StringFlag{Name: "listen", Usage: "HTTP mode: listen on `ADDR` (host defaults to 127.0.0.1), in front of --upstream, or of a stdio server command given after -- (one process per session)"},
		&cli.StringFlag{Name: "upstream", Usage: "HTTP mode: the server's MCP endpoint `URL`"},
		&cli.StringSliceFlag{Name: "allow-origin", Usage: "HTTP mode: also accept this browser `ORIGIN` (loopback origins always pass)"},
		&cli.BoolFlag{Name: "allow-remote", Usage: "HTTP mode: allow --listen on a non-loopback address (the proxy then relays the server, and its callers' credentials, to the network)"},
		&cli.IntFlag{Name: "max-frame", Usage: "largest frame in `BYTES` the proxy examines; larger ones pass unexamined, are withheld under --guard, or dropped by a bridge (--listen with a command: it must hold a reply to route it)", DefaultText: "64 MiB"},
		&cli.Int64Flag{Name: "memory-budget", Usage: "HTTP mode: `BYTES` of request and reply bodies held at once across all connections; past it new requests get 503", DefaultText: "256 MiB"},
	}
}

// wrapOptions is what one `mcpdrill wrap` asks for.
type wrapOptions struct {
	env
	// plan is the fault plan (nil: none, pure pass-through) and maxFrame
	// --max-frame.
	plan     *faults.Plan
	maxFrame int
	// log is --log's file ("": none); quiet is --quiet.
	log   string
	quiet bool
	// guard is --guard's (nil: no guard mode).
	guard *wrapGuardOptions
	// argv is the stdio server's command line.
	argv []string
	// http is HTTP mode's (nil: stdio).
	http *wrapHTTPOptions
}

// wrapHTTPOptions is wrap's HTTP mode: --listen in front of --upstream, or
// of argv (a bridge).
type wrapHTTPOptions struct {
	// addr is --listen, host defaulted, checked against --allow-remote.
	addr, upstream string
	allowOrigins   []string
	// budget is --memory-budget (its default when not given).
	budget int64
}

// parseWrapOptions reads and checks wrap's flags, arguments and --plan;
// problems are usage errors.
func parseWrapOptions(c *cmdLine) (*wrapOptions, error) {
	plan, err := wrapPlan(c)
	if err != nil {
		return nil, err
	}
	o := &wrapOptions{plan: plan, maxFrame: c.Int("max-frame"), log: c.String("log"), quiet: c.Bool("quiet"), argv: c.Args().Slice()}
	if o.guard, err = parseWrapGuard(c); err != nil {
		return nil, err
	}
	if c.String("listen") == "" && c.String("upstream") == "" {
		if len(o.argv) == 0 {
			return nil, usageErr("wrap: no server command (use `mcpdrill wrap [flags] -- server argv...`, or --listen with --upstream)")
		}
		return o, nil
	}
	o.http, err = parseWrapHTTP(c, len(o.argv) > 0, o.guard != nil)
	if err != nil {
		return nil, err
	}
	return o, nil
}

// parseWrapHTTP reads and checks HTTP mode's flags; bridge is whether a
// server command was given, guarded whether --guard was.
func parseWrapHTTP(c *cmdLine, bridge, guarded bool) (*wrapHTTPOptions, error) {
	o := &wrapHTTPOptions{addr: c.String("listen"), upstream: c.String("upstream"), allowOrigins: c.StringSlice("allow-origin"), budget: c.Int64("memory-budget")}
	switch {
	case bridge && o.upstream != "":
		return nil, usageErr("wrap: give either a server command or --upstream, not both")
	case o.addr == "":
		return nil, usageErr("wrap: HTTP mode needs --listen")
	case !bridge && o.upstream == "":
		return nil, usageErr("wrap: --listen needs --upstream URL, or a stdio server command after --")
	}
	if !strings.Contains(o.addr, ":") {
		o.addr = ":" + o.addr
	}
	if strings.HasPrefix(o.addr, ":") {
		o.addr = "127.0.0.1" + o.addr
	}
	if !c.Bool("allow-remote") {
		if err := tgt.CheckListenAddr(o.addr); err != nil {
			return nil, usageErr("--listen: %v (use --allow-remote to listen beyond this machine)", err)
		}
	}
	switch {
	case o.budget < 0:
		return nil, usageErr("--memory-budget must not be negative")
	case o.budget == 0:
		o.budget = proxy.DefaultMemoryBudget
	}
	if bridge && guarded {
		return nil, usageErr("wrap: --guard pins one server process; with --listen and a command every session starts its own")
	}
	return o, nil
}

// runWrap runs the proxy until its server exits (stdio) or a signal ends
// it (HTTP).
func runWrap(ctx context.Context, o *wrapOptions) error {
	plan := o.plan
	cfg := proxy.Config{Plan: plan, MaxFrame: o.maxFrame}
	if plan != nil && !o.quiet {
		fmt.Fprintf(o.stderr, "mcpdrill wrap: seed %d, session %q, %d rule(s)\n", plan.Seed, plan.Session, len(plan.Rules))
	}
	if o.log != "" {
		f, err := openLog(o.log)
		if err != nil {
			return usageErr("--log: %v", err)
		}
		defer f.Close()
		rec := (*proxy.JSONL)(nil)
		if plan == nil {
			rec = proxy.NewJSONL(f) // no plan: nothing will be recorded
		} else if rec, err = proxy.NewJSONLog(f, plan); err != nil {
			return usageErr("--log: %v", err)
		}
		cfg.Recorder = rec
		defer func() {
			if err := rec.Err(); err != nil {
				fmt.Fprintln(o.stderr, "mcpdrill wrap: event log:", err)
			}
		}()
	}
	if plan != nil && !o.quiet {
		cfg.Recorder = &faultNotices{w: o.stderr, next: cfg.Recorder}
	}
	if o.guard != nil {
		g, err := o.guard.start(o.stderr)
		if err != nil {
			return err
		}
		defer stopGuard(g, o.stderr)
		cfg.Guard = g
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()

	if o.http != nil {
		return wrapHTTP(ctx, o.env, cfg, o.argv, o.http, o.quiet)
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	// A client that closes its end early must give EPIPE, not kill the proxy.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	code, err := proxy.RunStdio(ctx, proxy.StdioOptions{
		Config: cfg, Command: o.argv,
		Stdin: o.stdin, Stdout: o.stdout, Stderr: o.stderr, Signals: sigs,
	})
	if err != nil {
		return exitErr(exitUnreachable, err)
	}
	if code != 0 {
		fmt.Fprintf(o.stderr, "mcpdrill wrap: the server exited with status %d; wrap exits with it\n", code)
		return exitErr(code, nil)
	}
	return nil
}

// wrapPlan builds the plan from --plan or the short flags; nil means no
// faults at all (pure pass-through).
func wrapPlan(c *cmdLine) (*faults.Plan, error) {
	var plan *faults.Plan
	switch {
	case c.IsSet("plan") && c.IsSet("faults"):
		return nil, usageErr("wrap: --plan and --faults exclude each other")
	case c.IsSet("plan"):
		data, err := inputfile.Read(c.String("plan"))
		if err != nil {
			return nil, usageErr("--plan: %v", err)
		}
		// An event log of an earlier run is a plan too: a session's first
		// line.
		p, isLog, err := proxy.PlanOfSession(data, c.String("session"))
		if !isLog {
			p, err = faults.ParsePlan(data)
		}
		if err != nil {
			return nil, usageErr("--plan %s: %v", c.String("plan"), err)
		}
		plan = p
		if !plan.SeedSet {
			plan.Seed = randomSeed()
		}
	case c.IsSet("faults"):
		rate := c.Float64("rate")
		p, err := faults.PlanFromFlags(faults.FlagOptions{
			Faults: splitList(c.String("faults")), Rate: &rate, Only: splitList(c.String("only")),
			Tool: c.String("tool"), Direction: c.String("direction"),
		})
		if err != nil {
			return nil, usageErr("%s", wordPlanOptions(err))
		}
		plan = p
		plan.Seed = randomSeed()
	default:
		for _, f := range []string{"rate", "only", "tool", "direction"} {
			if c.IsSet(f) {
				return nil, usageErr("wrap: --%s needs --faults", f)
			}
		}
		return nil, nil
	}
	if c.IsSet("seed") {
		plan.Seed = c.Uint64("seed")
	}
	if c.IsSet("session") {
		plan.Session = c.String("session")
	}
	return plan, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func randomSeed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:]) >> 1
}

// wrapHTTP serves cfg's proxy over HTTP in front of o's upstream, or of
// argv (a bridge: one server process per session), until a signal.
// quiet leaves out the line that says where it listens unless the system
// chose the port.
func wrapHTTP(ctx context.Context, e env, cfg proxy.Config, argv []string, o *wrapHTTPOptions, quiet bool) error {
	errOut := e.stderr
	if e.getenv("GOMEMLIMIT") == "" {
		// Freed bodies are garbage until a collection: without a limit
		// the heap may grow to twice what the budget holds.
		debug.SetMemoryLimit(o.budget + 128<<20)
	}
	onError := func(err error) { fmt.Fprintf(errOut, "mcpdrill wrap: %s\n", safetext.Text(err.Error())) }
	var serve func(context.Context, net.Listener) error
	to := redact.URL(o.upstream)
	if len(argv) > 0 {
		b, err := proxy.NewBridge(proxy.BridgeOptions{Config: cfg, Command: argv, Stderr: e.stderr, AllowOrigins: o.allowOrigins, MemoryBudget: o.budget, OnError: onError})
		if err != nil {
			return usageErr("wrap: %v", err)
		}
		serve, to = b.Serve, redact.Command(argv)+" over stdio, one process per session"
	} else {
		h, err := proxy.NewHTTP(proxy.HTTPOptions{Config: cfg, Upstream: o.upstream, AllowOrigins: o.allowOrigins, MemoryBudget: o.budget, OnError: onError})
		if err != nil {
			return usageErr("--upstream: %v", err)
		}
		serve = h.Serve
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return listenError("--listen", o.addr, err)
	}
	if _, port, _ := net.SplitHostPort(o.addr); !quiet || port == "0" {
		fmt.Fprintf(errOut, "mcpdrill wrap: listening on http://%s → %s\n", ln.Addr(), to)
	}
	sctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := serve(sctx, ln); err != nil {
		return exitErr(exitInternal, err)
	}
	return nil
}

// wrapExitCodesHelp is wrap's EXIT CODES block: once the server runs, its
// status is wrap's.
const wrapExitCodesHelp = `EXIT CODES:
   stdio: the server's own exit status once it has started (128+N when a
   signal N ended it; a status other than 0 is announced on stderr), or
   2  usage error (nothing was started)
   3  the server could not be started
   HTTP: 0 after SIGINT or SIGTERM, 2 usage error, 4 internal error`

// faultNotices is the Recorder of `wrap`: it prints one stderr line for
// each injected fault (rule, fault, action, direction, kind, method, tool
// and id, never a payload byte) and hands the event on to next, the --log
// recorder (nil: none).
type faultNotices struct {
	mu   sync.Mutex
	w    io.Writer
	next proxy.Recorder
}

// Record prints e's line, then records it in next.
func (n *faultNotices) Record(e proxy.Event) {
	line := faultNotice(e)
	n.mu.Lock()
	fmt.Fprintln(n.w, line)
	n.mu.Unlock()
	if n.next != nil {
		n.next.Record(e)
	}
}

// faultNotice is the stderr line for one injected fault. Method, tool and
// id come from the traffic: they are quoted (control characters escaped)
// and cut to noticeMax characters.
func faultNotice(e proxy.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "mcpdrill wrap: fault %s (rule %s): %s on %s %s #%d", e.Fault, noticeText(e.RuleName), e.Action, e.Dir, e.Kind, e.Index)
	if !e.Applied {
		b.WriteString(" (not applied)")
	}
	if e.Method != "" {
		b.WriteString(", method " + noticeText(e.Method))
	}
	if e.Tool != "" {
		b.WriteString(", tool " + noticeText(e.Tool))
	}
	if len(e.ID) > 0 {
		b.WriteString(", id " + noticeID(e.ID))
	}
	return b.String()
}

// noticeMax is the most characters of a method, tool or id a notice shows.
const noticeMax = 64

// noticeText quotes s (safetext.Quote), cut to noticeMax characters.
func noticeText(s string) string {
	if r := []rune(s); len(r) > noticeMax {
		s = string(r[:noticeMax]) + "…"
	}
	return safetext.Quote(s)
}

// noticeID shows a JSON-RPC id: a number as it is, a string quoted.
func noticeID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return noticeText(s)
	}
	if n := string(raw); len(n) <= noticeMax && strings.Trim(n, "0123456789+-.eE") == "" {
		return n
	}
	return "(unprintable)"
}

// openLog opens the --log file for appending, so that each session adds
// its records after the earlier ones. A file whose last line was cut short
// (a session killed mid-write) is ended first, so the new session's first
// record starts a line of its own.
func openLog(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > 0 {
		last := make([]byte, 1)
		if r, err := os.Open(path); err == nil {
			_, err = r.ReadAt(last, st.Size()-1)
			r.Close()
			if err == nil && last[0] != '\n' {
				if _, err := f.Write([]byte("\n")); err != nil {
					f.Close()
					return nil, err
				}
			}
		}
	}
	return f, nil
}

// planOptionFlags are wrap's flags for the fields of faults.FlagOptions.
var planOptionFlags = map[string]string{
	"Faults": "--faults", "Rate": "--rate", "Only": "--only", "Tool": "--tool", "Direction": "--direction",
}

// wordPlanOptions words the problems faults.PlanFromFlags reports as wrap's
// flags, one per line.
func wordPlanOptions(err error) string {
	var errs []error
	if j, ok := errors.Unwrap(err).(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	lines := []string{"wrap: invalid fault flags:"}
	for _, e := range errs {
		var oe *faults.OptionError
		if !errors.As(e, &oe) {
			lines = append(lines, e.Error())
			continue
		}
		flag := planOptionFlags[oe.Field]
		if oe.Fault != "" {
			flag += " " + oe.Fault
		}
		lines = append(lines, flag+": "+oe.Err.Error())
	}
	return strings.Join(lines, "\n")
}

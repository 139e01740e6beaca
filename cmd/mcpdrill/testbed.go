package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	tgt "github.com/mcpdrill/mcpdrill/internal/target"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// testbedCommand is the `mcpdrill testbed` command; run (nil: runTestbed)
// serves what the parsed testbedOptions ask for.
func testbedCommand(run func(context.Context, *testbedOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "testbed",
		ArgsUsage: " ",
		Usage:     "run mcpdrill's built-in MCP server, well-behaved or misbehaving on purpose",
		Description: "Serves a named profile over stdio (default) or HTTP (--http). Profiles range from a\n" +
			"conformant dual-era server (good) to hostile ones (hang, flood, hugeline, crash, ...).\n\n" +
			"Try: mcpdrill testbed --list; mcpdrill scan -- mcpdrill testbed --profile sloppy-errors",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "profile", Value: "good", Usage: "profile `NAME` (see --list)"},
			&cli.StringFlag{Name: "http", Usage: "serve HTTP on `ADDR` (host:port, loopback) instead of stdio; the URL is printed on stderr"},
			&cli.BoolFlag{Name: "allow-remote", Usage: "allow --http on a non-loopback address"},
			&cli.StringFlag{Name: "version", Usage: "serverInfo.version `V`; the drifting profile serves tool set 1 or 2"},
			&cli.Uint64Flag{Name: "seed", Usage: "seed `N` for generated data"},
			&cli.IntFlag{Name: "drift-after", Usage: "drifting: rug-pull after `N` tools/list requests (negative: never)"},
			&cli.IntFlag{Name: "page-size", Usage: "tools/list page size `N`", DefaultText: "per profile"},
			&cli.StringFlag{Name: "reply", Usage: "HTTP reply style `json|sse` (default per profile)"},
			&cli.BoolFlag{Name: "list", Usage: "print the profiles and what a scan of each should find"},
			&cli.IntFlag{Name: "huge-bytes", Hidden: true},
			&cli.IntFlag{Name: "schema-depth", Hidden: true},
			&cli.DurationFlag{Name: "delay", Hidden: true},
			&cli.DurationFlag{Name: "start-delay", Hidden: true},
		},
		Action: action(parseTestbedOptions, run, runTestbed),
	}
}

// testbedOptions is what one `mcpdrill testbed` asks for: the profile list,
// or a server with its options over stdio or, at addr, HTTP.
type testbedOptions struct {
	env
	list   bool
	server testbed.Options
	// addr is --http, checked against --allow-remote ("": stdio).
	addr string
}

// parseTestbedOptions reads and checks testbed's flags; problems are
// usage errors.
func parseTestbedOptions(c *cmdLine) (*testbedOptions, error) {
	if c.Bool("list") {
		return &testbedOptions{list: true}, nil
	}
	if err := noArguments(c); err != nil {
		return nil, err
	}
	name := c.String("profile")
	if _, ok := testbed.Lookup(name); !ok {
		return nil, usageErr("unknown profile %q (see mcpdrill testbed --list)", name)
	}
	reply := c.String("reply")
	if reply != "" && reply != "json" && reply != "sse" {
		return nil, usageErr("--reply must be json or sse, got %q", reply)
	}
	o := &testbedOptions{addr: c.String("http"), server: testbed.Options{
		Profile:     name,
		Seed:        c.Uint64("seed"),
		Version:     c.String("version"),
		DriftAfter:  c.Int("drift-after"),
		PageSize:    c.Int("page-size"),
		Reply:       reply,
		HugeBytes:   c.Int("huge-bytes"),
		SchemaDepth: c.Int("schema-depth"),
		Delay:       c.Duration("delay"),
		StartDelay:  c.Duration("start-delay"),
	}}
	if o.addr != "" && !c.Bool("allow-remote") {
		if err := tgt.CheckListenAddr(o.addr); err != nil {
			return nil, usageErr("%v (use --allow-remote to serve beyond this machine)", err)
		}
	}
	return o, nil
}

// runTestbed prints the profiles, or serves one until its client leaves
// (stdio) or a signal.
func runTestbed(ctx context.Context, t *testbedOptions) error {
	if t.list {
		return renderProfiles(t.stdout, outputWidth(t.stdout))
	}
	o := t.server
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if t.addr != "" {
		return serveTestbedHTTP(ctx, t.stderr, t.addr, o)
	}
	err := testbed.ServeStdio(ctx, o, t.stdin, t.stdout, t.stderr)
	switch {
	case errors.Is(err, testbed.ErrCrashed):
		return exitErr(exitFindings, nil) // a crashing server exits 1
	case err == nil, errors.Is(err, context.Canceled):
		return nil
	}
	return exitErr(exitInternal, err)
}

func serveTestbedHTTP(ctx context.Context, stderr io.Writer, addr string, o testbed.Options) error {
	o.OnCrash = func() { os.Exit(exitFindings) } // a crashing server exits 1
	h, err := testbed.NewHandler(o)
	if err != nil {
		return exitErr(exitInternal, err)
	}
	return serveHTTP(ctx, stderr, addr, "profile "+o.Profile, testbed.PathMCP, h)
}

// serveHTTP listens on addr (checked by the parse), prints the URL on
// stderr and serves h until ctx ends.
func serveHTTP(ctx context.Context, stderr io.Writer, addr, what, path string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return listenError("--http", addr, err)
	}
	fmt.Fprintf(stderr, "mcpdrill testbed: %s listening on http://%s%s\n", what, ln.Addr(), path)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		_ = srv.Close()
		return nil
	case err := <-errc:
		return exitErr(exitInternal, fmt.Errorf("testbed: %w", err))
	}
}

// renderProfiles writes the testbed's profiles fitted to width: each one's
// name, kind, the revisions it speaks and what a scan of it should find.
func renderProfiles(w io.Writer, width int) error {
	g := newGrid(gridColumn{name: "profile"}, gridColumn{name: "kind"}, gridColumn{name: "revisions"}, gridColumn{name: "summary", long: true})
	for _, p := range testbed.Profiles() {
		kind := "fixture"
		if p.Hostile {
			kind = "hostile"
		}
		g.add(p.Name, kind, revRange(p.Revisions), p.Summary)
	}
	return g.render(w, width)
}

// revRange renders newest-first revisions as oldest..newest.
func revRange(revs []string) string {
	switch len(revs) {
	case 0:
		return "-"
	case 1:
		return revs[0]
	}
	return revs[len(revs)-1] + ".." + revs[0]
}

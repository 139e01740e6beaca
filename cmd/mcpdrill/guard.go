package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fatih/color"
	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/drift"
	"github.com/mcpdrill/mcpdrill/guard"
	"github.com/mcpdrill/mcpdrill/guard/intercept"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/safetext"
)

// guardDirEnv names the store directory when --dir is not given.
const guardDirEnv = "MCPDRILL_GUARD_DIR"

// guardCommand is the `mcpdrill guard` command.
func guardCommand() *cli.Command {
	return &cli.Command{
		Name:  "guard",
		Usage: "review and approve the tool sets `wrap --guard` pins (status, diff, approve, quarantine, release, audit)",
		Description: "`mcpdrill wrap --guard DIR` pins every server's tool set: the first listing becomes the approved\n" +
			"baseline (discovery posture) or waits for approval (strict posture); a later listing that differs\n" +
			"fails closed (its tools are withheld and calls refused) until an operator reviews and approves it.\n" +
			"Statuses: verified (served), changed, pending, quarantined (all withheld). Every transition and\n" +
			"operator action is appended to DIR/audit.jsonl.\n\n" +
			exitCodes("a shown server is withheld (status), or the tool sets differ (diff)", true),
		Subcommands: guardCommands(nil),
	}
}

// guardCommands are guard's subcommands; run (nil: each one's own) does
// the work once the flags are parsed into guardOptions.
func guardCommands(run func(context.Context, *guardOptions) error) []*cli.Command {
	dir := &cli.StringFlag{Name: "dir", EnvVars: []string{guardDirEnv}, Usage: "guard store `DIR` (the one given to `wrap --guard`)"}
	actor := &cli.StringFlag{Name: "actor", Usage: "who is acting, for the audit log (default: $USER)"}
	jsonFlag := &cli.BoolFlag{Name: "json", Usage: "write JSON"}
	return []*cli.Command{
		{
			Name:      "status",
			ArgsUsage: "[SERVER]",
			Usage:     "show each server's status (exit 1 when a shown server is withheld)",
			Flags:     []cli.Flag{dir, jsonFlag},
			Action:    action(parseGuardOptions(true), run, runGuardStatus),
		},
		{
			Name:      "diff",
			ArgsUsage: "SERVER [-- SERVER COMMAND...]",
			Usage:     "compare the approved tool set with the last-seen one, or with the live server",
			Description: "Without a target, compares the baseline with the set a proxy saw last. With --url or a command\n" +
				"after --, lists the live server's tools first. Changes are classified by the drift rule catalogue\n" +
				"(`mcpdrill rules`). Exit 1 when the sets differ.",
			Flags:  append([]cli.Flag{dir, jsonFlag}, targetFlags()...),
			Action: action(parseGuardDiffOptions, run, runGuardDiff),
		},
		{
			Name:      "approve",
			ArgsUsage: "--fingerprint FP SERVER | --current SERVER",
			Usage:     "re-baseline SERVER to the tool set you reviewed (status verified)",
			Description: "Approves SERVER's last-seen tool set, the one `guard diff SERVER` shows, and prints what it approved.\n" +
				"--fingerprint names that set as diff, status and the proxy's refusals print it: if a proxy has seen\n" +
				"another set since, nothing is approved. --current approves whatever set was seen last, reviewed or\n" +
				"not. One of the two is required.",
			Flags: []cli.Flag{dir, actor,
				&cli.StringFlag{Name: "fingerprint", Usage: "approve only if the last-seen set still has this `FP` (as diff shows it)"},
				&cli.BoolFlag{Name: "current", Usage: "approve whatever set was seen last, without naming it"}},
			Action: action(parseGuardApproveOptions, run, runGuardApprove),
		},
		{
			Name:      "quarantine",
			ArgsUsage: "SERVER",
			Usage:     "put SERVER on hold (its tools are withheld until release)",
			Flags:     []cli.Flag{dir, actor, &cli.StringFlag{Name: "note", Usage: "why, for the audit log"}},
			Action:    action(parseGuardOptions(false), run, runGuardQuarantine),
		},
		{
			Name:      "release",
			ArgsUsage: "SERVER",
			Usage:     "lift a quarantine (back to verified, changed or pending, as the record shows)",
			Flags:     []cli.Flag{dir, actor},
			Action:    action(parseGuardOptions(false), run, runGuardRelease),
		},
		{
			Name:      "audit",
			ArgsUsage: "[SERVER]",
			Usage:     "print the audit log",
			Flags:     []cli.Flag{dir, jsonFlag},
			Action:    action(parseGuardOptions(true), run, runGuardAudit),
		},
	}
}

// guardOptions is what one guard subcommand asks for.
type guardOptions struct {
	env
	store *guard.Store
	// hint is the store directory the suggested commands name ([hintDir]).
	hint string
	// server is the SERVER argument ("": every server, for status and audit).
	server string
	json   bool
	// actor is --actor (default: $USER), for the audit log.
	actor string
	// fingerprint is approve's --fingerprint, note quarantine's --note.
	fingerprint, note string
	// current is approve's --current: whatever set was seen last.
	current bool
	// live is diff's live server (nil: the last-seen set), deadline its
	// whole-run limit.
	live     *mcp.Config
	deadline time.Duration
}

// parseGuardOptions is the parse of a guard subcommand that takes one
// SERVER (optional: at most one); problems are usage errors.
func parseGuardOptions(optional bool) func(*cmdLine) (*guardOptions, error) {
	return func(c *cmdLine) (*guardOptions, error) {
		o, _, err := parseGuardArgs(c, optional, false)
		return o, err
	}
}

// parseGuardApproveOptions is approve's parse: the set to approve is
// named, by --fingerprint, or --current says to take whatever was seen
// last; never neither, so that a set that changed after the user's review
// is not approved unseen.
func parseGuardApproveOptions(c *cmdLine) (*guardOptions, error) {
	o, _, err := parseGuardArgs(c, false, false)
	if err != nil {
		return nil, err
	}
	o.current = c.Bool("current")
	switch {
	case o.current && o.fingerprint != "":
		return nil, usageErr("approve: --fingerprint and --current exclude each other")
	case !o.current && o.fingerprint == "":
		return nil, usageErr("approve: say which tool set to approve: --fingerprint FP, as `%s` shows it, or --current for whatever set was seen last (it may have changed since it was reviewed)",
			guardCommandLine(o.hint, "diff", o.server))
	}
	return o, nil
}

// parseGuardDiffOptions is diff's parse: SERVER, then the live server's
// command if any.
func parseGuardDiffOptions(c *cmdLine) (*guardOptions, error) {
	o, args, err := parseGuardArgs(c, false, true)
	if err != nil {
		return nil, err
	}
	o.deadline = c.Duration("deadline")
	if c.String("url") != "" || len(args) > 1 {
		// The target's argv is everything after SERVER.
		cfg, err := targetConfigFor(c, args[1:])
		if err != nil {
			return nil, err
		}
		o.live = &cfg
	}
	return o, nil
}

// parseGuardArgs reads what every guard subcommand takes: its positional
// arguments (interspersed, so that `guard status SERVER --dir DIR` works),
// the store its --dir names and its flags. The first argument is SERVER,
// which must be valid, and optional says whether it may be missing; rest
// whether more may follow it (diff's server command). It returns the
// positional arguments too.
func parseGuardArgs(c *cmdLine, optional, rest bool) (*guardOptions, []string, error) {
	args, err := interspersed(c)
	if err != nil {
		return nil, nil, err
	}
	st, err := openGuardStore(c)
	if err != nil {
		return nil, nil, err
	}
	o := &guardOptions{store: st, hint: hintDir(c), json: c.Bool("json"), actor: guardActor(c), fingerprint: c.String("fingerprint"), note: c.String("note")}
	switch {
	case len(args) == 0 && optional:
		return o, args, nil
	case len(args) == 0:
		return nil, nil, usageErr("%s: want a SERVER id (see `mcpdrill guard status`)", c.cli.Command.Name)
	case len(args) > 1 && !rest:
		return nil, nil, usageErr("%s: unexpected %q after SERVER", c.cli.Command.Name, args[1])
	}
	if err := guard.ValidServerName(args[0]); err != nil {
		return nil, nil, exitErr(exitUsage, err)
	}
	o.server = args[0]
	return o, args, nil
}

// hintDir is the store directory that the commands guard suggests must
// name with --dir: the one given, unless $MCPDRILL_GUARD_DIR names it, so
// that a suggestion pasted as it is acts on the same store.
func hintDir(c *cmdLine) string { return hintFor(c.String("dir")) }

// hintFor is hintDir for the store directory d, made absolute so that a
// suggestion works from any directory.
func hintFor(d string) string {
	if env := os.Getenv(guardDirEnv); env != "" && filepath.Clean(env) == filepath.Clean(d) {
		return ""
	}
	if abs, err := filepath.Abs(d); err == nil {
		return abs
	}
	return d
}

// guardHint words the operator commands the guard suggests as this CLI's
// guard subcommands for the store in dir: an approve names its set with
// --fingerprint, so that it approves what the user was shown.
func guardHint(dir string) guard.Hint {
	return func(c guard.Command) string {
		var args []string
		if c.Fingerprint != "" {
			args = append(args, "--fingerprint", c.Fingerprint)
		}
		return guardCommandLine(dir, c.Verb, append(args, c.Server)...)
	}
}

// guardCommandLine is the shell command line of `mcpdrill guard VERB` for
// the store in dir (named with --dir unless dir is empty), followed by
// args, each quoted for a POSIX shell where it needs it: a suggestion that
// can be pasted as it is.
func guardCommandLine(dir, verb string, args ...string) string {
	parts := []string{"mcpdrill", "guard", verb}
	if dir != "" {
		parts = append(parts, "--dir", shellQuote(dir))
	}
	for _, a := range args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-@+/:=", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// openGuardStore opens --dir (or $MCPDRILL_GUARD_DIR); it must exist.
func openGuardStore(c *cmdLine) (*guard.Store, error) {
	d := c.String("dir")
	if d == "" {
		return nil, usageErr("no guard store: give --dir DIR (or set %s)", guardDirEnv)
	}
	if st, err := os.Stat(d); err != nil || !st.IsDir() {
		return nil, usageErr("--dir %s: not a guard store directory", d)
	}
	s, err := guard.Open(d)
	if err != nil {
		return nil, exitErr(exitInternal, err)
	}
	return s, nil
}

func guardActor(c *cmdLine) string {
	if a := strings.TrimSpace(c.String("actor")); a != "" {
		return a
	}
	if u := c.getenv("USER"); u != "" {
		return u
	}
	return "unknown"
}

// storeErr maps a store error to an exit code: a refused transition or a
// bad server name is the user's mistake (2); a store that cannot be read,
// whether a record is corrupt or unreadable (a directory, no permission),
// and anything else is an internal error (4), since the command line was
// right.
func storeErr(err error) error {
	switch {
	case errors.Is(err, guard.ErrBadServerName),
		errors.Is(err, guard.ErrUnknownServer), errors.Is(err, guard.ErrNothingToApprove),
		errors.Is(err, guard.ErrQuarantined), errors.Is(err, guard.ErrNotQuarantined),
		errors.Is(err, guard.ErrFingerprintMismatch):
		return exitErr(exitUsage, err)
	}
	return exitErr(exitInternal, err)
}

// guardStatusRow is one server in `guard status --json`.
type guardStatusRow struct {
	Server      string     `json:"server"`
	Status      string     `json:"status"`
	Serves      bool       `json:"serves"`
	Baseline    string     `json:"baseline,omitempty"`
	LastSeen    string     `json:"last_seen,omitempty"`
	Tools       int        `json:"tools"`
	DriftAt     *time.Time `json:"drift_at,omitempty"`
	ApprovedBy  string     `json:"approved_by,omitempty"`
	ApprovedAt  *time.Time `json:"approved_at,omitempty"`
	Explanation string     `json:"explanation,omitempty"`
}

// statusRow is r's row of `guard status`; dir is the store its suggested
// commands name ([hintDir]).
func statusRow(dir string, r *guard.Record) guardStatusRow {
	row := guardStatusRow{Server: r.Server, Status: r.Status.String(), Serves: r.Serves(), DriftAt: r.DriftAt,
		ApprovedBy: r.ApprovedBy, ApprovedAt: r.ApprovedAt}
	if r.Baseline != nil {
		row.Baseline, row.Tools = r.Baseline.Fingerprint, len(r.Baseline.Tools)
	}
	if r.LastSeen != nil {
		row.LastSeen = r.LastSeen.Fingerprint
		if r.Baseline == nil {
			row.Tools = len(r.LastSeen.Tools)
		}
	}
	if !row.Serves {
		row.Explanation = guard.Explain(guardHint(dir), r.Server, r)
	}
	return row
}

// runGuardStatus shows every server's status, or SERVER's; exit 1 when a
// shown server is withheld.
func runGuardStatus(ctx context.Context, o *guardOptions) error {
	var recs []guard.Record
	if o.server != "" {
		r, err := o.record()
		if err != nil {
			return err
		}
		recs = []guard.Record{*r}
	} else {
		var err error
		if recs, err = o.store.List(); err != nil {
			return storeErr(err)
		}
	}
	rows := make([]guardStatusRow, len(recs))
	held := false
	for i := range recs {
		rows[i] = statusRow(o.hint, &recs[i])
		held = held || !rows[i].Serves
	}
	if o.json {
		if err := writeJSON(o.stdout, map[string]any{"servers": rows}); err != nil {
			return err
		}
	} else if err := renderGuardStatus(o.stdout, rows); err != nil {
		return err
	}
	if held {
		return exitErr(exitFindings, nil)
	}
	return nil
}

// record is SERVER's record; an unknown server is a usage error.
func (o *guardOptions) record() (*guard.Record, error) {
	r, err := o.store.Get(o.server)
	if err != nil {
		return nil, storeErr(err)
	}
	if r == nil {
		return nil, exitErr(exitUsage, fmt.Errorf("%w: %q in %s", guard.ErrUnknownServer, o.server, o.store.Dir()))
	}
	return r, nil
}

func shortFP(fp string) string {
	fp = strings.TrimPrefix(fp, "sha256:")
	if len(fp) > 12 {
		return fp[:12]
	}
	if fp == "" {
		return "-"
	}
	return fp
}

func renderGuardStatus(w io.Writer, rows []guardStatusRow) error {
	if len(rows) == 0 {
		fmt.Fprintln(w, "No servers pinned yet.")
		return nil
	}
	p := newPainter(w)
	g := newGrid(gridColumn{name: "server"}, gridColumn{name: "status", painted: true}, gridColumn{name: "tools"},
		gridColumn{name: "baseline", long: true, label: true}, gridColumn{name: "last seen", long: true, label: true},
		gridColumn{name: "drift at", long: true, label: true})
	for _, r := range rows {
		status := r.Status
		switch {
		case r.Serves:
			status = p.paint(status, color.FgGreen)
		default:
			status = p.paint(status, color.FgRed, color.Bold)
		}
		drifted := "-"
		if r.DriftAt != nil {
			drifted = r.DriftAt.UTC().Format(time.RFC3339)
		}
		g.add(r.Server, status, fmt.Sprint(r.Tools), shortFP(r.Baseline), shortFP(r.LastSeen), drifted)
	}
	if err := g.render(w, outputWidth(w)); err != nil {
		return err
	}
	for _, r := range rows {
		if r.Explanation != "" {
			fmt.Fprintln(w, r.Explanation)
		}
	}
	return nil
}

// runGuardDiff compares SERVER's approved tool set with the last-seen
// one, or the live server's; exit 1 when they differ.
func runGuardDiff(ctx context.Context, o *guardOptions) error {
	r, err := o.record()
	if err != nil {
		return err
	}
	server := o.server
	ctx, cancel := context.WithTimeout(ctx, o.deadline)
	defer cancel()
	rep, err := guard.Diff(ctx, server, r, o.live)
	switch {
	case err == nil:
	case errors.Is(err, guard.ErrNothingToApprove):
		return exitErr(exitUsage, err)
	case errors.Is(err, guard.ErrCorrupt):
		return storeErr(err)
	case errors.Is(err, guard.ErrLiveIncomplete):
		return exitErr(exitUnreachable, fmt.Errorf("guard diff: %w", err))
	default:
		return exitErr(exitUnreachable, err)
	}
	base, cur := rep.BaselineTools, rep.CurrentTools
	w := o.stdout
	if o.json {
		if err := writeJSON(w, rep); err != nil {
			return err
		}
	} else {
		approved := "none (no approved baseline)"
		if rep.Baseline != "" {
			approved = rep.Baseline
		}
		fmt.Fprintf(w, "server %s: %s\napproved: %s\n%-9s %s\n", safetext.Text(server), rep.Status, approved, rep.Against+":", rep.Current)
		if len(rep.Changes) == 0 {
			fmt.Fprintln(w, "No differences: the sets are the same.")
		} else {
			g := newGrid(gridColumn{name: "tool"}, gridColumn{name: "change"}, gridColumn{name: "severity", painted: true}, gridColumn{name: "message", long: true})
			p := newPainter(w)
			for _, ch := range rep.Changes {
				msg := ch.Message
				if ch.Pointer != "" && !strings.Contains(msg, ch.Pointer) {
					msg = ch.Pointer + ": " + msg
				}
				g.add(ch.Tool, string(ch.Kind), p.severity(ch.Severity), msg)
			}
			if err := g.render(w, outputWidth(w)); err != nil {
				return err
			}
			printDescriptionChanges(w, base, cur, rep.Changes)
			fmt.Fprintf(w, "%d change(s). To accept them: %s\n", len(rep.Changes), guardCommandLine(o.hint, "approve", "--fingerprint", rep.Current, server))
		}
	}
	if len(rep.Changes) > 0 {
		return exitErr(exitFindings, nil)
	}
	return nil
}

// operatorAction runs one operator transition on SERVER and prints the
// status change.
func operatorAction(o *guardOptions, act func(st *guard.Store, server, actor string, now time.Time) (*guard.Record, *guard.Event, error)) (*guard.Record, error) {
	r, ev, err := act(o.store, o.server, o.actor, o.now().UTC())
	if err != nil {
		return nil, storeErr(err)
	}
	fmt.Fprintf(o.stdout, "%s: %s → %s", o.server, ev.From, r.Status)
	return r, nil
}

// runGuardApprove re-baselines SERVER to its last-seen set, the one
// --fingerprint names (or, with --current, whichever it is), and prints
// the set it approved: its fingerprint and its tools' names.
func runGuardApprove(ctx context.Context, o *guardOptions) error {
	r, err := operatorAction(o, func(st *guard.Store, server, actor string, now time.Time) (*guard.Record, *guard.Event, error) {
		return st.Approve(server, o.fingerprint, actor, now)
	})
	if err != nil {
		return err
	}
	w := o.stdout
	names := r.Baseline.Names()
	fmt.Fprintf(w, "\napproved %s, %d tool(s):\n", r.Baseline.Fingerprint, len(names))
	for _, n := range names {
		fmt.Fprintf(w, "  %s\n", safetext.Text(n))
	}
	return nil
}

// runGuardQuarantine puts SERVER on hold.
func runGuardQuarantine(ctx context.Context, o *guardOptions) error {
	_, err := operatorAction(o, func(st *guard.Store, server, actor string, now time.Time) (*guard.Record, *guard.Event, error) {
		return st.Quarantine(server, o.note, actor, now)
	})
	if err == nil {
		fmt.Fprintln(o.stdout)
	}
	return err
}

// runGuardRelease lifts SERVER's quarantine.
func runGuardRelease(ctx context.Context, o *guardOptions) error {
	r, err := operatorAction(o, func(st *guard.Store, server, actor string, now time.Time) (*guard.Record, *guard.Event, error) {
		return st.Release(server, actor, now)
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(o.stdout)
	if !r.Serves() {
		fmt.Fprintln(o.stdout, guard.Explain(guardHint(o.hint), r.Server, r))
	}
	return nil
}

// runGuardAudit prints the audit log, or SERVER's events.
func runGuardAudit(ctx context.Context, o *guardOptions) error {
	evs, err := o.store.Audit(o.server)
	if err != nil {
		return storeErr(err)
	}
	w := o.stdout
	if o.json {
		if evs == nil {
			evs = []guard.Event{}
		}
		return writeJSON(w, map[string]any{"events": evs})
	}
	if len(evs) == 0 {
		fmt.Fprintf(w, "No audit events in %s.\n", filepath.Join(o.store.Dir(), guard.AuditFile))
		return nil
	}
	g := newGrid(gridColumn{name: "time"}, gridColumn{name: "actor"}, gridColumn{name: "server"}, gridColumn{name: "action"},
		gridColumn{name: "status"}, gridColumn{name: "old", long: true, label: true}, gridColumn{name: "new", long: true, label: true})
	for _, e := range evs {
		g.add(e.Time.UTC().Format(time.RFC3339), e.Actor, e.Server, string(e.Action),
			e.From+" → "+e.To, shortFP(e.OldFingerprint), shortFP(e.NewFingerprint))
	}
	return g.render(w, outputWidth(w))
}

// wrapGuardFlags are wrap's guard-mode flags.
func wrapGuardFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "guard", Usage: "guard mode: pin the server's tool set in store `DIR` and fail closed on drift (see `mcpdrill guard`)"},
		&cli.StringFlag{Name: "posture", Value: string(guard.PostureDiscovery), Usage: "guard: first contact `discovery` (trust on first use) or `strict` (pending until approved)"},
		&cli.DurationFlag{Name: "recheck", Usage: "guard: also re-list the server's tools every `D` (0: only on list_changed, client listings and before the first call)"},
		&cli.StringFlag{Name: "server-id", Usage: "guard: the server's `NAME` in the store (default: derived from the command or upstream URL)"},
	}
}

// wrapGuardOptions is wrap's guard mode: --guard's store, the posture,
// the recheck interval and the server's id in the store.
type wrapGuardOptions struct {
	dir     string
	posture guard.Posture
	recheck time.Duration
	id      string
}

// parseWrapGuard reads and checks wrap's guard flags; nil without --guard.
func parseWrapGuard(c *cmdLine) (*wrapGuardOptions, error) {
	if !c.IsSet("guard") {
		for _, f := range []string{"posture", "recheck", "server-id"} {
			if c.IsSet(f) {
				return nil, usageErr("wrap: --%s needs --guard DIR", f)
			}
		}
		return nil, nil
	}
	posture, err := guard.ParsePosture(c.String("posture"))
	if err != nil {
		return nil, usageErr("--posture: %v", err)
	}
	o := &wrapGuardOptions{dir: c.String("guard"), posture: posture, recheck: c.Duration("recheck"), id: c.String("server-id")}
	if o.id == "" {
		if u := c.String("upstream"); u != "" {
			o.id = guard.ServerID(u)
		} else {
			o.id = guard.ServerID(c.Args().Slice()...)
		}
	}
	if err := guard.ValidServerName(o.id); err != nil {
		return nil, usageErr("--server-id: %v", err)
	}
	return o, nil
}

// start opens the store and builds the guard, logging to errw.
func (o *wrapGuardOptions) start(errw io.Writer) (*intercept.Guard, error) {
	st, err := guard.Open(o.dir)
	if err != nil {
		return nil, usageErr("--guard: %v", err)
	}
	// A corrupt record is refused up front, not discovered mid-session.
	if _, err := st.Get(o.id); err != nil {
		return nil, storeErr(err)
	}
	var mu sync.Mutex
	g, err := intercept.New(intercept.Options{
		Store: st, Server: o.id, Posture: o.posture, Recheck: o.recheck, Hint: guardHint(hintFor(o.dir)),
		Logf: func(format string, a ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(errw, "mcpdrill wrap: "+format+"\n", a...)
		},
	})
	if err != nil {
		return nil, usageErr("%v", err)
	}
	fmt.Fprintf(errw, "mcpdrill wrap: guard on, server %q, posture %s, store %s\n", o.id, o.posture, st.Dir())
	return g, nil
}

// stopGuard closes g and says how many tool calls without an id it
// dropped: a withheld call with no id cannot be answered, so the client
// never hears of it, and the operator learns of it here.
func stopGuard(g *intercept.Guard, errw io.Writer) {
	g.Close()
	if n := g.Dropped(); n > 0 {
		fmt.Fprintf(errw, "mcpdrill wrap: guard: %d tools/call without an id withheld and dropped (with no id, a refusal cannot be answered)\n", n)
	}
}

// printDescriptionChanges shows the old and new text of every changed tool
// description: the reviewer must read what the model would be told.
func printDescriptionChanges(w io.Writer, base, cur []mcp.Tool, cs []drift.Change) {
	desc := func(ts []mcp.Tool, name string) string {
		for _, t := range ts {
			if t.Name == name {
				return t.Description
			}
		}
		return ""
	}
	for _, ch := range cs {
		if ch.Pointer != "/description" {
			continue
		}
		fmt.Fprintf(w, "%s description:\n  - %s\n  + %s\n", safetext.Text(ch.Tool), safetext.Quote(desc(base, ch.Tool)), safetext.Quote(desc(cur, ch.Tool)))
	}
}

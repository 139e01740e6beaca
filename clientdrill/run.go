package clientdrill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/reap"
	"github.com/mcpdrill/mcpdrill/report"
)

// Transport is how the scenario server is reached.
type Transport string

// Transports.
const (
	Stdio Transport = "stdio"
	HTTP  Transport = "http"
)

// Defaults of Options.
const (
	DefaultTimeout = 2 * time.Second
	DefaultStartup = 30 * time.Second
	DefaultGrace   = 3 * time.Second
	// hangGrace is how long past the client's own timeout (and the late
	// reply) a faulted call may stay unreported before it counts as hung.
	hangGrace = 3 * time.Second
	// largeTimeout is the least request timeout asked for large-result.
	largeTimeout = 30 * time.Second
)

// Options configures a drill of one client.
type Options struct {
	// Command is the client's argv; for HTTP the server URL is appended.
	Command []string
	// Dir is the client's working directory ("" inherits).
	Dir string
	// Env is the client's base environment (nil: this process's).
	Env []string
	// ServerArgv starts the stdio relay (`mcpdrill client-server`);
	// "--socket PATH" is appended. Required for the stdio transport.
	ServerArgv []string
	// Scenarios to run (nil: the catalogue), in this order.
	Scenarios []Scenario
	// Transports to run each scenario over (nil: stdio, then HTTP).
	Transports []Transport
	// Seed plants the scenario's markers and arguments.
	Seed uint64
	// Timeout is the request timeout the client is asked to use.
	Timeout time.Duration
	// Startup bounds how long the client may take to make the faulted call.
	Startup time.Duration
	// Grace is how long the client may take to exit after its last step.
	Grace time.Duration
	// Stderr receives the client's standard error (nil: discarded).
	Stderr io.Writer
	// Progress, when set, is called after each scenario.
	Progress func(Result)
}

// Result is one scenario over one transport.
type Result struct {
	Scenario  string    `json:"scenario"`
	Transport Transport `json:"transport"`
	Outcome   Outcome   `json:"outcome"`
	Tags      []Tag     `json:"tags"`
	Expected  bool      `json:"expected"`
	Evidence  Evidence  `json:"evidence"`
}

// Verdict is the outcome with its tags, as a table shows it.
func (r Result) Verdict() string {
	s := string(r.Outcome)
	for _, t := range r.Tags {
		s += " +" + string(t)
	}
	return s
}

// Evidence is what a verdict was read from; it quotes no value.
type Evidence struct {
	// Revision is the protocol revision the client negotiated.
	Revision string `json:"revision,omitempty"`
	// App is the application's report of the faulted and the next call.
	App string `json:"app"`
	// Exit is how the client process ended.
	Exit string `json:"exit"`
	// Wire is what the client sent from the faulted call on.
	Wire []string `json:"wire"`
}

// SchemaVersion is the version of Report's JSON.
const SchemaVersion = 1

// Report is a drill of one client.
type Report struct {
	SchemaVersion int              `json:"schema_version"`
	Meta          Meta             `json:"meta"`
	Results       []Result         `json:"results"`
	Counts        map[Outcome]int  `json:"counts"`
	Findings      []report.Finding `json:"findings"`
}

// Meta describes the run.
type Meta struct {
	Seed      uint64 `json:"seed"`
	TimeoutMS int64  `json:"timeout_ms"`
	Revision  string `json:"revision"`
}

// Run drills the client with every scenario over every transport, one at a
// time. An error is mcpdrill's own failure (no socket, no listener) or a
// client command that cannot start; a misbehaving client is a result.
func Run(ctx context.Context, o Options) (*Report, error) {
	if len(o.Command) == 0 {
		return nil, errors.New("clientdrill: no client command")
	}
	if o.Scenarios == nil {
		o.Scenarios = Catalogue()
	}
	if o.Transports == nil {
		o.Transports = []Transport{Stdio, HTTP}
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Startup <= 0 {
		o.Startup = DefaultStartup
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	rep := &Report{SchemaVersion: SchemaVersion, Counts: map[Outcome]int{}, Findings: []report.Finding{},
		Meta: Meta{Seed: o.Seed, TimeoutMS: o.Timeout.Milliseconds(), Revision: PreferredRevision}}
	for _, sc := range o.Scenarios {
		for _, tr := range o.Transports {
			if tr == Stdio && len(o.ServerArgv) == 0 {
				return nil, errors.New("clientdrill: the stdio transport needs ServerArgv")
			}
			res, err := runOne(ctx, o, sc, tr)
			if err != nil {
				return nil, err
			}
			rep.Results = append(rep.Results, res)
			rep.Counts[res.Outcome]++
			rep.Findings = append(rep.Findings, findings(sc, res)...)
			if o.Progress != nil {
				o.Progress(res)
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
		}
	}
	report.Sort(rep.Findings)
	return rep, nil
}

// stepContext is MCP_CONFORMANCE_CONTEXT.
type stepContext struct {
	Name      string         `json:"name"`
	Transport Transport      `json:"transport"`
	TimeoutMS int64          `json:"timeoutMs"`
	Server    map[string]any `json:"server"`
	Steps     []step         `json:"steps"`
}

type step struct {
	Op        string         `json:"op"`
	Name      string         `json:"name,omitempty"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

// steps are what the client is asked to do: list, the faulted call, and a
// call to lookup after it.
func steps(sc Scenario, m markers) []step {
	args := map[string]any{ToolLookup: map[string]any{"query": "q-" + m.truth[len(m.truth)-8:]},
		ToolRecord: map[string]any{"entry": "e-" + m.truth[len(m.truth)-8:]}, ToolReadLog: map[string]any{"name": "service"}}
	follow := map[string]any{"query": "follow-up"}
	return []step{{Op: "tools/list"}, {Op: "tools/call", Name: sc.Tool, Arguments: args[sc.Tool].(map[string]any)},
		{Op: "tools/call", Name: ToolLookup, Arguments: follow}}
}

func runOne(parent context.Context, o Options, sc Scenario, tr Transport) (Result, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	timeout := o.Timeout
	if sc.fault == faultLarge {
		// The scenario tests size, not time: the client gets long enough
		// to move the result on a loaded machine.
		timeout = max(timeout, largeTimeout)
	}
	w := newWorld(sc, o.Seed, timeout)
	defer w.stop()
	sctx := stepContext{Name: sc.ID, Transport: tr, TimeoutMS: timeout.Milliseconds(), Steps: steps(sc, w.m)}
	argv := append([]string(nil), o.Command...)
	switch tr {
	case Stdio:
		s, err := listenStdio(ctx, w)
		if err != nil {
			return Result{}, err
		}
		defer s.close()
		args := append(append([]string(nil), o.ServerArgv[1:]...), "--socket", s.path)
		sctx.Server = map[string]any{"command": o.ServerArgv[0], "args": args}
	case HTTP:
		h, err := listenHTTP(ctx, w)
		if err != nil {
			return Result{}, err
		}
		defer h.close()
		sctx.Server = map[string]any{"url": h.url}
		argv = append(argv, h.url)
	default:
		return Result{}, fmt.Errorf("clientdrill: unknown transport %q", tr)
	}
	cj, _ := json.Marshal(sctx)
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	env = append(append([]string(nil), env...), "MCP_CONFORMANCE_SCENARIO="+sc.ID,
		"MCP_CONFORMANCE_CONTEXT="+string(cj), "MCP_CONFORMANCE_PROTOCOL_VERSION="+PreferredRevision)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = o.Dir, env
	cmd.Stderr = o.Stderr
	if cmd.Stderr == nil {
		cmd.Stderr = io.Discard
	}
	reap.OwnGroup(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Result{}, fmt.Errorf("clientdrill: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("clientdrill: start %s: %w", filepath.Base(argv[0]), err)
	}
	marks := []string{w.m.truth, w.m.lie, w.m.alt, w.m.decoy, w.m.errText, w.m.tail}
	lines := make(chan record, 16)
	go func() { _ = readReport(stdout, marks, lines) }()

	var recs []record
	var ex exitInfo
	waited := make(chan error, 1)
	waitStarted := false
	startWait := func() {
		if !waitStarted {
			waitStarted = true
			go func() { waited <- cmd.Wait() }()
		}
	}
	started := time.Now()
	var graceAt time.Time
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
loop:
	for {
		select {
		case r, ok := <-lines:
			if !ok {
				// Wait only once stdout is read to its end (os/exec's rule).
				lines = nil
				startWait()
				continue
			}
			recs = append(recs, r)
			if reported(recs, 1) && graceAt.IsZero() {
				graceAt = time.Now().Add(o.Grace)
			}
		case err := <-waited:
			ex = exitOf(cmd, err)
			break loop
		case <-tick.C:
			faultAt, called := w.faultedAt()
			limit := faultAt + deadline(sc, timeout)
			switch {
			case parent.Err() != nil:
				break loop
			case !graceAt.IsZero() && time.Now().After(graceAt):
				break loop // done, but it did not exit
			case !called && !reported(recs, 0) && time.Since(started) > o.Startup:
				ex.deadline = true // it never made the call
				break loop
			case called && !reported(recs, 0) && w.since() > limit:
				ex.deadline = true // hung
				break loop
			case called && reported(recs, 0) && w.since() > limit+timeout+o.Grace:
				break loop // the next call never came
			}
		}
	}
	if !ex.exited {
		reap.TerminateGroup(cmd)
		startWait()
		t := time.NewTimer(time.Second)
		select {
		case <-waited:
		case <-t.C:
			reap.KillGroup(cmd)
			<-waited
		}
		t.Stop()
	}
	reap.End(cmd, 500*time.Millisecond)
	// Drain what the client wrote before it ended.
	if lines != nil {
		for r := range lines {
			recs = append(recs, r)
		}
	}
	if ex.deadline && reported(recs, 0) {
		ex.deadline = false
	}
	cancel()
	obs := observation{wire: w.snapshot(), app: recs, exit: ex, marks: w.m, hasRecs: len(recs) > 0}
	out, tags := grade(sc, obs)
	res := Result{Scenario: sc.ID, Transport: tr, Outcome: out, Tags: tags, Expected: sc.expected(out) && !containsTag(tags, TagBlindRetry),
		Evidence: Evidence{Revision: obs.wire.rev, App: appEvidence(obs), Exit: exitEvidence(ex), Wire: wireEvidence(obs.wire)}}
	return res, nil
}

func containsTag(ts []Tag, t Tag) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// deadline is how long after the faulted call arrived its outcome may come.
func deadline(sc Scenario, timeout time.Duration) time.Duration {
	d := timeout + lateExtra + hangGrace
	switch sc.fault {
	case faultLarge:
		d += 10 * time.Second
	case faultUnsolicited:
		d += askWait
	}
	return d
}

// reported reports whether the records hold step's outcome.
func reported(recs []record, step int) bool {
	for _, r := range recs {
		if r.step == step {
			return true
		}
	}
	return false
}

func exitOf(cmd *exec.Cmd, err error) exitInfo {
	ps := cmd.ProcessState
	if ps == nil {
		return exitInfo{exited: true, status: 1}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return exitInfo{exited: true, signaled: true, status: 128 + int(ws.Signal())}
	}
	if c := ps.ExitCode(); c >= 0 {
		return exitInfo{exited: true, status: c}
	}
	_ = err
	return exitInfo{exited: true, status: 1}
}

// findings are a result's findings: an unexpected outcome, a blind retry.
func findings(sc Scenario, r Result) []report.Finding {
	var fs []report.Finding
	if !sc.expected(r.Outcome) {
		sev := sc.Severity
		if r.Outcome == Hung || r.Outcome == Crashed {
			sev = report.SeverityError
		}
		fs = append(fs, report.Finding{Rule: sc.Rule(), Severity: sev, Tool: sc.Tool, Pointer: "/" + string(r.Transport),
			Message: fmt.Sprintf("over %s the client's outcome was %s, expected %s", r.Transport, r.Outcome, joinOutcomes(sc.Expect))})
	}
	if containsTag(r.Tags, TagBlindRetry) {
		fs = append(fs, report.Finding{Rule: RuleBlindRetry, Severity: report.SeverityError, Tool: sc.Tool, Pointer: "/" + string(r.Transport),
			Message: fmt.Sprintf("over %s, in scenario %s, the client sent the destructive call %s again", r.Transport, sc.ID, sc.Tool)})
	}
	return fs
}

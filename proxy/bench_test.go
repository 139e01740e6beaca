package proxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/relay"
)

// Benchmarks: direct vs plain byte relay vs proxy, stdio and HTTP (JSON
// bodies or event streams), at five payload sizes, in large replies and in
// large requests (benchLoads). The relay and the proxy are separate
// processes (this test binary in a role), like a real deployment, and so
// is the server (on HTTP also, for comparison with earlier tables, an
// in-process handler).

var benchSizes = []int{1 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20}

// load is what one call carries: a reply of size bytes to a small request,
// or (request) a request of size bytes, its payload in the call's
// arguments, answered with a small reply.
type load struct {
	size    int
	request bool
}

// smallReply is the reply size of a request load.
const smallReply = 256

func (l load) name() string {
	if l.request {
		return sizeName(l.size) + "-request"
	}
	return sizeName(l.size) + "-reply"
}

// replySize is the size of the server's replies under l.
func (l load) replySize() int {
	if l.request {
		return smallReply
	}
	return l.size
}

// call returns the request line of call i under l (no newline).
func (l load) call(i int) []byte {
	if !l.request {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"blob","arguments":{}}}`, i)
	}
	pad := strings.Repeat("r", max(0, l.size-100))
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"blob","arguments":{"pad":"%s"}}}`, i, pad)
}

// benchLoads are every size, with large replies, then with large requests.
var benchLoads = func() []load {
	var out []load
	for _, req := range []bool{false, true} {
		for _, size := range benchSizes {
			out = append(out, load{size: size, request: req})
		}
	}
	return out
}()

// neverFires is a plan whose only rule has probability 0: it can never
// fire, so the proxy relays as a byte copy (TestMemoryFlat uses it too).
const neverFires = "rules:\n  - fault: corrupt\n    method: tools/call\n    probability: 0\n"

// benchPlans are the plan-loaded modes besides proxy-rules (neverFires).
// The first three never fire on the benchmark's traffic (every call is to
// tool "blob"):
//   - proxy-c2s-live: a live client→server rule; requests are stored and
//     decided, replies stream cut-through, each accounted for (peek,
//     correlation, rule counts);
//   - proxy-s2c-live: a live server→client rule of probability 1 on the
//     replies to calls of another tool; no pending call could be answered
//     by a reply it matches, so each reply streams cut-through, accounted
//     for; requests stream;
//   - proxy-s2c-held: the same rule on frames of every kind: a server
//     request could name the tool, so every server→client frame is stored
//     whole and decided (store-and-forward) though none fires.
//   - proxy-s2c-p0.2: a rule on every reply with probability 0.2 whose
//     fault changes no byte (latency 0: the reply is re-emitted unchanged
//     by the delay path). About 20% of replies fire and are stored; on
//     stdio the others stream, chosen by their roll; on HTTP all are
//     stored.
//   - proxy-s2c-p0.2-store: the same plan with every frame stored (the
//     proxy's store-only switch), so the same replies fire: what the
//     per-frame choice saves.
var benchPlans = map[string]string{
	"proxy-rules":          neverFires,
	"proxy-c2s-live":       "rules:\n  - fault: drop\n    direction: c2s\n    tool: nomatch\n",
	"proxy-s2c-live":       "rules:\n  - fault: error\n    tool: nomatch\n",
	"proxy-s2c-held":       "rules:\n  - fault: drop\n    kinds: []\n    tool: nomatch\n",
	"proxy-s2c-p0.2":       p02,
	"proxy-s2c-p0.2-store": p02,
	"proxy-s2c-p1":         p1,
}

// p1 fires on every reply, changing no byte: the live-rule target's mode.
const p1 = "rules:\n  - fault: latency\n    method: tools/call\n    params: {latency: 0s}\n"

// p02 fires on about 20% of replies, changing no byte.
const p02 = "rules:\n  - fault: latency\n    method: tools/call\n    params: {latency: 0s}\n    probability: 0.2\n"

// storeEnv is the extra environment of a mode's proxy process.
func storeEnv(mode string) []string {
	if strings.HasSuffix(mode, "-store") {
		return []string{"MCPDRILL_STORE_ALL=1"}
	}
	return nil
}

// benchModes are the modes of every benchmark, in table order.
// relay-pipes (stdio only) is the relay with its pipes grown as the proxy
// grows its own: what the pipe size alone is worth. revproxy (HTTP only)
// is net/http's own reverse proxy (httputil.ReverseProxy, no plan, no
// examination): what net/http's server and transport cost on their own.
var benchModes = []string{"direct", "relay", "relay-pipes", "revproxy", "proxy", "proxy-rules", "proxy-c2s-live", "proxy-s2c-live", "proxy-s2c-held", "proxy-s2c-p0.2", "proxy-s2c-p0.2-store", "proxy-s2c-p1"}

// modesOf returns the modes measured over a transport.
func modesOf(transport string) []string {
	other := "relay-pipes" // the other transport's own mode
	if transport == "stdio" {
		other = "revproxy"
	}
	return slices.DeleteFunc(slices.Clone(benchModes), func(m string) bool { return m == other })
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%dKiB", n>>10)
}

type stats struct {
	lat   []time.Duration
	total time.Duration
	size  int
	rssKB int64 // max RSS of the middle process (relay or proxy), 0 for direct
	// cpu is the CPU time the middle process spent during the timed calls
	// (all its threads, its children excluded; 0 for direct or where
	// /proc is missing). Unlike latency it hardly depends on how the
	// machine schedules the three processes.
	cpu time.Duration
	// read and written are the bytes the middle process passed through
	// read and write calls during the timed calls (/proc/PID/io; -1
	// where unreadable, 0 for direct). Bytes a process splices from one
	// socket to another (the HTTP relay's io.Copy) are not counted.
	read, written int64
}

// cpuPerMsg is the middle process's CPU time per request/response pair.
func (s *stats) cpuPerMsg() time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	return s.cpu / time.Duration(len(s.lat))
}

// taskCPU sums the time on CPU of every thread of process pid, from
// /proc/PID/task/*/schedstat (nanoseconds); 0 when unavailable.
func taskCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var ns int64
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			ns += n
		}
	}
	return time.Duration(ns)
}

// taskIO returns the bytes process pid has read and written through read
// and write calls since it started (rchar and wchar of /proc/PID/io); ok
// is false when they cannot be read.
func taskIO(pid int) (read, written int64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		return 0, 0, false
	}
	var seen int
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch {
		case err != nil:
		case k == "rchar":
			read, seen = n, seen+1
		case k == "wchar":
			written, seen = n, seen+1
		}
	}
	return read, written, seen == 2
}

func (s *stats) p(q float64) time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	l := slices.Clone(s.lat)
	slices.Sort(l)
	return l[min(len(l)-1, int(q*float64(len(l))))]
}

// mbps is the request/response throughput in MB/s of payload.
func (s *stats) mbps() float64 {
	return float64(s.size) * float64(len(s.lat)) / s.total.Seconds() / 1e6
}

func (s *stats) report(b *testing.B) {
	b.ReportMetric(float64(s.p(0.5).Microseconds()), "p50-µs")
	b.ReportMetric(float64(s.p(0.99).Microseconds()), "p99-µs")
	b.ReportMetric(s.mbps(), "MB/s")
	b.ReportMetric(float64(s.total.Nanoseconds())/float64(max(1, len(s.lat))), "ns/op") // the timed calls only
	if s.cpu > 0 {
		b.ReportMetric(float64(s.cpuPerMsg().Nanoseconds())/1e3, "mid-cpu-µs/op")
	}
	if s.rssKB > 0 {
		b.ReportMetric(float64(s.rssKB)/1024, "peak-rss-MiB")
	}
}

// stdioTarget starts the chain for mode and returns the client's pipes.
func stdioTarget(tb testing.TB, mode string, size int) (io.WriteCloser, *bufio.Reader, int, func() int64) {
	tb.Helper()
	env := append(os.Environ(), "MCPDRILL_BENCH_SIZE="+strconv.Itoa(size))
	switch mode {
	case "direct":
		env = append(env, roleEnv+"=bench-server")
	case "relay":
		env = append(env, roleEnv+"=relay", "MCPDRILL_CHILD_ROLE=bench-server")
	case "relay-pipes":
		env = append(env, roleEnv+"=relay", "MCPDRILL_CHILD_ROLE=bench-server", "MCPDRILL_RELAY_PIPES="+strconv.Itoa(pipeSize))
	case "proxy":
		env = append(env, roleEnv+"=proxy", "MCPDRILL_CHILD_ROLE=bench-server")
	default:
		env = append(env, roleEnv+"=proxy", "MCPDRILL_CHILD_ROLE=bench-server", "MCPDRILL_PLAN="+benchPlans[mode])
		env = append(env, storeEnv(mode)...)
	}
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	cmd := exec.Command(os.Args[0])
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, inR, outW, os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	inR.Close()
	outW.Close()
	pid := cmd.Process.Pid
	if mode == "direct" {
		pid = 0
	}
	return inW, bufio.NewReaderSize(outR, 2<<20), pid, func() int64 {
		inW.Close()
		_ = cmd.Wait()
		outR.Close()
		if mode == "direct" || cmd.ProcessState == nil {
			return 0
		}
		return maxRSS(cmd.ProcessState)
	}
}

func measureStdio(tb testing.TB, mode string, l load, n int) *stats {
	w, r, pid, stop := stdioTarget(tb, mode, l.replySize())
	call := func(i int) {
		if _, err := w.Write(append(l.call(i), '\n')); err != nil {
			tb.Fatalf("%s: write: %v", mode, err)
		}
		line, err := r.ReadSlice('\n')
		for err == bufio.ErrBufferFull {
			line, err = r.ReadSlice('\n')
		}
		if err != nil || len(line) == 0 {
			tb.Fatalf("%s: read: %v", mode, err)
		}
	}
	s := timeCalls(l.size, n, pid, call)
	s.rssKB = stop()
	return s
}

// warmCalls is how many calls of a payload size precede the timed ones:
// enough to carry about 8 MiB of replies (at least 10, at most 1000), so
// the timed calls measure a proxy past its heap's start-up growth (see
// "Proxy overhead" in METHODOLOGY.md).
func warmCalls(size int) int { return min(1000, max(10, (8<<20)/size)) }

// timeCalls makes warmCalls(size) warm-up calls, then n timed ones; pid is
// the middle process whose CPU time is taken around them (0: none).
func timeCalls(size, n, pid int, call func(i int)) *stats {
	for i := 0; i < warmCalls(size); i++ {
		call(i)
	}
	s := &stats{size: size, lat: make([]time.Duration, 0, n)}
	cpu0 := taskCPU(pid)
	r0, w0, ioOK := int64(0), int64(0), false
	if pid > 0 {
		r0, w0, ioOK = taskIO(pid)
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		t0 := time.Now()
		call(i)
		s.lat = append(s.lat, time.Since(t0))
	}
	s.total = time.Since(start)
	if cpu0 > 0 {
		s.cpu = taskCPU(pid) - cpu0
	}
	if pid > 0 {
		s.read, s.written = -1, -1
		if r1, w1, ok := taskIO(pid); ok && ioOK {
			s.read, s.written = r1-r0, w1-w0
		}
	}
	return s
}

// benchTransport runs measure for every size and mode of a transport. Each
// size measures direct, then the relay, then the proxy modes, so every mode
// after the first two also reports its figures against theirs from the
// same run: added p50 (its p50 less direct's), throughput as a multiple of
// the relay's, and added p50 as a multiple of the relay's.
func benchTransport(b *testing.B, transport string, measure func(testing.TB, string, load, int) *stats) {
	for _, l := range benchLoads {
		last := map[string]*stats{} // each mode's final run under this load
		for _, mode := range modesOf(transport) {
			b.Run(l.name()+"/"+mode, func(b *testing.B) {
				b.SetBytes(int64(l.size))
				b.ResetTimer()
				s := measure(b, mode, l, b.N)
				b.StopTimer()
				s.report(b)
				last[mode] = s
				s.reportVs(b, last["direct"], last["relay"])
			})
		}
	}
}

// reportVs reports s against direct and the relay, where they were measured.
func (s *stats) reportVs(b *testing.B, direct, relay *stats) {
	if direct == nil || s == direct {
		return
	}
	d := s.p(0.5) - direct.p(0.5)
	b.ReportMetric(float64(d.Microseconds()), "added-p50-µs")
	if relay == nil || s == relay {
		return
	}
	b.ReportMetric(s.mbps()/relay.mbps(), "thr-vs-relay")
	if rd := relay.p(0.5) - direct.p(0.5); rd > 0 {
		b.ReportMetric(float64(d)/float64(rd), "added-p50-vs-relay")
	}
}

func BenchmarkStdio(b *testing.B) { benchTransport(b, "stdio", measureStdio) }

// HTTP: an upstream answering every POST with a JSON result of the
// payload size, in a process of its own as a real MCP server is, as the
// stdio benchmark's server always was (transport "http"); or inside the
// client's process, as tables before 2026-12-03 measured it (transport
// "http-inproc": there the direct connection crosses no process boundary
// and every other mode crosses two, see METHODOLOGY.md). The relay (TCP
// byte copy) and the proxy run as separate processes listening on
// loopback.

// upstreamEnv set to "inproc" makes BenchmarkHTTP serve its upstream from
// the client's own process.
const upstreamEnv = "MCPDRILL_BENCH_UPSTREAM"

// replyEnv set to "sse" makes the benchmark's upstream answer every POST
// with an event stream of one event, as many servers do, instead of a
// JSON body.
const replyEnv = "MCPDRILL_BENCH_REPLY"

func benchHandler(size int, sse bool) http.Handler {
	payload := strings.Repeat("x", max(0, size-64))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		body := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + payload + `"}]}}`
		if sse {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "event: message\ndata: "+body+"\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = io.WriteString(w, body)
	})
}

// benchUpstream starts the upstream for a payload size and returns its
// base URL and the function that stops it.
func benchUpstream(tb testing.TB, size int, inproc, sse bool) (string, func()) {
	tb.Helper()
	if inproc {
		srv := httptest.NewServer(benchHandler(size, sse))
		return srv.URL, srv.Close
	}
	env := append(os.Environ(), roleEnv+"=http-upstream", "MCPDRILL_BENCH_SIZE="+strconv.Itoa(size))
	if sse {
		env = append(env, replyEnv+"=sse")
	}
	base, _, stop := startHTTPRole(tb, env)
	return base, func() { stop() }
}

// httpMiddle starts a relay or proxy process in front of upstream and
// returns its base URL.
func httpMiddle(tb testing.TB, mode, upstream string) (string, int, func() int64) {
	tb.Helper()
	if mode == "direct" {
		return upstream, 0, func() int64 { return 0 }
	}
	env := append(os.Environ(), "MCPDRILL_UPSTREAM="+upstream)
	if src, ok := benchPlans[mode]; ok {
		env = append(env, roleEnv+"=http-proxy", "MCPDRILL_PLAN="+src)
		env = append(env, storeEnv(mode)...)
	} else {
		env = append(env, roleEnv+"=http-"+mode)
	}
	return startHTTPRole(tb, env)
}

// startHTTPRole starts a process of this binary serving an HTTP role
// (runHTTPRole) and returns its base URL, its pid, and the function that
// stops it and reports its maximum RSS.
func startHTTPRole(tb testing.TB, env []string) (string, int, func() int64) {
	tb.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env, cmd.Stderr = env, os.Stderr
	out, _ := cmd.StdoutPipe()
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		tb.Fatal(err)
	}
	return "http://" + strings.TrimSpace(addr), cmd.Process.Pid, func() int64 {
		stdin.Close() // the role exits when its stdin closes
		_ = cmd.Wait()
		return maxRSS(cmd.ProcessState)
	}
}

// runHTTPRole serves the http-upstream, http-relay, http-revproxy and http-proxy roles
// until stdin closes.
func runHTTPRole(role string) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 1
	}
	fmt.Println(ln.Addr().String())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stopRoleProfile()
		os.Exit(0)
	}()
	if role == "http-upstream" {
		size, _ := strconv.Atoi(os.Getenv("MCPDRILL_BENCH_SIZE"))
		_ = http.Serve(ln, benchHandler(size, os.Getenv(replyEnv) == "sse"))
		return 0
	}
	up := os.Getenv("MCPDRILL_UPSTREAM")
	switch role {
	case "http-relay":
		_ = relay.ServeTCP(ln, strings.TrimPrefix(up, "http://"))
		return 0
	case "http-revproxy":
		u, err := url.Parse(up)
		if err != nil {
			return 2
		}
		rp := &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(u)
				// The body goes upstream read whole, as the proxy reads it
				// (readBody: into a buffer of the declared length, pooled
				// when large; streamed, some replies came back cut short:
				// METHODOLOGY).
				if pr.In.ContentLength < 0 { // the benchmark's client always declares it
					return
				}
				held, _ := readBody(pr.In.Body, pr.In.ContentLength, 1<<30)
				pr.Out.Body, pr.Out.ContentLength = held.sent(bytes.NewReader(held.b)), int64(len(held.b))
				held.release() // the transport holds it now
			},
			Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64},
		}
		_ = http.Serve(ln, rp)
		return 0
	}
	cfg := Config{}
	if src := os.Getenv("MCPDRILL_PLAN"); src != "" {
		p, err := parsePlanEnv(src)
		if err != nil {
			return 2
		}
		cfg.Plan = p
	}
	h, err := NewHTTP(HTTPOptions{Config: cfg, Upstream: up + "/mcp"})
	if err != nil {
		return 2
	}
	_ = h.Serve(context.Background(), ln)
	return 0
}

// measureHTTP measures a mode with the upstream in its own process;
// measureHTTPInproc with the upstream in the client's; measureHTTPSSE
// with the upstream in its own process answering with event streams.
func measureHTTP(tb testing.TB, mode string, l load, n int) *stats {
	return measureHTTPWith(tb, mode, l, n, false, false)
}

func measureHTTPInproc(tb testing.TB, mode string, l load, n int) *stats {
	return measureHTTPWith(tb, mode, l, n, true, false)
}

func measureHTTPSSE(tb testing.TB, mode string, l load, n int) *stats {
	return measureHTTPWith(tb, mode, l, n, false, true)
}

func measureHTTPWith(tb testing.TB, mode string, l load, n int, inproc, sse bool) *stats {
	size := l.replySize()
	upURL, stopUp := benchUpstream(tb, size, inproc, sse)
	defer stopUp()
	base, pid, stop := httpMiddle(tb, mode, upURL)
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}}
	body := l.call(1)
	buf := make([]byte, 256<<10)
	call := func(int) {
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := c.Do(req)
		if err != nil {
			tb.Fatalf("%s: %v", mode, err)
		}
		got, _ := io.CopyBuffer(io.Discard, resp.Body, buf)
		resp.Body.Close()
		if got < int64(size/2) {
			tb.Fatalf("%s: short body %d", mode, got)
		}
	}
	s := timeCalls(l.size, n, pid, call)
	c.CloseIdleConnections()
	s.rssKB = stop()
	return s
}

func BenchmarkHTTP(b *testing.B) {
	if os.Getenv(upstreamEnv) == "inproc" {
		benchTransport(b, "http", measureHTTPInproc)
		return
	}
	benchTransport(b, "http", measureHTTP)
}

// BenchmarkHTTPSSE is BenchmarkHTTP with every reply an event stream.
func BenchmarkHTTPSSE(b *testing.B) { benchTransport(b, "http-sse", measureHTTPSSE) }

// benchTransports are the transports of TestBenchTable, each with the
// function measuring one of its modes.
var benchTransports = []struct {
	name    string
	measure func(tb testing.TB, mode string, l load, n int) *stats
}{{"stdio", measureStdio}, {"http", measureHTTP}, {"http-sse", measureHTTPSSE}, {"http-inproc", measureHTTPInproc}}

// TestBenchTable prints the ratio table for METHODOLOGY (set
// MCPDRILL_BENCH_TABLE=1). Modes are measured in interleaved rounds, each
// round starting at the next mode, so that background load on a shared
// machine and the order of the modes fall on all of them alike. Each figure
// is the trimmed mean of the rounds (the highest and the lowest dropped):
// a median would pick one side at random where a figure is bimodal across
// rounds (byte copies of 1 KiB on 2 shared cores settle either about 10 µs
// or about 60 µs per round), while the trimmed mean weighs both sides and
// still ignores one wild round. Throughput vs the relay is the trimmed mean
// of the ratio within each round.
func TestBenchTable(t *testing.T) {
	if os.Getenv("MCPDRILL_BENCH_TABLE") == "" {
		t.Skip("set MCPDRILL_BENCH_TABLE=1 to measure")
	}
	// Per size: rounds, and calls per mode in a round. Every round spawns
	// each mode's processes afresh, and where the scheduler places them
	// moves a 1 KiB p50 here between about 50 and 125 µs from one spawn to
	// the next (relay and proxy alike); many short rounds average that out
	// where a few long ones leave a ratio to chance.
	rounds := map[int]int{1 << 10: 41, 64 << 10: 21, 256 << 10: 15, 1 << 20: 11, 4 << 20: 7}
	counts := map[int]int{1 << 10: 200, 64 << 10: 100, 256 << 10: 60, 1 << 20: 50, 4 << 20: 20}
	if r, _ := strconv.Atoi(os.Getenv("MCPDRILL_BENCH_ROUNDS")); r > 0 { // a quicker table
		for k := range rounds {
			rounds[k] = max(3, min(rounds[k], r))
		}
	}
	only := os.Getenv("MCPDRILL_BENCH_TRANSPORT") // one transport ("" : all)
	mean := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		if len(v) > 2 {
			v = v[1 : len(v)-1]
		}
		sum := 0.0
		for _, x := range v {
			sum += x
		}
		return sum / float64(len(v))
	}
	var out, verdicts strings.Builder
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT MET"
	}
	for _, tr := range benchTransports {
		if only != "" && tr.name != only {
			continue
		}
		modes := modesOf(tr.name)
		fmt.Fprintf(&out, "\n| transport | load | mode | MB/s | p50 µs | p99 µs | added p50 µs | throughput vs relay | p99 vs relay | added p50 vs relay's | CPU µs/msg | CPU vs relay | peak RSS MiB |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, l := range benchLoads {
			// Per mode, per round: throughput, p50, p99, CPU, the middle
			// process's peak RSS; the table shows their trimmed means.
			thr, p50, p99 := map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
			vsRelay, cpu, rss := map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
			for r := 0; r < rounds[l.size]; r++ {
				for i := range modes {
					mode := modes[(r+i)%len(modes)]
					s := tr.measure(t, mode, l, counts[l.size])
					thr[mode] = append(thr[mode], s.mbps())
					p50[mode] = append(p50[mode], float64(s.p(0.5).Microseconds()))
					p99[mode] = append(p99[mode], float64(s.p(0.99).Microseconds()))
					cpu[mode] = append(cpu[mode], float64(s.cpuPerMsg().Nanoseconds())/1e3)
					rss[mode] = append(rss[mode], float64(s.rssKB)/1024)
				}
				for _, mode := range modes {
					vsRelay[mode] = append(vsRelay[mode], thr[mode][r]/thr["relay"][r])
				}
			}
			d, rl := mean(p50["direct"]), mean(p50["relay"])
			for _, mode := range modes {
				added := mean(p50[mode]) - d
				ratio := "-"
				if mode != "direct" && mode != "relay" && rl > d {
					ratio = fmt.Sprintf("%.2f", added/(rl-d))
				}
				cpuCol, cpuRatio := "-", "-"
				if c := mean(cpu[mode]); c > 0 {
					cpuCol = fmt.Sprintf("%.1f", c)
					if rc := mean(cpu["relay"]); rc > 0 && mode != "relay" {
						cpuRatio = fmt.Sprintf("%.2f", c/rc)
					}
				}
				rssCol := "-"
				if r := mean(rss[mode]); r > 0 {
					rssCol = fmt.Sprintf("%.1f", r)
				}
				fmt.Fprintf(&out, "| %s | %s | %s | %.1f | %.0f | %.0f | %.0f | %.2f | %.2f | %s | %s | %s | %s |\n", tr.name, l.name(), mode, mean(thr[mode]),
					mean(p50[mode]), mean(p99[mode]), added, mean(vsRelay[mode]), mean(p99[mode])/mean(p99["relay"]), ratio, cpuCol, cpuRatio, rssCol)
			}
			// Issue 17's targets: over the modes with no plan or a plan
			// that cannot fire (targetModes), and the live rule at
			// probability 1. The live rules that match nothing
			// (unmatchedModes) are held to the same bar on a line of
			// their own.
			rp := mean(p50["revproxy"]) - d // ReverseProxy's added p50 (HTTP)
			worst := func(set []string) (lowThr, highP99, highRatio, highRP float64) {
				lowThr, highP99, highRatio, highRP = math.Inf(1), math.Inf(-1), math.Inf(-1), math.Inf(-1)
				for _, mode := range set {
					lowThr = min(lowThr, mean(vsRelay[mode]))
					highP99 = max(highP99, mean(p99[mode])/mean(p99["relay"]))
					if rl > d {
						highRatio = max(highRatio, (mean(p50[mode])-d)/(rl-d))
					}
					if rp > 0 {
						highRP = max(highRP, (mean(p50[mode])-d)/rp)
					}
				}
				return
			}
			lowThr, highP99, highRatio, highRP := worst(targetModes)
			uThr, uP99, uRatio, uRP := worst(unmatchedModes)
			live := mean(vsRelay["proxy-s2c-p1"])
			switch {
			case tr.name == "stdio":
				fmt.Fprintf(&verdicts, "stdio %s: throughput >= 0.95x the relay's: %s (lowest %.2f); p99 <= 1.5x the relay's: %s (highest %.2f)",
					l.name(), verdict(lowThr >= 0.95), lowThr, verdict(highP99 <= 1.5), highP99)
				if l.size >= 64<<10 && l.size <= 1<<20 && !l.request {
					fmt.Fprintf(&verdicts, "; live rule at p=1 >= 0.6x: %s (%.2f)", verdict(live >= 0.6), live)
				}
				verdicts.WriteString("; " + memoryVerdict(l.size, modes, rss, mean, verdict) + "\n")
				fmt.Fprintf(&verdicts, "  unmatched live rules: throughput %s (lowest %.2f); p99 %s (highest %.2f)\n",
					verdict(uThr >= 0.95), uThr, verdict(uP99 <= 1.5), uP99)
			case l.size == 1<<10 || l.size == 64<<10 || l.size == 1<<20:
				fmt.Fprintf(&verdicts, "%s %s: added p50 <= 1.5x the relay's: %s (highest %.2f; the relay adds %.0f µs",
					tr.name, l.name(), verdict(highRatio <= 1.5), highRatio, rl-d)
				if rp > 0 && rl > d {
					fmt.Fprintf(&verdicts, "; net/http's ReverseProxy %.2f; these modes at most %.2f of its added p50", rp/(rl-d), highRP)
				}
				verdicts.WriteString(")\n")
				fmt.Fprintf(&verdicts, "  unmatched live rules: %s (highest %.2f", verdict(uRatio <= 1.5), uRatio)
				if !math.IsInf(uRP, -1) {
					fmt.Fprintf(&verdicts, "; at most %.2f of ReverseProxy's added p50", uRP)
				}
				verdicts.WriteString(")\n")
			}
		}
	}
	t.Log(out.String() + "\nTargets, no plan or a plan that cannot fire (" + strings.Join(targetModes, ", ") +
		"); unmatched live rules (" + strings.Join(unmatchedModes, ", ") + ") held to the same bar:\n" + verdicts.String())
}

// memoryVerdict judges issue 17's memory target at one load: the peak RSS
// each proxy mode holds above the relay's (trimmed means over the rounds)
// at most twice the frame. Where twice the frame is less than the relay's
// own peak RSS varies between rounds, RSS cannot tell, and the verdict
// says so.
func memoryVerdict(size int, modes []string, rss map[string][]float64, mean func([]float64) float64, verdict func(bool) string) string {
	if len(rss["relay"]) == 0 || mean(rss["relay"]) <= 0 {
		return "memory: no peak RSS read"
	}
	high, worst := math.Inf(-1), ""
	for _, mode := range modes {
		if strings.HasPrefix(mode, "proxy") {
			if added := mean(rss[mode]) - mean(rss["relay"]); added > high {
				high, worst = added, mode
			}
		}
	}
	limit := 2 * float64(size) / (1 << 20)
	spread := slices.Max(rss["relay"]) - slices.Min(rss["relay"])
	if limit < spread {
		return fmt.Sprintf("memory <= 2x the frame above the relay's: below what RSS resolves (the relay's own peak varies by %.1f MiB; at most %+.1f MiB, %s)", spread, high, worst)
	}
	return fmt.Sprintf("memory <= 2x the frame above the relay's: %s (at most %+.1f MiB, %s; limit %.1f MiB)", verdict(high <= limit), high, worst, limit)
}

// TestBenchHarness runs every mode of every transport of the benchmark a
// few times at 1 MiB replies and at 1 MiB requests (warm-up: 10 calls), so that a broken role
// or plan fails here rather than in a table run: every call must get a
// whole reply (measure fails the test otherwise), and on Linux the middle
// process must have carried the payloads: during the timed calls it read
// and wrote about a payload a call (/proc/PID/io). A middle process the
// traffic bypassed moves next to nothing. It measures no time: the figures
// are TestBenchTable's.
func TestBenchHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 30 processes")
	}
	for _, tr := range benchTransports {
		for _, l := range []load{{size: 1 << 20}, {size: 1 << 20, request: true}} {
			for _, mode := range modesOf(tr.name) {
				t.Run(tr.name+"/"+l.name()+"/"+mode, func(t *testing.T) {
					const calls = 3
					s := tr.measure(t, mode, l, calls)
					if mode == "direct" || runtime.GOOS != "linux" {
						return
					}
					// The HTTP relay splices between its sockets: its bytes
					// never pass through read or write calls.
					if !strings.HasPrefix(tr.name, "http") || mode != "relay" {
						// (nine tenths: a request's padding is its size less
						// the frame around it)
						switch want := int64(calls * l.size * 9 / 10); {
						case s.read < 0:
							t.Errorf("cannot read /proc/PID/io of the middle process")
						case s.read < want || s.written < want:
							t.Errorf("the middle process read %d and wrote %d bytes in %d calls of %d: the traffic did not go through it", s.read, s.written, calls, l.size)
						}
					}
					if s.rssKB <= 0 {
						t.Errorf("no peak RSS read for the middle process")
					}
				})
			}
		}
	}
}

// targetModes are the modes of issue 17's throughput, p99 and added-p50
// targets: no plan, and a plan whose only rule cannot fire.
var targetModes = []string{"proxy", "proxy-rules"}

// unmatchedModes carry a live rule that matches none of the benchmark's
// traffic: the proxy cannot know that, so it accounts for every frame.
// The table holds them to the same bar, on a line of their own.
var unmatchedModes = []string{"proxy-c2s-live", "proxy-s2c-live"}

// TestMemoryFlat: the proxy's heap does not grow with the number of frames
// relayed (64 KiB frames, stored and decided client→server, streamed with
// their bookkeeping on the way back from the echoing child).
func TestMemoryFlat(t *testing.T) {
	argv, env := self("cat")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = RunStdio(t.Context(), StdioOptions{Config: Config{Plan: plan(t, benchPlans["proxy-c2s-live"])}, Command: argv, Env: env, Stdin: inR, Stdout: outW, Stderr: os.Stderr})
	}()
	frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"blob":"` + strings.Repeat("y", 64<<10) + `"}}}` + "\n")
	br := bufio.NewReaderSize(outR, 256<<10)
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	send := func(n int) {
		for i := 0; i < n; i++ {
			_, _ = inW.Write(frame)
			line, err := br.ReadSlice('\n')
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
			}
			if err != nil || len(line) == 0 {
				t.Fatal(err)
			}
		}
	}
	send(200)
	h1 := heap()
	send(2000)
	h2 := heap()
	inW.Close()
	<-done
	t.Logf("heap in use after 200 frames: %d KiB, after 2200: %d KiB", h1>>10, h2>>10)
	if h2 > h1+4<<20 {
		t.Fatalf("heap grew by %d KiB over 2000 frames", (h2-h1)>>10)
	}
}

// countRecorder counts the events it is given.
type countRecorder struct{ n atomic.Int64 }

func (c *countRecorder) Record(Event) { c.n.Add(1) }

// TestMemoryFlatHTTP is TestMemoryFlat over HTTP: 2 200 POSTs of 64 KiB
// (their bodies in pooled buffers) through the proxy's own server, each
// answered with 64 KiB, a JSON body or an event stream by turns, under a
// plan with a live client→server rule and a rule firing on about 20% of
// replies (they take the store and delay paths). The process's heap
// (client, proxy and upstream) must not grow with the number of exchanges.
func TestMemoryFlatHTTP(t *testing.T) {
	payload := strings.Repeat("x", 64<<10)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		p, _ := jsonrpc.PeekFrame(b)
		body := `{"jsonrpc":"2.0","id":` + string(p.ID) + `,"result":{"content":[{"type":"text","text":"` + payload + `"}]}}`
		if id, _ := strconv.Atoi(string(p.ID)); id%2 == 0 {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "event: message\ndata: "+body+"\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}))
	defer up.Close()
	rec := &countRecorder{}
	src := benchPlans["proxy-c2s-live"] + strings.TrimPrefix(p02, "rules:\n")
	px := startHTTPProxy(t, up.URL, Config{Plan: plan(t, src), Recorder: rec})
	c := px.Client()
	arg := strings.Repeat("y", 64<<10)
	buf := make([]byte, 256<<10)
	id := 0
	send := func(n int) {
		for range n {
			id++
			body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"x","arguments":{"blob":"` + arg + `"}}}`
			req, _ := http.NewRequest(http.MethodPost, px.URL+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.CopyBuffer(io.Discard, resp.Body, buf)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || got < 64<<10 {
				t.Fatalf("exchange %d: status %d, %d bytes", id, resp.StatusCode, got)
			}
		}
	}
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC() // pools keep what they hold through one collection
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	send(200)
	h1 := heap()
	send(2000)
	h2 := heap()
	fired := rec.n.Load()
	t.Logf("heap in use after 200 exchanges: %d KiB, after 2200: %d KiB; %d faults fired", h1>>10, h2>>10, fired)
	if fired < 300 || fired > 580 {
		t.Fatalf("%d faults fired on 2 200 replies at probability 0.2", fired)
	}
	if h2 > h1+4<<20 {
		t.Fatalf("heap grew by %d KiB over 2000 exchanges", (h2-h1)>>10)
	}
}

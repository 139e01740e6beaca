package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpdrill/mcpdrill/faults"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/relay"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/sdkserver"
	"github.com/mcpdrill/mcpdrill/internal/reap"
	"github.com/mcpdrill/mcpdrill/internal/reap/reaptest"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// The test binary doubles as every process the tests need, chosen by
// MCPDRILL_PROXY_ROLE (the go-sdk fork-exec trick): no fixture binaries.
const roleEnv = "MCPDRILL_PROXY_ROLE"

func TestMain(m *testing.M) {
	reaptest.Run()
	if role := os.Getenv(roleEnv); role != "" {
		storeAllFrames = os.Getenv("MCPDRILL_STORE_ALL") != "" // bench modes *-store
		stop := startRoleProfile(role)
		code := runRole(role)
		stop()
		os.Exit(code)
	}
	// A race-enabled process sleeps a second before it exits; the tests
	// start many of this binary's roles and wait for each to end.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	// As the CLI does: orphans re-parent here, and must be reaped here.
	if err := reap.Subreaper(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func runRole(role string) int {
	ctx := context.Background()
	switch role {
	case "testbed":
		driftAfter, _ := strconv.Atoi(os.Getenv("MCPDRILL_DRIFT_AFTER")) // guard tests
		depth, _ := strconv.Atoi(os.Getenv("MCPDRILL_SCHEMA_DEPTH"))
		pageSize, _ := strconv.Atoi(os.Getenv("MCPDRILL_PAGE_SIZE"))
		err := testbed.ServeStdio(ctx, testbed.Options{Profile: os.Getenv("MCPDRILL_PROFILE"), Seed: 1, DriftAfter: driftAfter, SchemaDepth: depth, PageSize: pageSize}, os.Stdin, os.Stdout, os.Stderr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "hostile":
		hostileFromEnv().serveStdio(os.Stdin, os.Stdout)
		return 0
	case "cat":
		_, _ = io.Copy(os.Stdout, os.Stdin)
		return 0
	case "exit":
		// Read one line, then exit with the status in MCPDRILL_EXIT.
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		code, _ := strconv.Atoi(os.Getenv("MCPDRILL_EXIT"))
		return code
	case "sigwait":
		// Report readiness, then exit 42 on SIGTERM.
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM)
		fmt.Println(`{"jsonrpc":"2.0","method":"ready"}`)
		<-ch
		return 42
	case "bench-server":
		return benchServer()
	case "bridge-fixture":
		return bridgeFixture()
	case "http-upstream", "http-relay", "http-revproxy", "http-proxy":
		return runHTTPRole(role)
	case "sdk":
		if err := sdkserver.ServeStdio(ctx, sdkserver.Options{}, os.Stdin, os.Stdout); err != nil {
			return 1
		}
		return 0
	case "proxy", "relay":
		child := []string{os.Args[0]}
		if c := os.Getenv("MCPDRILL_CHILD_CMD"); c != "" {
			child = strings.Fields(c)
		}
		env := append(os.Environ(), roleEnv+"="+os.Getenv("MCPDRILL_CHILD_ROLE"))
		if role == "relay" {
			size, _ := strconv.Atoi(os.Getenv("MCPDRILL_RELAY_PIPES"))
			code, err := relay.RunPipes(ctx, child, env, os.Stdin, os.Stdout, os.Stderr, size)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
			return code
		}
		var plan *faults.Plan
		if src := os.Getenv("MCPDRILL_PLAN"); src != "" {
			p, err := faults.ParsePlan([]byte(src))
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
			plan = p
		}
		var rec Recorder
		if path := os.Getenv("MCPDRILL_LOG"); path != "" {
			f, err := os.Create(path)
			if err != nil {
				return 4
			}
			defer f.Close()
			rec = NewJSONL(f)
		}
		signal.Ignore(syscall.SIGPIPE)
		code, err := RunStdio(ctx, StdioOptions{
			Config:  Config{Plan: plan, Recorder: rec},
			Command: child, Env: env, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 4
		}
		return code
	}
	fmt.Fprintln(os.Stderr, "unknown role", role)
	return 2
}

// benchServer answers every request line with a result whose payload has
// MCPDRILL_BENCH_SIZE bytes, echoing the request id.
func benchServer() int {
	size, _ := strconv.Atoi(os.Getenv("MCPDRILL_BENCH_SIZE"))
	payload := strings.Repeat("x", max(0, size-64))
	// MCPDRILL_BENCH_ASK: before each reply, a request of the server's of
	// about that many bytes, under the id of the request it answers.
	ask, _ := strconv.Atoi(os.Getenv("MCPDRILL_BENCH_ASK"))
	askPad := strings.Repeat("a", max(0, ask-80))
	br := bufio.NewReaderSize(os.Stdin, 1<<20)
	bw := bufio.NewWriterSize(os.Stdout, 1<<20)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) { // a long request: its id is in its head
			line = append([]byte(nil), line[:64]...)
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
		}
		if err != nil {
			return 0
		}
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		if i := strings.Index(string(line[:min(len(line), 64)]), `"id":`); i >= 0 {
			rest := line[i+5:]
			j := 0
			for j < len(rest) && rest[j] != ',' && rest[j] != '}' {
				j++
			}
			req.ID = rest[:j]
		}
		if ask > 0 {
			fmt.Fprintf(bw, `{"jsonrpc":"2.0","id":%s,"method":"sampling/createMessage","params":{"pad":"%s"}}`+"\n", req.ID, askPad)
		}
		fmt.Fprintf(bw, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}`+"\n", req.ID, payload)
		if err := bw.Flush(); err != nil {
			return 0
		}
	}
}

// testStderr is where child stderr goes: the terminal with -v, else nowhere.
func testStderr() io.Writer {
	if testing.Verbose() {
		return os.Stderr
	}
	return io.Discard
}

// self returns the argv and env that run this test binary in a role.
func self(role string, env ...string) ([]string, []string) {
	return []string{os.Args[0]}, append(append(os.Environ(), roleEnv+"="+role), env...)
}

// startStdio runs RunStdio in-process with pipes on the client side. It
// returns the client's ends and a function that waits for the exit status.
func startStdio(t testing.TB, plan *faults.Plan, rec Recorder, role string, env ...string) (io.WriteCloser, *bufio.Reader, func() int) {
	t.Helper()
	argv, cenv := self(role, env...)
	inR, inW := io.Pipe()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		code, err := RunStdio(context.Background(), StdioOptions{
			Config:  Config{Plan: plan, Recorder: rec},
			Command: argv, Env: cenv, Stdin: inR, Stdout: outW, Stderr: testStderr(),
		})
		if err != nil {
			t.Error(err)
		}
		done <- code
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return inW, bufio.NewReaderSize(outR, 1<<20), func() int { return <-done }
}

func parsePlanEnv(src string) (*faults.Plan, error) { return faults.ParsePlan([]byte(src)) }

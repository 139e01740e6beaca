//go:build linux

package reaptest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	roleEnv = "MCPDRILL_REAPTEST_ROLE"
	fileEnv = "MCPDRILL_REAPTEST_PIDFILE"
	// stubbornEnv makes the sleeper ignore SIGTERM.
	stubbornEnv = "MCPDRILL_REAPTEST_STUBBORN"
)

// wait bounds every wait of the fixture and of the tests' checks.
const wait = 15 * time.Second

// Run plays a fixture role when this process was started as one, and
// exits; otherwise it returns at once. The roles:
//
//	sleeper  calls setsid, records its pid in the pid file, sleeps 5 minutes
//	         (ignoring SIGTERM when Stubborn's entry is set)
//	spawner  starts a sleeper, copies stdin to stdout until EOF, exits 0
func Run() {
	switch os.Getenv(roleEnv) {
	case "sleeper":
		if os.Getenv(stubbornEnv) != "" {
			signal.Ignore(syscall.SIGTERM)
		}
		if _, err := syscall.Setsid(); err != nil {
			fmt.Fprintln(os.Stderr, "reaptest: setsid:", err)
			os.Exit(1)
		}
		if err := writePid(os.Getenv(fileEnv)); err != nil {
			fmt.Fprintln(os.Stderr, "reaptest:", err)
			os.Exit(1)
		}
		time.Sleep(5 * time.Minute)
		os.Exit(0)
	case "spawner":
		if err := SpawnFromEnv(); err != nil {
			fmt.Fprintln(os.Stderr, "reaptest:", err)
			os.Exit(1)
		}
		_, _ = io.Copy(os.Stdout, os.Stdin)
		os.Exit(0)
	}
}

// Env returns the environment entries that start this test binary as a
// spawner whose sleeper records its pid in file.
func Env(file string) []string {
	return []string{roleEnv + "=spawner", fileEnv + "=" + file}
}

// Stubborn is the environment entry that makes the sleeper ignore SIGTERM.
const Stubborn = stubbornEnv + "=1"

// FileEnv returns the environment entry that makes SpawnFromEnv, in a
// fixture server of a test's own, start a sleeper that records its pid in
// file.
func FileEnv(file string) string { return fileEnv + "=" + file }

// SpawnFromEnv starts a sleeper when the pid-file entry of Env or FileEnv
// is set, and returns once it has recorded its pid. The sleeper's stdio is
// /dev/null, so it holds none of the server's pipes, and nobody waits for it.
func SpawnFromEnv() error {
	file := os.Getenv(fileEnv)
	if file == "" {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("executable: %w", err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), roleEnv+"=sleeper")
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the sleeper: %w", err)
	}
	if _, err := readPid(file); err != nil {
		return err
	}
	return nil
}

// Pid returns the pid the sleeper recorded in file, waiting for it.
// Whatever the test's outcome, the sleeper is killed at cleanup.
func Pid(t testing.TB, file string) int {
	t.Helper()
	pid, err := readPid(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

// WaitGone fails t unless pid is gone from /proc (not even a zombie)
// within a bounded wait.
func WaitGone(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for pause := time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if errors.Is(err, os.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the setsid grandchild %d outlived its session: %s", pid, strings.TrimSpace(string(b)))
		}
		time.Sleep(pause)
	}
}

// Alive fails t unless pid is a live process.
func Alive(t testing.TB, pid int) {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatalf("process %d is gone: %v", pid, err)
	}
	if s := string(b); strings.Contains(s[strings.LastIndexByte(s, ')'):], " Z ") {
		t.Fatalf("process %d is a zombie", pid)
	}
}

// writePid records this process's pid in file, atomically.
func writePid(file string) error {
	tmp := filepath.Join(filepath.Dir(file), "."+filepath.Base(file)+".tmp")
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return fmt.Errorf("writing the pid file: %w", err)
	}
	if err := os.Rename(tmp, file); err != nil {
		return fmt.Errorf("writing the pid file: %w", err)
	}
	return nil
}

// readPid waits, within a bound, for file to hold a pid.
func readPid(file string) (int, error) {
	deadline := time.Now().Add(wait)
	for pause := time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		b, err := os.ReadFile(file)
		if err == nil {
			pid, err := strconv.Atoi(string(b))
			if err != nil {
				return 0, fmt.Errorf("pid file %s: %w", file, err)
			}
			return pid, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("no pid in %s after %s: %w", file, wait, err)
		}
		time.Sleep(pause)
	}
}

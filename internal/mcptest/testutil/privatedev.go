package testutil

import (
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// envPrivateDev marks a test process re-executed by DevNullSafe inside a
// private mount namespace.
const envPrivateDev = "MCPDRILL_TEST_PRIVATE_DEV"

// privateDevScript mounts a fresh tmpfs over /dev in the (already private)
// mount namespace, makes the few device nodes a Go test and its children
// use, and runs the test binary: whatever the test does to /dev/null there
// is done to a node of its own, never to the machine's.
const privateDevScript = `set -e
mount -t tmpfs -o mode=0755 mcpdrill-test-dev /dev
mknod -m 0666 /dev/null c 1 3
mknod -m 0666 /dev/zero c 1 5
mknod -m 0666 /dev/urandom c 1 9
exec "$@"`

// DevNullSafe makes a test that writes to /dev/null safe to run, and
// reports whether the calling test should go on and do it here:
//
//   - not root: /dev/null cannot be replaced by this process, so the test
//     runs here (true);
//   - inside the private namespace this function set up: true;
//   - root, with unshare(1) working: the test is run again in a new
//     private mount namespace whose /dev is a fresh tmpfs with its own null
//     device; its result becomes this test's and false is returned;
//   - root without a working unshare: the test is skipped.
//
// Wherever the test runs, its /dev/null is checked to be a character
// device before and after.
func DevNullSafe(t *testing.T) bool {
	t.Helper()
	AssertCharDevice(t, "/dev/null")
	t.Cleanup(func() { AssertCharDevice(t, "/dev/null") })
	if os.Getenv(envPrivateDev) != "" || os.Geteuid() != 0 {
		return true
	}
	if runtime.GOOS != "linux" {
		t.Skip("root: no private mount namespace on " + runtime.GOOS + " to protect /dev/null")
	}
	if err := exec.Command("unshare", "--mount", "--propagation", "private", "true").Run(); err != nil {
		t.Skipf("root without a working unshare(1) (%v): not writing to /dev/null", err)
	}
	var parts []string
	for _, p := range strings.Split(t.Name(), "/") {
		parts = append(parts, "^"+regexp.QuoteMeta(p)+"$")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", privateDevScript, "sh",
		exe, "-test.run", strings.Join(parts, "/"), "-test.v", "-test.count", "1")
	cmd.Env = append(os.Environ(), envPrivateDev+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("in a private mount namespace: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("in a private mount namespace the test did not pass:\n%s", out)
	}
	t.Logf("ran in a private mount namespace:\n%s", out)
	return false
}

// AssertCharDevice fails the test unless path (not followed if it is a
// link) is a character device.
func AssertCharDevice(t testing.TB, path string) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if fi.Mode().Type() != fs.ModeDevice|fs.ModeCharDevice {
		t.Fatalf("%s is %v, not a character device", path, fi.Mode())
	}
}

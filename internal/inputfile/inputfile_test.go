package inputfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, n int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "in.json")
	if err := os.WriteFile(p, []byte(strings.Repeat("x", n)), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadLimit(t *testing.T) {
	if b, err := ReadLimit(write(t, 10), 10); err != nil || len(b) != 10 {
		t.Fatalf("a file at the limit: %d bytes, %v", len(b), err)
	}
	p := write(t, 11)
	_, err := ReadLimit(p, 10)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "10-byte") {
		t.Fatalf("a file one byte over the limit: %v", err)
	}
	if _, err := ReadLimit(filepath.Join(t.TempDir(), "missing"), 10); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

// TestReadDevZero is F12 of issue 21: an endless device stops at the limit.
func TestReadDevZero(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, err := Read("/dev/zero")
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "/dev/zero is larger than the 64 MiB input file limit") {
		t.Fatalf("/dev/zero: %v", err)
	}
}

// TestReadSparse: a regular file over MaxSize is refused without being read.
func TestReadSparse(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sparse")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := Read(p); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("sparse file over the limit: %v", err)
	}
}

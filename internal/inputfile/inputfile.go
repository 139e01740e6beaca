// Package inputfile reads the local files a user hands mcpdrill (fault
// plans, manifests, baselines and captures, drift specs, servers.json,
// results.json) with a size limit, so that a path such as /dev/zero or a
// huge file fails with a clear error instead of exhausting memory.
package inputfile

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxSize is the largest input file Read accepts: 64 MiB, the size of the
// largest message the MCP client accepts (jsonrpc.DefaultMaxFrame).
const MaxSize = 64 << 20

// ErrTooLarge is matched (errors.Is) by the error for a file over the limit.
var ErrTooLarge = errors.New("input file over the size limit")

// TooLargeError names a file that exceeded the limit.
type TooLargeError struct {
	Path  string
	Limit int64
}

// Error implements error.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than the %s input file limit", e.Path, Size(e.Limit))
}

// Is makes a TooLargeError match ErrTooLarge.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// Read reads the file at path, at most MaxSize bytes.
func Read(path string) ([]byte, error) { return ReadLimit(path, MaxSize) }

// ReadLimit reads the file at path. A file of more than limit bytes is a
// *TooLargeError; at most limit+1 bytes are read to find out, so a device
// or a pipe that never ends costs no more than that.
func ReadLimit(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadOpen(f, limit)
}

// ReadOpen is ReadLimit for a file the caller has open (one it has
// checked, or whose identity it keeps), read from its current offset;
// errors name f.Name().
func ReadOpen(f *os.File, limit int64) ([]byte, error) {
	path := f.Name()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	return b, nil
}

// Size renders a byte count as this package's errors do, in the largest
// whole binary unit: "64 MiB", "4 KiB", "100-byte".
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d-byte", n)
}

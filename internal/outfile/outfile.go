// Package outfile writes the files mcpdrill produces (results.json, captures,
// reports) so that a write never damages what the path names:
//
//   - a regular file, or a path where nothing is yet, is replaced atomically:
//     the data goes to a temporary file in the same directory, is synced, and
//     is renamed over the path, so a reader sees the old contents or the new,
//     never half; a file that was there keeps its permission bits;
//   - a symbolic link is followed, through any chain of links and also when
//     it dangles, and its final target is replaced in the same way, in the
//     target's own directory: the link itself stays a link;
//   - a device (character or block) or a FIFO is opened and written to as it
//     is, never replaced: /dev/null stays a device and a FIFO's reader gets
//     the data;
//   - a Unix socket is connected to and the data sent on the connection;
//   - a directory, or any other kind of file, is refused.
package outfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
)

// maxLinks bounds the symbolic links followed from one path, as the
// kernel's own limit (40 on Linux) does.
const maxLinks = 40

// ErrNotWritable is matched (errors.Is) by the error for a path that names
// something Write will not write to: a directory, a symbolic-link loop or a
// kind of file it does not know.
var ErrNotWritable = errors.New("not a file that can be written")

// Write writes data to path as the package comment describes. perm is the
// permission of a file that is created (before the umask); a replaced file
// keeps its own.
func Write(path string, data []byte, perm fs.FileMode) error {
	target, fi, err := resolve(path)
	if err != nil {
		return err
	}
	switch {
	case fi == nil:
		return replace(target, data, perm, false)
	case fi.Mode().IsRegular():
		// The file replaced keeps its permission bits.
		return replace(target, data, fi.Mode().Perm(), true)
	case fi.Mode()&(fs.ModeDevice|fs.ModeNamedPipe) != 0:
		return writeStraight(target, data)
	case fi.Mode()&fs.ModeSocket != 0:
		return sendToSocket(target, data)
	case fi.IsDir():
		return fmt.Errorf("write %s: %w: it is a directory", path, ErrNotWritable)
	default:
		return fmt.Errorf("write %s: %w: %v", path, ErrNotWritable, fi.Mode().Type())
	}
}

// resolve follows path through symbolic links and returns the path of what
// they end at and its information (nil when nothing is there yet).
func resolve(path string) (string, fs.FileInfo, error) {
	p := path
	for range maxLinks + 1 {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil, nil
		}
		if err != nil {
			return "", nil, fmt.Errorf("write %s: %w", path, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return p, fi, nil
		}
		dest, err := os.Readlink(p)
		if err != nil {
			return "", nil, fmt.Errorf("write %s: %w", path, err)
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(p), dest)
		}
		p = dest
	}
	return "", nil, fmt.Errorf("write %s: %w: more than %d symbolic links", path, ErrNotWritable, maxLinks)
}

// Replace replaces the file at path atomically: data goes to a new
// temporary file beside it, created with perm (under the umask), which is
// synced and renamed over path, and the directory is synced, so a reader
// sees the old contents or the new, never half. Unlike Write it follows no
// link and keeps no permission bits: whatever is at path is replaced.
func Replace(path string, data []byte, perm fs.FileMode) error {
	return replace(path, data, perm, false)
}

// replace is Replace; chmod sets perm on the new file exactly, past the
// umask, for a file that takes over the bits of the one it replaces.
func replace(path string, data []byte, perm fs.FileMode, chmod bool) (err error) {
	dir := filepath.Dir(path)
	f, err := createTemp(dir, "."+filepath.Base(path)+".tmp-", perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if chmod {
		// The umask applied at creation; the file replaced had these bits.
		if err := f.Chmod(perm); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	// The rename lasts a crash once the directory is synced; a directory
	// that cannot be opened or synced leaves it as durable as it was.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// createTemp creates a new file in dir named prefix and a random suffix,
// with perm under the umask (os.CreateTemp always uses 0600).
func createTemp(dir, prefix string, perm fs.FileMode) (*os.File, error) {
	var b [8]byte
	for range 100 {
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(filepath.Join(dir, prefix+hex.EncodeToString(b[:])), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("no unused temporary file name in %s", dir)
}

// writeStraight writes data into an existing device or FIFO without
// creating, truncating or replacing anything. Opening a FIFO waits for a
// reader, as a shell redirection does.
func writeStraight(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return writeClose(f, path, data)
}

// sendToSocket connects to the Unix stream socket at path and sends data.
func sendToSocket(path string, data []byte) error {
	c, err := net.Dial("unix", path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return writeClose(c, path, data)
}

// writeClose writes data to w, opened on path, and closes it.
func writeClose(w io.WriteCloser, path string, data []byte) error {
	if _, err := w.Write(data); err != nil {
		w.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

package install

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Isolated but not copied: every package-version has a dependency tree of
// its own (npm ci in its own project, exactly what npm resolved for it),
// and the files of those trees live once on disk. After a tree is
// installed, linkTree replaces each of its regular files by a hard link to
// the store's copy of the same bytes (the store is content-addressed:
// store/sha256/AB/REST, a suffix for an executable), adding the file to
// the store when it is new. The trees stay npm's own, file for file (the
// layout a user gets from npx, not a linker's); only the disk blocks are
// shared.
//
// Limits: the store and the trees must share a file system (a hard link
// cannot cross one: the tree is then left as npm wrote it, and the unit
// says so); a server that writes into its own installed files at run time
// writes into every tree holding the same bytes (root ignores file modes,
// so making the store read-only would not prevent it); the store only
// grows (delete it with the trees).

// linkStats counts what linkTree did.
type linkStats struct {
	// Files are the regular files seen, Linked those now sharing the
	// store's copy, New those the store did not hold yet.
	Files, Linked, New int
	// Saved is the size of the files that were replaced by a link to a
	// copy the store already held.
	Saved int64
}

// linkTree links every regular file under root to store.
func linkTree(root, store string) (linkStats, error) {
	var st linkStats
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		if p == filepath.Join(root, ".package-lock.json") {
			return nil // npm's record of the install, which npmInstalled dates
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		st.Files++
		if linkCount(info) > 1 {
			st.Linked++ // already a link (a reused tree)
			return nil
		}
		sum, err := fileHash(p)
		if err != nil {
			return err
		}
		key := hex.EncodeToString(sum)
		if info.Mode()&0o111 != 0 {
			key += "-x"
		}
		dst := filepath.Join(store, "sha256", key[:2], key[2:])
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		// A new file goes into the store as it is.
		if err := os.Link(p, dst); err == nil {
			st.New++
			st.Linked++
			return nil
		} else if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("linking into the store: %w", err)
		}
		// The store holds these bytes: the tree's file becomes a link to
		// them, replaced in one rename.
		tmp := p + ".mcpdrill-link"
		_ = os.Remove(tmp)
		if err := os.Link(dst, tmp); err != nil {
			return fmt.Errorf("linking from the store: %w", err)
		}
		if err := os.Rename(tmp, p); err != nil {
			_ = os.Remove(tmp)
			return err
		}
		st.Linked++
		st.Saved += info.Size()
		return nil
	})
	return st, err
}

func fileHash(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

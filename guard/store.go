package guard

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/inputfile"
	"github.com/mcpdrill/mcpdrill/internal/outfile"
)

// Store file names inside the store directory.
const (
	// AuditFile is the append-only audit log (one JSON Event per line).
	AuditFile = "audit.jsonl"
	// LockFile is locked (flock) around every read-modify-write.
	LockFile = ".lock"
)

// ErrCorrupt reports a store file that cannot be read as a record or an
// audit line. The store never resets a corrupt record to first use.
var ErrCorrupt = errors.New("guard: corrupt store file")

// ErrBadServerName reports a server id that cannot name a store file.
var ErrBadServerName = errors.New("guard: invalid server id")

var serverNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$`)

// ValidServerName checks a server id: 1-128 characters from letters,
// digits and ". _ @ + -", starting with a letter or digit.
func ValidServerName(name string) error {
	if !serverNameRE.MatchString(name) {
		return fmt.Errorf("%w %q: use 1-128 of A-Z a-z 0-9 . _ @ + -, starting with a letter or digit", ErrBadServerName, name)
	}
	return nil
}

// ServerID derives a stable server id from a command line or a URL: a
// readable slug plus 8 hex digits of the SHA-256 of all the parts, so two
// servers whose slugs agree still get different ids. The slug is only the
// command's base name (the first part) or, for a URL, its host and port:
// never an argument, user info, path or query, which may hold secrets, and
// the id names a store file and appears in audit lines and `guard status`.
func ServerID(parts ...string) string {
	var name string
	if len(parts) > 0 {
		name = parts[0]
		if strings.Contains(name, "://") {
			name = "" // unparsable: no slug rather than a guess
			if u, err := url.Parse(parts[0]); err == nil {
				name = u.Host
			}
		} else {
			name = filepath.Base(name)
		}
	}
	var slug strings.Builder
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_'
		switch {
		case ok:
			slug.WriteRune(r)
		case slug.Len() > 0 && !strings.HasSuffix(slug.String(), "-"):
			slug.WriteByte('-')
		}
	}
	s := strings.TrimLeft(slug.String(), "._-")
	if len(s) > 64 {
		s = s[:64]
	}
	s = strings.TrimRight(s, "-")
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	h := hex.EncodeToString(sum[:4])
	if s == "" {
		return "server-" + h
	}
	return s + "-" + h
}

// Store is a directory of records (SERVER.json) and the audit log. It is
// safe for concurrent use by several processes: every change runs under an
// exclusive flock on the lock file, records are replaced atomically (temp
// file, fsync, rename) so readers never see half a record, and audit lines
// are appended under the same lock.
type Store struct {
	dir string

	// cache keeps the last decoded record of each server with the identity
	// of the file it came from: a proxy reads the record on every tools/call,
	// and decoding re-validates both tool sets (parse and fingerprint).
	// Records are replaced by rename, so a new write is a new file.
	mu    sync.Mutex
	cache map[string]cachedRecord
	// audited is the audit log as this store last left it (reconciled or
	// appended to): while the file is unchanged there is nothing to
	// reconcile.
	audited auditMark
}

// auditMark identifies a state of the audit log file.
type auditMark struct {
	size int64
	mod  time.Time
}

// cachedRecord is a decoded record and the file it was decoded from.
type cachedRecord struct {
	key fileKey
	rec *Record
}

// fileKey identifies one version of a record file.
type fileKey struct {
	size    int64
	modTime int64
	sys     string
}

func keyOf(fi fs.FileInfo) fileKey {
	return fileKey{size: fi.Size(), modTime: fi.ModTime().UnixNano(), sys: sysKey(fi)}
}

// copyRecord returns a copy whose tool-set pointers are not shared, so a
// caller changing a record cannot change the cached one.
func copyRecord(r *Record) *Record {
	c := *r
	for _, ts := range []**ToolSet{&c.Baseline, &c.LastSeen} {
		if *ts != nil {
			t := **ts
			t.Tools = slices.Clone(t.Tools)
			*ts = &t
		}
	}
	return &c
}

// Open opens (creating it when missing, mode 0700) a store directory.
func Open(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("guard: empty store directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("guard: store: %w", err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("guard: store: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("guard: store %s is not a directory", dir)
	}
	return &Store{dir: dir}, nil
}

// Dir returns the store directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) path(server string) string { return filepath.Join(s.dir, server+".json") }

// lock takes the store lock (exclusive or shared) and returns its release.
func (s *Store) lock(exclusive bool) (func(), error) {
	f, err := os.OpenFile(filepath.Join(s.dir, LockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("guard: lock: %w", err)
	}
	if err := lockFile(f, exclusive); err != nil {
		f.Close()
		return nil, fmt.Errorf("guard: lock: %w", err)
	}
	return func() {
		_ = unlockFile(f)
		f.Close()
	}, nil
}

// DecodeRecord reads one record file's bytes and checks its invariants.
func DecodeRecord(b []byte) (*Record, error) {
	var r Record
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the record")
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// Get returns the server's record, nil when there is none. A file that
// exists but does not decode is ErrCorrupt.
func (s *Store) Get(server string) (*Record, error) {
	if err := ValidServerName(server); err != nil {
		return nil, err
	}
	return s.read(server)
}

// maxStoreFile bounds a store file the store reads: the input-size limit
// of every file mcpdrill reads. A record is never written past it, since
// it could not be read back.
var maxStoreFile int64 = inputfile.MaxSize

// errNotRegular reports a store file that is not a regular file (a device,
// a pipe, a directory): a reader could wait on it, or read without end.
var errNotRegular = errors.New("not a regular file")

// openStoreFile opens a store file for reading: nil (and no error) when it
// does not exist; an error when it is not a regular file. It looks before
// it opens, so that a pipe is never opened (that would wait for a writer).
func openStoreFile(p string) (*os.File, fs.FileInfo, error) {
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err == nil && !fi.Mode().IsRegular() {
		err = errNotRegular
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", p, err)
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err == nil {
		if fi, err = f.Stat(); err == nil && !fi.Mode().IsRegular() {
			err = errNotRegular
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", p, err)
	}
	return f, fi, nil
}

func (s *Store) read(server string) (*Record, error) {
	p := s.path(server)
	f, fi, err := openStoreFile(p)
	switch {
	case errors.Is(err, errNotRegular):
		return nil, fmt.Errorf("%w %w (fix or remove it; it is never reset to first use)", ErrCorrupt, err)
	case err != nil:
		return nil, fmt.Errorf("guard: read %w", err)
	case f == nil:
		return nil, nil
	}
	defer f.Close()
	key := keyOf(fi)
	s.mu.Lock()
	c, ok := s.cache[server]
	s.mu.Unlock()
	if ok && c.key == key {
		return copyRecord(c.rec), nil
	}
	b, err := inputfile.ReadOpen(f, maxStoreFile)
	if errors.Is(err, inputfile.ErrTooLarge) {
		return nil, fmt.Errorf("%w: %w (fix or remove it; it is never reset to first use)", ErrCorrupt, err)
	}
	if err != nil {
		return nil, fmt.Errorf("guard: %w", err)
	}
	r, err := DecodeRecord(b)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w (fix or remove the file; it is never reset to first use)", ErrCorrupt, p, err)
	}
	if r.Server != server {
		return nil, fmt.Errorf("%w %s: it records server %q", ErrCorrupt, p, r.Server)
	}
	s.mu.Lock()
	if s.cache == nil {
		s.cache = map[string]cachedRecord{}
	}
	s.cache[server] = cachedRecord{key: key, rec: copyRecord(r)}
	s.mu.Unlock()
	return r, nil
}

// UpdateFunc computes the next record from the current one (nil: none).
// A nil event with a record equal to the current one writes nothing.
type UpdateFunc func(cur *Record) (next Record, ev *Event, err error)

// Update runs fn under the exclusive store lock on the server's current
// record, writes the record it returns atomically and appends its event to
// the audit log. It returns the record now stored (nil when none) and the
// event written (nil when none).
func (s *Store) Update(server string, fn UpdateFunc) (*Record, *Event, error) {
	if err := ValidServerName(server); err != nil {
		return nil, nil, err
	}
	unlock, err := s.lock(true)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	if err := s.reconcile(time.Now()); err != nil {
		return nil, nil, err
	}
	cur, err := s.read(server)
	if err != nil {
		return nil, nil, err
	}
	next, ev, err := fn(cur)
	if err != nil {
		return cur, nil, err
	}
	if next.Server != server {
		return cur, nil, fmt.Errorf("guard: update returned a record for %q, not %q", next.Server, server)
	}
	if err := next.Validate(); err != nil {
		return cur, nil, fmt.Errorf("guard: update produced an invalid record: %w", err)
	}
	var line []byte
	if ev != nil {
		if line, err = encodeEvent(ev); err != nil {
			return cur, nil, err
		}
		next.AuditLine = lineDigest(line)
	} else if cur != nil {
		next.AuditLine = cur.AuditLine
	}
	if ev == nil && cur != nil && sameRecord(cur, &next) {
		return cur, nil, nil
	}
	b, err := encodeRecord(&next)
	if err != nil {
		return cur, nil, err
	}
	// The audit line goes first: a store that stops between the two
	// writes leaves a line whose record was not written, which the next
	// writer's reconcile answers with a rollback line, rather than a
	// transition with no line.
	if ev != nil {
		if err := s.appendLine(line); err != nil {
			return cur, nil, err
		}
	}
	if err := s.writeRecord(next.Server, b); err != nil {
		return cur, nil, err
	}
	return &next, ev, nil
}

// reconcile makes the audit log and the records agree after a store that
// stopped between its writes. A torn last line (an append cut short) is
// cut off: its record was never written. A last event whose record was
// not written (the record is missing, or carries another line's digest,
// or, for a record from before digests, is older than the event) is
// followed by a rollback event saying so. Every writer reconciles first,
// under the exclusive lock, so a dangling event is always the log's last
// line.
func (s *Store) reconcile(now time.Time) error {
	p := filepath.Join(s.dir, AuditFile)
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("guard: audit log: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: %w", p, errNotRegular) // lines written to it would be lost
	}
	if err != nil {
		return fmt.Errorf("guard: audit log: %w", err)
	}
	mark := auditMark{fi.Size(), fi.ModTime()}
	s.mu.Lock()
	same := s.audited == mark
	s.mu.Unlock()
	if same || mark.size == 0 {
		return nil
	}
	end, err := lastLineEnd(f, mark.size)
	if err != nil {
		return fmt.Errorf("guard: audit log: %w", err)
	}
	var torn *Event
	if end < mark.size {
		// A torn last line, of any length: cut it, and say so in the log.
		head := make([]byte, min(mark.size-end, 4<<10))
		if _, err := f.ReadAt(head, end); err != nil {
			return fmt.Errorf("guard: audit log: %w", err)
		}
		if err := f.Truncate(end); err != nil {
			return fmt.Errorf("guard: audit log: cut a torn last line: %w", err)
		}
		if err := f.Sync(); err != nil {
			return fmt.Errorf("guard: audit log: %w", err)
		}
		if m := tornServer.FindSubmatch(head); m != nil && ValidServerName(string(m[1])) == nil {
			torn = &Event{Time: now, Actor: "mcpdrill", Server: string(m[1]), Action: ActionRollback, Rule: RuleOf(ActionRollback),
				Note: fmt.Sprintf("a torn audit line of %d bytes (an append cut short) was cut from the log", mark.size-end)}
		}
	}
	// Events are small: the last complete line lies in the last 64 KiB.
	off := max(0, end-64<<10)
	tail := make([]byte, end-off)
	if _, err := f.ReadAt(tail, off); err != nil {
		return fmt.Errorf("guard: audit log: %w", err)
	}
	if torn != nil {
		if err := s.appendAudit(torn); err != nil {
			return err
		}
	}
	if last := bytes.TrimSpace(tail[bytes.LastIndexByte(tail[:max(0, len(tail)-1)], '\n')+1:]); len(last) > 0 {
		var ev Event
		if json.Unmarshal(last, &ev) == nil && ev.Action != ActionRollback && ValidServerName(ev.Server) == nil {
			r, err := s.read(ev.Server)
			if err != nil {
				return err
			}
			if r == nil || r.AuditLine != "" && r.AuditLine != lineDigest(last) || r.AuditLine == "" && r.UpdatedAt.Before(ev.Time) {
				rb := &Event{Time: now, Actor: "mcpdrill", Server: ev.Server, Action: ActionRollback, Rule: RuleOf(ActionRollback),
					From: ev.To, To: StatusOf(r).String(), OldFingerprint: ev.NewFingerprint, NewFingerprint: ev.OldFingerprint,
					Note: fmt.Sprintf("the %s of %s was not recorded: the store stopped between its audit line and its record", ev.Action, ev.Time.UTC().Format(time.RFC3339Nano))}
				if err := s.appendAudit(rb); err != nil {
					return err
				}
				return nil
			}
		}
	}
	if fi, err := f.Stat(); err == nil {
		s.mu.Lock()
		s.audited = auditMark{fi.Size(), fi.ModTime()}
		s.mu.Unlock()
	}
	return nil
}

// tornServer finds the server an event's torn line was about.
var tornServer = regexp.MustCompile(`"server":"([^"\\]{1,200})"`)

// lastLineEnd returns the offset just past the last newline among the
// first size bytes of f (0 when there is none), reading back from the end
// in 64 KiB steps: a torn line may be of any length.
func lastLineEnd(f *os.File, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		off := max(0, end-int64(len(buf)))
		b := buf[:end-off]
		if _, err := f.ReadAt(b, off); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return off + int64(i) + 1, nil
		}
		end = off
	}
	return 0, nil
}

func sameRecord(a, b *Record) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// encodeRecord is r's file; one the store could not read back (over the
// store file limit) is refused.
func encodeRecord(r *Record) ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("guard: encode record: %w", err)
	}
	if int64(len(b)) >= maxStoreFile {
		return nil, fmt.Errorf("guard: the record of %q would be over the %s store file limit (%d bytes), so it is not written", r.Server, inputfile.Size(maxStoreFile), len(b)+1)
	}
	return append(b, '\n'), nil
}

// writeRecord replaces server's record file with b.
func (s *Store) writeRecord(server string, b []byte) error {
	// The record is replaced atomically (temporary file, sync, rename,
	// sync of the directory), readable and writable by its owner only.
	if err := outfile.Replace(s.path(server), b, 0o600); err != nil {
		return fmt.Errorf("guard: %w", err)
	}
	return nil
}

// encodeEvent returns ev's audit-log line, newline included.
func encodeEvent(ev *Event) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ev); err != nil {
		return nil, fmt.Errorf("guard: encode audit event: %w", err)
	}
	return b.Bytes(), nil
}

// auditDigest is the form of Record.AuditLine.
var auditDigest = regexp.MustCompile(`^[0-9a-f]{64}$`)

// lineDigest is the SHA-256, in hex, of an audit line without the spaces
// and newline around it.
func lineDigest(line []byte) string {
	sum := sha256.Sum256(bytes.TrimSpace(line))
	return hex.EncodeToString(sum[:])
}

// appendAudit appends ev to the audit log.
func (s *Store) appendAudit(ev *Event) error {
	line, err := encodeEvent(ev)
	if err != nil {
		return err
	}
	return s.appendLine(line)
}

// appendLine appends one encoded event to the audit log and syncs it.
func (s *Store) appendLine(line []byte) error {
	p := filepath.Join(s.dir, AuditFile)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("guard: audit log: %w", err)
	}
	defer f.Close()
	if _, err := f.Write(line); err != nil {
		return fmt.Errorf("guard: audit log: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("guard: audit log: %w", err)
	}
	if fi, err := f.Stat(); err == nil {
		s.mu.Lock()
		s.audited = auditMark{fi.Size(), fi.ModTime()}
		s.mu.Unlock()
	}
	return nil
}

// List returns every record, sorted by server id. A corrupt record file
// fails the whole listing.
func (s *Store) List() ([]Record, error) {
	unlock, err := s.lock(false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("guard: store: %w", err)
	}
	var out []Record
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		server := strings.TrimSuffix(name, ".json")
		if ValidServerName(server) != nil {
			continue
		}
		r, err := s.read(server)
		if err != nil {
			return nil, err
		}
		if r != nil {
			out = append(out, *r)
		}
	}
	slices.SortFunc(out, func(a, b Record) int { return strings.Compare(a.Server, b.Server) })
	return out, nil
}

// Audit returns the audit log in order, only server's events when server is
// not empty. A line that is not an event is ErrCorrupt with its number.
func (s *Store) Audit(server string) ([]Event, error) {
	unlock, err := s.lock(false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return s.audit(server)
}

// audit is Audit for a caller that holds the lock.
func (s *Store) audit(server string) ([]Event, error) {
	f, _, err := openStoreFile(filepath.Join(s.dir, AuditFile))
	if err != nil || f == nil {
		if err != nil {
			err = fmt.Errorf("guard: audit log: %w", err)
		}
		return nil, err
	}
	defer f.Close()
	b, err := inputfile.ReadOpen(f, maxStoreFile)
	if errors.Is(err, inputfile.ErrTooLarge) {
		return nil, fmt.Errorf("guard: audit log: %w (move it aside to start a new one: the records keep their state)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("guard: audit log: %w", err)
	}
	evs, err := ReadAudit(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	if server != "" {
		evs = slices.DeleteFunc(evs, func(e Event) bool { return e.Server != server })
	}
	return evs, nil
}

// ReadAudit decodes audit lines. Blank lines are skipped, and so is a last
// line with no newline that is not an event (an append a stopped store cut
// short; its next writer cuts it off); anything else that is not an event
// is ErrCorrupt.
func ReadAudit(r io.Reader) ([]Event, error) {
	br := bufio.NewReader(r)
	var out []Event
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var ev Event
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.DisallowUnknownFields()
			if derr := dec.Decode(&ev); derr != nil {
				if errors.Is(err, io.EOF) {
					return out, nil // a torn last line
				}
				return nil, fmt.Errorf("%w: %s line %d: %w", ErrCorrupt, AuditFile, n, derr)
			}
			if ev.Server == "" || ev.Action == "" {
				return nil, fmt.Errorf("%w: %s line %d: an event needs a server and an action", ErrCorrupt, AuditFile, n)
			}
			out = append(out, ev)
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("guard: audit log: %w", err)
		}
	}
}

// Observe applies Observe to the server's stored record.
func (s *Store) Observe(server string, live ToolSet, p Posture, actor string, now time.Time) (*Record, *Event, error) {
	return s.Update(server, func(cur *Record) (Record, *Event, error) {
		deleted := false
		if cur == nil && p != PostureStrict {
			// A record deleted by hand is not a first use: its history
			// stays, so the server waits for an approval.
			evs, err := s.audit(server)
			if err != nil {
				return Record{}, nil, err
			}
			deleted = len(evs) > 0
		}
		if deleted {
			p = PostureStrict
		}
		next, ev := Observe(cur, server, live, p, actor, now)
		if deleted && ev != nil {
			ev.Note = "no record, but the audit log has the server's history: held until approved"
		}
		return next, ev, nil
	})
}

// Approve applies Approve (see there for expect).
func (s *Store) Approve(server, expect, actor string, now time.Time) (*Record, *Event, error) {
	return s.Update(server, func(cur *Record) (Record, *Event, error) {
		return Approve(cur, expect, actor, now)
	})
}

// Quarantine applies Quarantine.
func (s *Store) Quarantine(server, note, actor string, now time.Time) (*Record, *Event, error) {
	return s.Update(server, func(cur *Record) (Record, *Event, error) {
		next, ev := Quarantine(cur, server, note, actor, now)
		return next, ev, nil
	})
}

// Release applies Release.
func (s *Store) Release(server, actor string, now time.Time) (*Record, *Event, error) {
	return s.Update(server, func(cur *Record) (Record, *Event, error) {
		return Release(cur, actor, now)
	})
}

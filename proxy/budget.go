package proxy

import (
	"errors"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// DefaultMemoryBudget is the HTTP proxy's default in-flight byte budget:
// the bodies it holds at once, across all connections.
const DefaultMemoryBudget = 256 << 20

// errBudget reports a body the proxy has no room to hold now.
var errBudget = errors.New("proxy: in-flight byte budget exhausted")

// byteBudget counts the body bytes the HTTP proxy holds. A body that does
// not fit is refused (never waited for: a client that retries is better
// served than one whose connection hangs).
type byteBudget struct {
	mu        sync.Mutex
	used, max int64
	// peak is the most held at once, and sinceTrim the bytes given back,
	// since memory was last returned to the system.
	peak, sinceTrim int64
	trimEvery       int64
	// trim returns freed memory to the system (returnMemory); it runs on
	// a goroutine of its own, one at a time.
	trim       func()
	trimmingMu sync.Mutex
}

// trimPeak is the least held at once that is worth returning to the
// system once it is all given back: below it the heap the bodies leave is
// small, and is reused by the next ones.
const trimPeak = 64 << 20

func newByteBudget(max int64) *byteBudget {
	if max <= 0 {
		max = DefaultMemoryBudget
	}
	return &byteBudget{max: max, trimEvery: max / 2, trim: returnMemory}
}

// returnMemory returns freed memory to the system, the pooled body buffers
// (heldBodies) included: a sync.Pool keeps what it holds through one
// collection, so the second one, debug.FreeOSMemory's, frees them.
func returnMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}

// take reserves n bytes; false when they do not fit.
func (b *byteBudget) take(n int64) bool {
	if n <= 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max {
		return false
	}
	b.used += n
	b.peak = max(b.peak, b.used)
	return true
}

// give returns n bytes. When nothing is held any more after at least
// trimPeak was held at once, and half the budget has been given back, the
// runtime is asked to return freed memory to the system: a burst of large
// bodies otherwise leaves the heap at its peak. A stream of bodies that
// never held much at once is left to the runtime, which reuses the memory.
func (b *byteBudget) give(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.sinceTrim += n
	trim := b.used == 0 && b.peak >= trimPeak && b.sinceTrim >= b.trimEvery
	if trim {
		b.sinceTrim, b.peak = 0, 0
	}
	b.mu.Unlock()
	if trim && b.trimmingMu.TryLock() {
		go func() {
			defer b.trimmingMu.Unlock()
			b.trim()
		}()
	}
}

// readBudgeted is readBody charged to b: it returns the body and the bytes
// charged, which the caller gives back once it no longer holds the body,
// and releases the body then (heldBody.release). A body whose room cannot
// be reserved fails with errBudget, charging nothing; the bytes already
// read, if any, are returned with it (to relay unexamined).
func readBudgeted(b *byteBudget, r io.Reader, n, limit int64) (*heldBody, int64, error) {
	if n >= 0 && n < limit {
		if !b.take(n + 1) {
			return &heldBody{}, 0, errBudget
		}
		body, err := readBody(r, n, limit)
		if extra := int64(len(body.b)) - n; extra > 0 { // longer than declared
			if !b.take(extra) {
				b.give(n + 1)
				body.release()
				return &heldBody{}, 0, errBudget
			}
			return body, n + 1 + extra, err
		}
		return body, n + 1, err
	}
	// Unknown length: the buffer grows in steps, each charged first.
	lr := io.LimitReader(r, limit)
	var buf []byte
	var charged int64
	for {
		if len(buf) == cap(buf) {
			grow := min(max(int64(cap(buf)), 32<<10), limit-int64(cap(buf)))
			if grow <= 0 {
				return &heldBody{b: buf}, charged, nil
			}
			if !b.take(grow) {
				b.give(charged)
				return &heldBody{b: buf}, 0, errBudget
			}
			charged += grow
			nb := make([]byte, len(buf), int64(cap(buf))+grow)
			copy(nb, buf)
			buf = nb
		}
		m, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if errors.Is(err, io.EOF) {
			return &heldBody{b: buf}, charged, nil
		}
		if err != nil {
			return &heldBody{b: buf}, charged, err
		}
	}
}

// heldBody is a body the HTTP proxy holds: a request on its way upstream,
// or a reply while it is examined. A body over pooledMin lies in a pooled
// buffer, which goes back to the pool once every holder has let go: the
// handler that read it, and each reader of it handed to the transport,
// which closes what it sent, possibly after the reply has come back.
type heldBody struct {
	b      []byte
	refs   atomic.Int32
	pooled bool
}

// pooledMin is the longest body given a buffer of its own: made afresh,
// the size it needs (see copyBody on pooled buffers and small bodies).
const pooledMin = 64 << 10

var heldBodies = sync.Pool{New: func() any { return new(heldBody) }}

// newHeldBody returns a body of length n for the caller to fill, held
// once (by the caller).
func newHeldBody(n int64) *heldBody {
	if n <= pooledMin {
		return &heldBody{b: make([]byte, n, n+1)}
	}
	h := pooledBody()
	h.b = slices.Grow(h.b, int(n)+1)[:n]
	return h
}

// pooledBody returns an empty pooled body, its buffer for the caller to
// fill up to its capacity (or to replace with a grown one), held once.
func pooledBody() *heldBody {
	h := heldBodies.Get().(*heldBody)
	h.b = h.b[:0]
	h.pooled = true
	h.refs.Store(1)
	return h
}

// release lets go of one hold; the last returns a pooled buffer to the
// pool (unless it grew past jsonrpc.MaxIdleBuf).
func (h *heldBody) release() {
	if h.pooled && h.refs.Add(-1) == 0 && cap(h.b) <= jsonrpc.MaxIdleBuf {
		h.b = h.b[:0]
		heldBodies.Put(h)
	}
}

// sent returns r (a reader of bytes that may lie in h) as a request body
// for the transport: h is held until the body is closed.
func (h *heldBody) sent(r io.Reader) io.ReadCloser {
	if h.pooled {
		h.refs.Add(1)
	}
	return &sentBody{Reader: r, h: h}
}

// sentBody is a request body handed to the transport.
type sentBody struct {
	io.Reader
	h    *heldBody
	once sync.Once
}

// Close lets go of the body's hold (once, however often it is called).
func (s *sentBody) Close() error {
	s.once.Do(s.h.release)
	return nil
}

// readBody reads a body whose declared length is n (0 <= n < limit) into
// one buffer of that length, and past it, up to limit bytes in all, if the
// body is longer than declared.
func readBody(r io.Reader, n, limit int64) (*heldBody, error) {
	h := newHeldBody(n)
	if m, err := io.ReadFull(r, h.b); err != nil {
		h.b = h.b[:m]
		return h, err
	}
	// A body longer than declared is the transport's error; read on to it.
	var one [1]byte
	if m, err := r.Read(one[:]); m > 0 {
		rest, err := io.ReadAll(io.LimitReader(r, limit-n-1))
		h.b = append(append(h.b, one[0]), rest...)
		return h, err
	} else if err != nil && !errors.Is(err, io.EOF) {
		return h, err
	}
	return h, nil
}

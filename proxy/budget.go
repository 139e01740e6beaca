package proxy

import (
	"errors"
	"io"
	"runtime/debug"
	"sync"
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
	// trim returns freed memory to the system (debug.FreeOSMemory); it
	// runs on a goroutine of its own, one at a time.
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
	return &byteBudget{max: max, trimEvery: max / 2, trim: debug.FreeOSMemory}
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
// charged, which the caller gives back once it no longer holds the body.
// A body whose room cannot be reserved fails with errBudget, charging
// nothing; the bytes already read, if any, are returned with it (to relay
// unexamined).
func readBudgeted(b *byteBudget, r io.Reader, n, limit int64) ([]byte, int64, error) {
	if n >= 0 && n < limit {
		if !b.take(n + 1) {
			return nil, 0, errBudget
		}
		body, err := readBody(r, n, limit)
		if extra := int64(cap(body)) - (n + 1); extra > 0 {
			if !b.take(extra) {
				b.give(n + 1)
				return nil, 0, errBudget
			}
			return body, int64(cap(body)), err
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
				return buf, charged, nil
			}
			if !b.take(grow) {
				b.give(charged)
				return buf, 0, errBudget
			}
			charged += grow
			nb := make([]byte, len(buf), int64(cap(buf))+grow)
			copy(nb, buf)
			buf = nb
		}
		m, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if errors.Is(err, io.EOF) {
			return buf, charged, nil
		}
		if err != nil {
			return buf, charged, err
		}
	}
}

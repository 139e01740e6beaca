package proxy

import (
	"bytes"
	"io"
)

// lineBuf is one direction's input, read into a buffer it owns. A line is
// examined where the read put it and written on from there, so no path
// copies a line's bytes, and a line is moved only when it starts late in a
// full buffer (the next line had begun in the read that ended the last
// one).
//
//	buf: [ … consumed … | current line: ls … r (scanned, no '\n') … w (read) | free ]
type lineBuf struct {
	src io.Reader
	buf []byte // all of it usable: reads go to buf[w:]
	ls  int    // where the current line starts
	r   int    // buf[ls:r] is scanned and holds no '\n'
	w   int    // end of the bytes read
	err error  // the read error that ended the input, once seen
}

// minRead is the least free space a read is given: below it the current
// line moves to the front, or the buffer grows.
const minRead = 16 << 10

// maxIdleBuf is the largest buffer kept between lines; a larger one (grown
// for a long line) is dropped when the buffer empties.
const maxIdleBuf = 4 << 20

func newLineBuf(src io.Reader) *lineBuf {
	return &lineBuf{src: src, buf: make([]byte, readBuf)}
}

// begin starts the next line at the first byte not consumed. With nothing
// buffered the line starts at the front of the buffer.
func (b *lineBuf) begin() {
	b.ls = b.r
	if b.r == b.w {
		b.ls, b.r, b.w = 0, 0, 0
		if len(b.buf) > maxIdleBuf {
			b.buf = make([]byte, readBuf)
		}
	}
}

// wait blocks until the current line has a byte buffered, or the input
// has ended.
func (b *lineBuf) wait() {
	for b.w == b.ls && b.fill() {
	}
}

// lineEnd returns the end (one past the '\n') of the current line if it is
// buffered, scanning only bytes not scanned before; ok is false otherwise,
// and then everything buffered is scanned.
func (b *lineBuf) lineEnd() (end int, ok bool) {
	if i := bytes.IndexByte(b.buf[b.r:b.w], '\n'); i >= 0 {
		b.r += i + 1
		return b.r, true
	}
	b.r = b.w
	return 0, false
}

// drop forgets the buffered bytes of the current line (a line past the
// frame cap, already written: only its length matters now).
func (b *lineBuf) drop() { b.r, b.w = b.ls, b.ls }

// fill reads once more, after making room: when less than minRead is free
// the current line moves to the front (callers holding an index into the
// line shift it by the change of ls), and if that is not enough the buffer
// doubles. It reports whether bytes may still come (false: the input has
// ended, see err).
func (b *lineBuf) fill() (more bool) {
	if b.err != nil {
		return false
	}
	if len(b.buf)-b.w < minRead {
		if b.ls > 0 {
			n := copy(b.buf, b.buf[b.ls:b.w])
			b.r -= b.ls
			b.w, b.ls = n, 0
		}
		if len(b.buf)-b.w < minRead {
			nb := make([]byte, 2*len(b.buf))
			copy(nb, b.buf[:b.w])
			b.buf = nb
		}
	}
	n, err := b.src.Read(b.buf[b.w:])
	b.w += n
	if err != nil {
		b.err = err
		return n > 0
	}
	return true
}

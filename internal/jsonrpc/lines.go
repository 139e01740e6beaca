package jsonrpc

import (
	"bytes"
	"io"
)

// LineBuf is the one newline-delimited framer: a stream's input, read into
// a buffer it owns. A line is examined where the read put it and can be
// written on from there, so a relay streaming a line of any size copies
// none of its bytes, and a line is moved only when it starts late in a
// full buffer (the next line had begun in the read that ended the last
// one). [LineReader] reads whole lines through it; the stdio proxy
// forwards lines as they arrive.
//
//	Buf: [ … consumed … | current line: Start … Scanned (no '\n') … End (read) | free ]
type LineBuf struct {
	src io.Reader
	// Buf is all usable: reads go to Buf[End:].
	Buf []byte
	// Start is where the current line starts; Buf[Start:Scanned] is
	// scanned and holds no '\n'; End is the end of the bytes read.
	Start, Scanned, End int
	// Err is the read error that ended the input, once seen.
	Err error
	// Grow bounds how far Fill grows Buf (0: no bound): it never grows
	// it past Grow, or past what one read needs, whichever is more. A
	// reader with a frame cap sets it just above the cap, so that a line
	// it will refuse never doubles the buffer past it.
	Grow int
}

// LineBufSize is a LineBuf's first size.
const LineBufSize = 64 << 10

// minRead is the least free space a read is given: below it the current
// line moves to the front, or the buffer grows.
const minRead = 16 << 10

// MaxIdleBuf is the largest frame buffer kept between frames, by a line
// buffer and by the HTTP proxy's pool; a larger one (grown for a long
// frame) is dropped once the frame is done. Frames up to half of it keep
// their buffer from one to the next instead of growing a new one each time
// (docs/wrap.md, "Buffers"), so a stream holds at most about twice its
// largest frame.
const MaxIdleBuf = 16 << 20

// NewLineBuf returns a LineBuf reading src.
func NewLineBuf(src io.Reader) *LineBuf {
	return &LineBuf{src: src, Buf: make([]byte, LineBufSize)}
}

// Begin starts the next line at the first byte not consumed. With nothing
// buffered the line starts at the front of the buffer.
func (b *LineBuf) Begin() {
	b.Start = b.Scanned
	if b.Scanned == b.End {
		b.Start, b.Scanned, b.End = 0, 0, 0
		if len(b.Buf) > MaxIdleBuf {
			b.Buf = make([]byte, LineBufSize)
		}
	}
}

// Wait blocks until the current line has a byte buffered, or the input
// has ended.
func (b *LineBuf) Wait() {
	for b.End == b.Start && b.Fill() {
	}
}

// LineEnd returns the end (one past the '\n') of the current line if it is
// buffered, scanning only bytes not scanned before; ok is false otherwise,
// and then everything buffered is scanned.
func (b *LineBuf) LineEnd() (end int, ok bool) {
	if i := bytes.IndexByte(b.Buf[b.Scanned:b.End], '\n'); i >= 0 {
		b.Scanned += i + 1
		return b.Scanned, true
	}
	b.Scanned = b.End
	return 0, false
}

// Drop forgets the buffered bytes of the current line (a line past a
// frame cap, already written or refused: only its length matters now).
func (b *LineBuf) Drop() { b.Scanned, b.End = b.Start, b.Start }

// Fill reads once more, after making room: when less than minRead is free
// the current line moves to the front (callers holding an index into the
// line shift it by the change of Start), and if that is not enough the
// buffer doubles. It reports whether bytes may still come (false: the
// input has ended, see Err).
func (b *LineBuf) Fill() (more bool) {
	if b.Err != nil {
		return false
	}
	if len(b.Buf)-b.End < minRead {
		if b.Start > 0 {
			n := copy(b.Buf, b.Buf[b.Start:b.End])
			b.Scanned -= b.Start
			b.End, b.Start = n, 0
		}
		if len(b.Buf)-b.End < minRead {
			n := 2 * len(b.Buf)
			if b.Grow > 0 {
				n = max(min(n, b.Grow), b.End+minRead)
			}
			nb := make([]byte, n)
			copy(nb, b.Buf[:b.End])
			b.Buf = nb
		}
	}
	n, err := b.src.Read(b.Buf[b.End:])
	b.End += n
	if err != nil {
		b.Err = err
		return n > 0
	}
	return true
}

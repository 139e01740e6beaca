package jsonrpc

import (
	"bytes"
	"errors"
	"io"
)

// DefaultMaxFrame is the default cap on one frame: 64 MiB.
const DefaultMaxFrame = 64 << 20

// ErrFrameTooLarge reports a line or event longer than the reader's cap. The
// reader has discarded the rest of that frame and can go on reading.
var ErrFrameTooLarge = errors.New("jsonrpc: frame exceeds size cap")

// LineReader reads newline-delimited frames of any size up to a cap, in
// O(n), through a [LineBuf].
type LineReader struct {
	lb  *LineBuf
	max int

	// Of the last line refused with ErrFrameTooLarge: its length and, when
	// edge > 0, up to edge bytes of its start and end (see Oversize).
	n          int64
	edge       int
	head, tail []byte
}

// NewLineReader returns a LineReader over r; max <= 0 means DefaultMaxFrame.
func NewLineReader(r io.Reader, max int) *LineReader {
	if max <= 0 {
		max = DefaultMaxFrame
	}
	lb := NewLineBuf(r)
	lb.Grow = max + 2 + minRead // a line and its "\r\n", and one read more
	return &LineReader{lb: lb, max: max}
}

// KeepEdges makes the reader keep up to n bytes of the start and of the end
// of each line it refuses as too large, so a caller can still tell what the
// line was (say, the id of a reply); Oversize returns them. Memory stays
// bounded by the cap. n <= 0 keeps nothing (the default).
func (l *LineReader) KeepEdges(n int) { l.edge = max(n, 0) }

// Oversize describes the last line refused with ErrFrameTooLarge: its length
// in bytes (terminator included) and, with KeepEdges, its first and last
// bytes. The slices are valid until the next ReadLine.
func (l *LineReader) Oversize() (n int64, head, tail []byte) {
	return l.n, l.head, l.tail
}

// ReadLine returns the next line without its terminator ("\n" or "\r\n").
// The slice is valid until the next call. A final line without a newline is
// returned before io.EOF. A line over the cap yields ErrFrameTooLarge after
// the whole line has been consumed; the reader holds at most the cap (and
// its terminator) of it.
func (l *LineReader) ReadLine() ([]byte, error) {
	lb := l.lb
	lb.Begin()
	l.n = 0
	over := false
	for {
		end, ok := lb.LineEnd()
		upTo := lb.End
		if ok {
			upTo = end
		}
		// Room for the line plus its "\r\n"; the exact check on the
		// content length happens once the terminator is trimmed.
		if !over && upTo-lb.Start > l.max+2 {
			over = true
			l.keepHead(nil, nil)
		}
		if over {
			chunk := lb.Buf[lb.Start:upTo]
			l.n += int64(len(chunk))
			if len(l.head) < l.edge {
				l.head = append(l.head, chunk[:min(len(chunk), l.edge-len(l.head))]...)
			}
			l.keepTail(chunk)
		}
		if ok {
			if !over {
				l.n = int64(end - lb.Start)
			}
			return l.line(lb.Buf[lb.Start:end], over)
		}
		if over {
			lb.Drop()
		}
		if !lb.Fill() {
			if !errors.Is(lb.Err, io.EOF) {
				return nil, lb.Err
			}
			if !over && lb.End == lb.Start {
				return nil, io.EOF
			}
			if !over {
				l.n = int64(lb.End - lb.Start)
			}
			lb.Scanned = lb.End
			return l.line(lb.Buf[lb.Start:lb.End], over)
		}
	}
}

func (l *LineReader) line(b []byte, over bool) ([]byte, error) {
	if over {
		return nil, ErrFrameTooLarge
	}
	line := trimEOL(b)
	if len(line) > l.max {
		l.keepHead(line, nil)
		l.keepTail(line)
		return nil, ErrFrameTooLarge
	}
	return line, nil
}

// keepHead keeps the first l.edge bytes of a+b and empties the tail.
func (l *LineReader) keepHead(a, b []byte) {
	l.head, l.tail = l.head[:0], l.tail[:0]
	if l.edge == 0 {
		return
	}
	l.head = append(l.head, a[:min(len(a), l.edge)]...)
	l.head = append(l.head, b[:min(len(b), l.edge-len(l.head))]...)
}

// keepTail appends b to the tail, keeping its last l.edge bytes.
func (l *LineReader) keepTail(b []byte) {
	if l.edge == 0 {
		return
	}
	l.tail = append(l.tail, b[max(0, len(b)-l.edge):]...)
	if len(l.tail) > l.edge {
		l.tail = append(l.tail[:0], l.tail[len(l.tail)-l.edge:]...)
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

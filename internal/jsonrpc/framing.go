package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// DefaultMaxFrame is the default cap on one frame: 64 MiB.
const DefaultMaxFrame = 64 << 20

// ErrFrameTooLarge reports a line or event longer than the reader's cap. The
// reader has discarded the rest of that frame and can go on reading.
var ErrFrameTooLarge = errors.New("jsonrpc: frame exceeds size cap")

// LineReader reads newline-delimited frames of any size up to a cap, in O(n).
type LineReader struct {
	r   *bufio.Reader
	max int
	buf []byte

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
	return &LineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
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
// the whole line has been consumed.
func (l *LineReader) ReadLine() ([]byte, error) {
	if cap(l.buf) > 1<<20 {
		l.buf = nil // do not pin a huge buffer after one big line
	}
	l.buf = l.buf[:0]
	l.n = 0
	over := false
	for {
		chunk, err := l.r.ReadSlice('\n')
		l.n += int64(len(chunk))
		if !over {
			// Room for the line plus its "\r\n"; the exact check on the
			// content length happens once the terminator is trimmed.
			if len(l.buf)+len(chunk) > l.max+2 {
				over = true
				l.keepHead(l.buf, chunk)
				l.buf = l.buf[:0]
			} else {
				l.buf = append(l.buf, chunk...)
			}
		}
		if over {
			l.keepTail(chunk)
		}
		switch {
		case err == nil:
			return l.line(over)
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if !over && len(l.buf) == 0 {
				return nil, io.EOF
			}
			return l.line(over)
		default:
			return nil, err
		}
	}
}

func (l *LineReader) line(over bool) ([]byte, error) {
	if over {
		return nil, ErrFrameTooLarge
	}
	line := trimEOL(l.buf)
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

// Event is one Server-Sent Event.
type Event struct {
	ID    string
	Event string // "" means "message"
	Data  []byte
	// Retry is the reconnection delay in ms, -1 when absent.
	Retry int
	// HasID tells an empty id field from no id field.
	HasID bool
}

// SSEReader parses a text/event-stream body.
type SSEReader struct {
	lr  *LineReader
	max int
}

// NewSSEReader returns an SSEReader; max caps one event's data (<= 0: DefaultMaxFrame).
func NewSSEReader(r io.Reader, max int) *SSEReader {
	if max <= 0 {
		max = DefaultMaxFrame
	}
	return &SSEReader{lr: NewLineReader(r, max), max: max}
}

// Next returns the next dispatched event. Comment-only blocks and blocks with
// no data and no id are skipped, as the SSE specification says. A stream that
// ends in the middle of an event returns io.ErrUnexpectedEOF.
func (s *SSEReader) Next() (Event, error) {
	ev := Event{Retry: -1}
	var data bytes.Buffer
	dataLines, seen := 0, false
	for {
		line, err := s.lr.ReadLine()
		if err != nil {
			if errors.Is(err, io.EOF) {
				if seen {
					return Event{}, io.ErrUnexpectedEOF
				}
				return Event{}, io.EOF
			}
			return Event{}, err
		}
		if len(line) == 0 {
			if dataLines > 0 || ev.HasID || ev.Retry >= 0 {
				ev.Data = append([]byte(nil), data.Bytes()...)
				return ev, nil
			}
			ev, seen = Event{Retry: -1}, false
			continue
		}
		seen = true
		if line[0] == ':' {
			continue
		}
		field, value := string(line), ""
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field = string(line[:i])
			value = strings.TrimPrefix(string(line[i+1:]), " ")
		}
		switch field {
		case "data":
			if data.Len()+len(value) > s.max {
				return Event{}, ErrFrameTooLarge
			}
			if dataLines > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(value)
			dataLines++
		case "event":
			ev.Event = value
		case "id":
			if !strings.ContainsRune(value, 0) {
				ev.ID, ev.HasID = value, true
			}
		case "retry":
			if n, err := strconv.Atoi(value); err == nil && n >= 0 {
				ev.Retry = n
			}
		}
	}
}

// WriteEvent writes one SSE event. Data containing newlines is split into
// several data lines.
func WriteEvent(w io.Writer, ev Event) error {
	var b bytes.Buffer
	if ev.Event != "" {
		fmt.Fprintf(&b, "event: %s\n", ev.Event)
	}
	if ev.HasID || ev.ID != "" {
		fmt.Fprintf(&b, "id: %s\n", ev.ID)
	}
	if ev.Retry >= 0 && ev.Retry != 0 {
		fmt.Fprintf(&b, "retry: %d\n", ev.Retry)
	}
	for _, line := range bytes.Split(ev.Data, []byte("\n")) {
		b.WriteString("data: ")
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

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

// RawEvent is one event of a text/event-stream as it was read: its bytes,
// for a relay that passes it on untouched, and what its fields say.
type RawEvent struct {
	Event
	// Raw is every line of the event as read, the blank line that ends it
	// included (missing when the stream ended first).
	Raw []byte
	// Fields are its lines other than data lines (comments included),
	// each ending in "\n": what an event rewritten with other data keeps
	// ([WriteData]).
	Fields [][]byte
	// HasData reports a data line, even an empty one.
	HasData bool
	// Over marks an event longer than the reader's cap: Raw, Fields and
	// Data are empty, and Head is the start of its data (at most
	// [MaxHead] bytes), to read its id from.
	Over bool
	Head []byte
}

// MaxHead is the most of an oversize event's data [ReadEvent] keeps.
const MaxHead = 64 << 10

// EventSlack is what an event may hold besides its data before it is
// past a cap on its data: field lines and "data:" prefixes.
const EventSlack = 64 << 10

// ReadEvent reads one event (up to and including the blank line that ends
// it). At the end of the stream it returns what it has with io.EOF. An
// event longer than max bytes (max > 0) is not held: once it is past max,
// what was read of it and the rest of it go to spill as they come (each
// slice valid only during the call), and the event returned has Over set.
// Fields are parsed as the SSE specification says: the name up to the
// first colon, the value after it less one leading space; a line with no
// colon is a name with an empty value; an id holding NUL is ignored. The
// data of an event with one data line shares Raw's bytes (capped, so that
// an append to it never writes into Raw).
func ReadEvent(br *bufio.Reader, max int, spill func([]byte)) (RawEvent, error) {
	return ReadEventInto(nil, br, max, spill)
}

// ReadEventInto is ReadEvent reading the event into buf's memory (its
// length is ignored), so that a reader done with one event can read the
// next where the last one was.
func ReadEventInto(buf []byte, br *bufio.Reader, max int, spill func([]byte)) (RawEvent, error) {
	ev := RawEvent{Event: Event{Retry: -1}, Raw: buf[:0]}
	// The event's lines are read into Raw, where one data line's value
	// stays (Raw[from:to]) as the data; a second data line joins them in
	// joined.
	var from, to, dataLines int
	var joined []byte
	data := func() []byte {
		if dataLines > 1 {
			return joined
		}
		return ev.Raw[from:to:to]
	}
	for {
		room := -1
		if max > 0 {
			room = max - len(ev.Raw)
		}
		start := len(ev.Raw)
		var over bool
		var err error
		ev.Raw, over, err = appendLine(ev.Raw, br, room)
		line := ev.Raw[start:]
		if over {
			ev.Over = true
			d := data()
			ev.Head = append(ev.Head, d[:min(len(d), MaxHead)]...)
			if name, v := field(bytes.TrimRight(line, "\r\n")); name == "data" && len(ev.Head) < MaxHead {
				if ev.HasData {
					ev.Head = append(ev.Head, '\n')
				}
				ev.Head = append(ev.Head, v[:min(len(v), MaxHead-len(ev.Head))]...)
			}
			spill(ev.Raw[:start])
			spill(line)
			ev.Raw, ev.Fields, ev.Data = nil, nil, nil
			if err != nil {
				return ev, err
			}
			return ev, spillRest(br, bytes.HasSuffix(line, []byte("\n")), spill)
		}
		content := bytes.TrimRight(line, "\r\n")
		if len(line) > 0 && len(content) == 0 {
			ev.Data = data()
			return ev, nil
		}
		if len(content) > 0 {
			switch name, v := field(content); name {
			case "data":
				switch dataLines {
				case 0: // the value ends the line's content
					from, to = start+len(content)-len(v), start+len(content)
				case 1:
					joined = append(append(append([]byte(nil), ev.Raw[from:to]...), '\n'), v...)
				default:
					joined = append(append(joined, '\n'), v...)
				}
				dataLines++
				ev.HasData = true
			default:
				switch name {
				case "event":
					ev.Event.Event = string(v)
				case "id":
					if bytes.IndexByte(v, 0) < 0 {
						ev.ID, ev.HasID = string(v), true
					}
				case "retry":
					if n, err := strconv.Atoi(string(v)); err == nil && n >= 0 {
						ev.Retry = n
					}
				}
				ev.Fields = append(ev.Fields, append(append([]byte(nil), content...), '\n'))
			}
		}
		if err != nil {
			ev.Data = data()
			return ev, err
		}
	}
}

// field splits an event line into its field name and value ("" for a
// comment).
func field(line []byte) (string, []byte) {
	if len(line) > 0 && line[0] == ':' {
		return "", nil
	}
	name, v, _ := bytes.Cut(line, []byte(":"))
	return string(name), bytes.TrimPrefix(v, []byte(" "))
}

// appendLine appends one line with its terminator to dst, of any length
// when room is negative. Otherwise a line longer than room is appended as
// far as it was read (at least room+1 bytes) with over set; the rest is
// not read.
func appendLine(dst []byte, br *bufio.Reader, room int) (_ []byte, over bool, err error) {
	start := len(dst)
	frag, err := br.ReadSlice('\n')
	dst = appendDoubling(dst, frag)
	for errors.Is(err, bufio.ErrBufferFull) {
		if room >= 0 && len(dst)-start > room {
			return dst, true, nil
		}
		frag, err = br.ReadSlice('\n')
		dst = appendDoubling(dst, frag)
	}
	return dst, room >= 0 && len(dst)-start > room, err
}

// appendDoubling is append that at least doubles dst when it must grow
// (append grows a large slice by a quarter, so a long line read a buffer
// at a time would be copied again a dozen times).
func appendDoubling(dst, b []byte) []byte {
	if cap(dst)-len(dst) < len(b) {
		dst = slices.Grow(dst, max(len(b), len(dst)))
	}
	return append(dst, b...)
}

// spillRest hands the rest of an event to spill as it is read, up to and
// including the blank line that ends it; atStart says whether the next
// byte begins a line.
func spillRest(br *bufio.Reader, atStart bool, spill func([]byte)) error {
	for {
		frag, err := br.ReadSlice('\n')
		spill(frag)
		switch {
		case err == nil:
			if atStart && len(bytes.TrimRight(frag, "\r\n")) == 0 {
				return nil
			}
			atStart = true
		case errors.Is(err, bufio.ErrBufferFull):
			atStart = false
		default:
			return err
		}
	}
}

// SSEReader parses a text/event-stream body into the events a client
// dispatches.
type SSEReader struct {
	br  *bufio.Reader
	max int
	buf []byte // the last event's memory, for the next
}

// NewSSEReader returns an SSEReader; max caps one event's data (<= 0: DefaultMaxFrame).
func NewSSEReader(r io.Reader, max int) *SSEReader {
	if max <= 0 {
		max = DefaultMaxFrame
	}
	return &SSEReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next dispatched event. Comment-only blocks and blocks with
// no data, no id and no retry are skipped, as the SSE specification says. A
// stream that ends in the middle of an event returns io.ErrUnexpectedEOF; an
// event whose data is over the cap is read to its end and refused with
// ErrFrameTooLarge.
func (s *SSEReader) Next() (Event, error) {
	for {
		ev, err := ReadEventInto(s.buf, s.br, s.max+EventSlack, func([]byte) {})
		if cap(ev.Raw) <= MaxIdleBuf {
			s.buf = ev.Raw // Data is copied before it is returned
		}
		switch {
		case ev.Over || len(ev.Data) > s.max:
			return Event{}, ErrFrameTooLarge
		case errors.Is(err, io.EOF) && len(ev.Raw) > 0:
			return Event{}, io.ErrUnexpectedEOF
		case err != nil:
			return Event{}, err
		case ev.HasData || ev.HasID || ev.Retry >= 0:
			ev.Data = append([]byte(nil), ev.Data...)
			return ev.Event, nil
		}
	}
}

// WriteEvent writes one SSE event. Data containing newlines is split into
// several data lines.
func WriteEvent(w io.Writer, ev Event) error {
	var fields [][]byte
	if ev.Event != "" {
		fields = append(fields, fmt.Appendf(nil, "event: %s\n", ev.Event))
	}
	if ev.HasID || ev.ID != "" {
		fields = append(fields, fmt.Appendf(nil, "id: %s\n", ev.ID))
	}
	if ev.Retry > 0 {
		fields = append(fields, fmt.Appendf(nil, "retry: %d\n", ev.Retry))
	}
	return WriteData(w, fields, ev.Data)
}

// StreamData writes an event of fields whose data is one line that write
// produces as it goes (a frame too large to hold, or one cut short): the
// fields, "data: ", what write writes, and the blank line that ends the
// event, unless write fails.
func StreamData(w io.Writer, fields [][]byte, write func(io.Writer) error) error {
	var b bytes.Buffer
	for _, f := range fields {
		b.Write(f)
	}
	b.WriteString("data: ")
	if _, err := w.Write(b.Bytes()); err != nil {
		return err
	}
	if err := write(w); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n\n")
	return err
}

// WriteData writes an event made of fields (lines ending in "\n", as
// [RawEvent.Fields] keeps them) and data, one data line per line of data,
// in one write.
func WriteData(w io.Writer, fields [][]byte, data []byte) error {
	_, err := w.Write(AppendData(nil, fields, data))
	return err
}

// AppendData appends the event WriteData writes to dst, growing it once.
func AppendData(dst []byte, fields [][]byte, data []byte) []byte {
	n := len(data) + 1 + (bytes.Count(data, []byte("\n"))+1)*len("data: \n")
	for _, f := range fields {
		n += len(f)
	}
	dst = slices.Grow(dst, n)
	for _, f := range fields {
		dst = append(dst, f...)
	}
	for rest, more := data, true; more; {
		var line []byte
		line, rest, more = bytes.Cut(rest, []byte("\n"))
		dst = append(append(append(dst, "data: "...), line...), '\n')
	}
	return append(dst, '\n')
}

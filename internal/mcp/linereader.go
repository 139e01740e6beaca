package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// keepEdge is how many bytes of an oversize line's head and tail are kept to
// find the id of the reply that had to be dropped.
const keepEdge = 512

// errOversize is returned by lineReader.next for a line above the cap; the
// line's edges are in head/tail and its length in n.
var errOversize = errors.New("mcp: oversize line")

// lineReader reads NDJSON lines up to max bytes. Unlike a plain line reader it
// remembers the edges of a discarded oversize line, so the client can tell
// which pending request lost its reply. Memory stays bounded by max.
type lineReader struct {
	r          *bufio.Reader
	max        int
	buf        []byte
	head, tail []byte
	n          int64
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its line ending. The slice is valid until
// the following call.
func (l *lineReader) next() ([]byte, error) {
	if cap(l.buf) > 1<<20 {
		l.buf = nil // do not pin a huge buffer after one big line
	}
	l.buf = l.buf[:0]
	over := false
	l.n = 0
	for {
		chunk, err := l.r.ReadSlice('\n')
		l.n += int64(len(chunk))
		if !over && len(l.buf)+len(chunk) > l.max+2 { // room for "\r\n"
			over = true
			h := append(l.buf, chunk...)
			if len(h) > keepEdge {
				h = h[:keepEdge]
			}
			l.head = bytes.Clone(h)
			l.tail = l.tail[:0]
			l.buf = l.buf[:0]
		}
		if over {
			l.tail = append(l.tail, chunk...)
			if len(l.tail) > keepEdge {
				l.tail = append(l.tail[:0], l.tail[len(l.tail)-keepEdge:]...)
			}
		} else {
			l.buf = append(l.buf, chunk...)
		}
		switch {
		case err == nil:
			if over {
				return nil, errOversize
			}
			return l.finish()
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if over {
				return nil, errOversize
			}
			if len(l.buf) > 0 {
				return l.finish()
			}
			return nil, io.EOF
		default:
			return nil, err
		}
	}
}

// finish returns the buffered line, or errOversize when it is over the cap
// once its line ending is removed.
func (l *lineReader) finish() ([]byte, error) {
	line := trimEOL(l.buf)
	if len(line) <= l.max {
		return line, nil
	}
	l.head = bytes.Clone(line[:min(len(line), keepEdge)])
	l.tail = append(l.tail[:0], line[max(0, len(line)-keepEdge):]...)
	return nil, errOversize
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// oversizeID guesses the JSON-RPC id of a frame from its first and last
// bytes: a top-level "id" member before the first nested value, or a final
// `"id":<scalar>` member closing the object (optionally followed by simple
// string members such as "jsonrpc"). It returns nil when unsure.
func oversizeID(head, tail []byte) json.RawMessage {
	if id := headID(head); id != nil {
		return id
	}
	return tailID(bytes.TrimRight(tail, " \t\r\n"))
}

// headID scans top-level members from the start while their values are
// scalars; it stops at the first object/array value (it could be truncated).
func headID(b []byte) json.RawMessage {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil
	}
	i++
	for {
		i = skipWS(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
		}
		key, j, ok := scanString(b, i)
		if !ok {
			return nil
		}
		i = skipWS(b, j)
		if i >= len(b) || b[i] != ':' {
			return nil
		}
		i = skipWS(b, i+1)
		v, j, ok := scanScalar(b, i)
		if !ok {
			return nil
		}
		if string(key) == `"id"` {
			return v
		}
		i = j
	}
}

// tailID looks for `"id":<scalar>` followed only by simple string members and
// the closing brace at the end of the frame.
func tailID(b []byte) json.RawMessage {
	if len(b) == 0 || b[len(b)-1] != '}' {
		return nil
	}
	for from := len(b); ; {
		k := bytes.LastIndex(b[:from], []byte(`"id"`))
		if k < 0 {
			return nil
		}
		from = k
		i := skipWS(b, k+4)
		if i >= len(b) || b[i] != ':' {
			continue
		}
		i = skipWS(b, i+1)
		v, j, ok := scanScalar(b, i)
		if !ok || len(v) == 0 || v[0] == '{' {
			continue
		}
		if restIsSimpleClose(b, j) {
			return v
		}
	}
}

func restIsSimpleClose(b []byte, i int) bool {
	for {
		i = skipWS(b, i)
		if i >= len(b) {
			return false
		}
		if b[i] == '}' {
			return skipWS(b, i+1) == len(b)
		}
		if b[i] != ',' {
			return false
		}
		_, j, ok := scanString(b, skipWS(b, i+1))
		if !ok {
			return false
		}
		i = skipWS(b, j)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		_, j, ok = scanScalar(b, skipWS(b, i+1))
		if !ok {
			return false
		}
		i = j
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString returns the quoted string at b[i:] including quotes.
func scanString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, i, false
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return b[i : j+1], j + 1, true
		}
	}
	return nil, i, false
}

// scanScalar returns a complete string, number, true, false or null at b[i:]
// (only when followed by a delimiter, so a truncated number is rejected).
func scanScalar(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) {
		return nil, i, false
	}
	if b[i] == '"' {
		return scanString(b, i)
	}
	j := i
	for j < len(b) && bytes.IndexByte([]byte("-+.0123456789eEtruefalsn"), b[j]) >= 0 {
		j++
	}
	if j == i || j >= len(b) {
		return nil, i, false
	}
	v := b[i:j]
	if !json.Valid(v) {
		return nil, i, false
	}
	return v, j, true
}

package jsonrpc

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// chunks reads at most n bytes at a time, so lines span reads.
type chunks struct {
	r io.Reader
	n int
}

func (c chunks) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// FuzzLineReaderExact: over any input, cap and read size, the reader gives
// exactly the input's lines (split at "\n", less a trailing "\r"), each
// either whole or, past the cap, refused with its length, its first bytes
// and its last bytes.
func FuzzLineReaderExact(f *testing.F) {
	f.Add([]byte("a\nbb\r\nccc"), 2, 1)
	f.Add(bytes.Repeat([]byte("xy\n"), 30000), 1<<10, 40000)
	f.Add(append(bytes.Repeat([]byte("z"), 200000), "\nw"...), 100, 70000)
	f.Fuzz(func(t *testing.T, b []byte, max, chunk int) {
		if max <= 0 || max > 1<<20 {
			max = 16
		}
		if chunk <= 0 || chunk > 1<<20 {
			chunk = 7
		}
		const edge = 8
		lr := NewLineReader(chunks{bytes.NewReader(b), chunk}, max)
		lr.KeepEdges(edge)
		want := bytes.SplitAfter(b, []byte("\n"))
		if len(want) > 0 && len(want[len(want)-1]) == 0 {
			want = want[:len(want)-1]
		}
		for i := 0; ; i++ {
			line, err := lr.ReadLine()
			if errors.Is(err, io.EOF) {
				if i != len(want) {
					t.Fatalf("EOF after %d lines, want %d", i, len(want))
				}
				return
			}
			if i >= len(want) {
				t.Fatalf("line %d past the input's %d", i, len(want))
			}
			raw := want[i]
			body := trimEOL(raw)
			switch {
			case errors.Is(err, ErrFrameTooLarge):
				n, head, tail := lr.Oversize()
				if len(body) <= max || n != int64(len(raw)) || !bytes.HasPrefix(raw, head) || len(head) < min(edge, len(body)) || len(head) > edge || len(tail) > edge || !bytes.Contains(raw, tail) {
					t.Fatalf("line %d (%d bytes, cap %d) refused: n %d, head %q, tail %q", i, len(raw), max, n, head, tail)
				}
			case err != nil:
				t.Fatal(err)
			case !bytes.Equal(line, body):
				t.Fatalf("line %d = %q, want %q", i, line, body)
			}
		}
	})
}

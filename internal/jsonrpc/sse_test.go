package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
)

// FuzzReadEvent: the events read from any stream give back its bytes
// exactly, in order (an event's Raw, or what went to spill for one past the
// cap), whatever the cap and the reader's buffer; an event past the cap
// holds nothing but its head, and an event within it is as long as its
// bytes allow.
func FuzzReadEvent(f *testing.F) {
	f.Add([]byte("data: x\n\n"), 0, 16)
	f.Add([]byte("id: 1\r\nevent: e\r\ndata: a\r\ndata\r\n\r\n: c\n"), 8, 16)
	f.Add([]byte("data: "+string(bytes.Repeat([]byte("y"), 100))+"\nid: 2\n\ndata: z"), 20, 16)
	f.Fuzz(func(t *testing.T, b []byte, max, size int) {
		if max < 0 || max > 1<<16 {
			max = 0
		}
		br := bufio.NewReaderSize(bytes.NewReader(b), 16+size&0xfff)
		var got bytes.Buffer
		var buf []byte // with an odd size, each event is read where the last one was
		for i := 0; ; i++ {
			ev, err := ReadEventInto(buf, br, max, func(p []byte) { got.Write(p) })
			if ev.Over {
				if len(ev.Raw) > 0 || len(ev.Head) > MaxHead || max == 0 {
					t.Fatalf("event %d past the cap %d: raw %d bytes, head %d", i, max, len(ev.Raw), len(ev.Head))
				}
			} else {
				if max > 0 && len(ev.Raw) > max {
					t.Fatalf("event %d of %d bytes kept under a cap of %d", i, len(ev.Raw), max)
				}
				if d, has := dataOf(ev.Raw); has != ev.HasData || !bytes.Equal(d, ev.Data) {
					t.Fatalf("event %d: data %q (%v), its lines say %q (%v)", i, ev.Data, ev.HasData, d, has)
				}
				raw := bytes.Clone(ev.Raw)
				if _ = append(ev.Data, 'X'); !bytes.Equal(raw, ev.Raw) {
					t.Fatalf("event %d: appending to its data changed its bytes", i)
				}
				got.Write(ev.Raw)
				if size%2 == 1 {
					buf = ev.Raw
				}
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
				break
			}
			if i > len(b) {
				t.Fatal("more events than bytes")
			}
		}
		if !bytes.Equal(got.Bytes(), b) {
			t.Fatalf("read back %q, want %q", got.Bytes(), b)
		}
	})
}

// dataOf is an event's data as its data lines give it, one line at a time.
func dataOf(raw []byte) (data []byte, has bool) {
	for _, line := range bytes.SplitAfter(raw, []byte("\n")) {
		content := bytes.TrimRight(line, "\r\n")
		if name, v := field(content); len(content) > 0 && name == "data" {
			if has {
				data = append(data, '\n')
			}
			data, has = append(data, v...), true
		}
	}
	return data, has
}

// TestReadEventFields: fields parse as the SSE specification says, and
// the lines that are not data are kept for a rewrite.
func TestReadEventFields(t *testing.T) {
	in := "event:message\r\nid: a\x00b\nretry: x\ndata\ndata:  two\n: note\n\n"
	ev, err := ReadEvent(bufio.NewReader(bytes.NewReader([]byte(in))), 0, nil)
	if err != nil || ev.Event.Event != "message" || ev.HasID || ev.Retry != -1 || !ev.HasData || string(ev.Data) != "\n two" || string(ev.Raw) != in {
		t.Fatalf("event %+v, %v", ev, err)
	}
	if want := "event:message\nid: a\x00b\nretry: x\n: note\n"; string(bytes.Join(ev.Fields, nil)) != want {
		t.Fatalf("fields %q, want %q", bytes.Join(ev.Fields, nil), want)
	}
	var out bytes.Buffer
	if err := WriteData(&out, ev.Fields, []byte("1\n2")); err != nil || out.String() != "event:message\nid: a\x00b\nretry: x\n: note\ndata: 1\ndata: 2\n\n" {
		t.Fatalf("rewritten %q, %v", out.String(), err)
	}
}

// TestStreamData: an event streamed through a writer reads back as the one
// WriteData writes in one go.
func TestStreamData(t *testing.T) {
	fields := [][]byte{[]byte("event: message\n")}
	var streamed, whole bytes.Buffer
	if err := StreamData(&streamed, fields, func(w io.Writer) error { _, err := io.WriteString(w, `{"a":1}`); return err }); err != nil {
		t.Fatal(err)
	}
	if err := WriteData(&whole, fields, []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if streamed.String() != whole.String() {
		t.Fatalf("streamed %q, whole %q", streamed.String(), whole.String())
	}
	failed := errors.New("cut")
	if err := StreamData(io.Discard, nil, func(io.Writer) error { return failed }); !errors.Is(err, failed) {
		t.Fatalf("a failing write: %v", err)
	}
}

// BenchmarkReadEvent reads events of one data line, as MCP servers send
// them, from a buffered stream (the proxy's 64 KiB reader).
func BenchmarkReadEvent(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20} {
		ev := []byte("event: message\nid: 7\ndata: " + strings.Repeat("x", size) + "\n\n")
		b.Run(strconv.Itoa(size>>10)+"KiB", func(b *testing.B) {
			b.SetBytes(int64(len(ev)))
			b.ReportAllocs()
			r := bytes.NewReader(ev)
			br := bufio.NewReaderSize(r, 64<<10)
			for b.Loop() {
				r.Reset(ev)
				br.Reset(r)
				got, err := ReadEvent(br, 0, nil)
				if err != nil || len(got.Data) != size {
					b.Fatal(len(got.Data), err)
				}
			}
		})
	}
}

// FuzzAppendData: an event written from any fields and data is the one
// the data's lines make, and reads back as that data.
func FuzzAppendData(f *testing.F) {
	f.Add([]byte(`{"a":1}`), "event: message\n")
	f.Add([]byte("1\n\n2\n"), "")
	f.Add([]byte(""), ": c\nid: 7\n")
	f.Fuzz(func(t *testing.T, data []byte, fields string) {
		var fl [][]byte
		for _, l := range strings.SplitAfter(fields, "\n") {
			// Fields as an event keeps them: whole lines, neither blank
			// (which would end the event) nor data.
			content := bytes.TrimRight([]byte(l), "\r\n")
			if name, _ := field(content); strings.HasSuffix(l, "\n") && len(content) > 0 && name != "data" {
				fl = append(fl, []byte(l))
			}
		}
		var want bytes.Buffer
		for _, l := range fl {
			want.Write(l)
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			want.WriteString("data: " + string(line) + "\n")
		}
		want.WriteString("\n")
		out := AppendData([]byte("x"), fl, data)
		if !bytes.Equal(out[1:], want.Bytes()) || out[0] != 'x' {
			t.Fatalf("appended %q, want x%q", out, want.Bytes())
		}
		if bytes.ContainsAny(data, "\r") || strings.ContainsAny(fields, "\r") {
			return // a line's \r ends it too
		}
		ev, err := ReadEvent(bufio.NewReader(bytes.NewReader(out[1:])), 0, nil)
		if err != nil || !bytes.Equal(ev.Data, data) && len(data)+len(ev.Data) > 0 || !bytes.Equal(ev.Raw, out[1:]) {
			t.Fatalf("read back %q (%v), want %q", ev.Data, err, data)
		}
	})
}

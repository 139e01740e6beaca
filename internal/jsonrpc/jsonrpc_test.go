package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestPeekFrame(t *testing.T) {
	tests := []struct {
		name, in   string
		kind       Kind
		id, method string
		tool       string
		wantErr    bool
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, KindRequest, "1", "tools/list", "", false},
		{"call", `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"arguments":{"name":"x"},"name":"echo"}}`, KindRequest, `"a"`, "tools/call", "echo", false},
		{"escaped tool", `{"method":"tools/call","id":2,"params":{"name":"e\u0063ho"}}`, KindRequest, "2", "tools/call", "echo", false},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, KindNotification, "", "notifications/initialized", "", false},
		{"response", `{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}`, KindResponse, "7", "", "", false},
		{"error", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, KindError, "", "", "", false},
		{"batch", `[{"jsonrpc":"2.0"}]`, KindBatch, "", "", "", false},
		{"whitespace", " \t{ \"id\" : 3 , \"result\" : [ 1 , \"]\" ] }", KindResponse, "3", "", "", false},
		{"not object", `"hello"`, KindInvalid, "", "", "", true},
		{"truncated", `{"jsonrpc":"2.0","id":1,"result":{"a":`, KindInvalid, "", "", "", true},
		{"empty", ``, KindInvalid, "", "", "", true},
		{"invalid kind", `{"jsonrpc":"2.0"}`, KindInvalid, "", "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := PeekFrame([]byte(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if p.Kind != tc.kind || string(p.ID) != tc.id || p.Method != tc.method || p.Tool != tc.tool {
				t.Errorf("got kind=%v id=%s method=%q tool=%q", p.Kind, p.ID, p.Method, p.Tool)
			}
		})
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	b, err := NewRequest(5, "tools/call", map[string]any{"name": "x"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind() != KindRequest || m.Method != "tools/call" || string(m.ID) != "5" {
		t.Fatalf("round trip: %+v", m)
	}
	e, _ := NewErrorResponse(nil, &Error{Code: CodeParseError, Message: "bad"})
	if !bytes.Contains(e, []byte(`-32700`)) || bytes.Contains(e, []byte(`"id"`)) {
		t.Fatalf("error response: %s", e)
	}
	if IDKey(json.RawMessage("1")) != IDKey(json.RawMessage("1.0")) || IDKey(json.RawMessage(`"a"`)) == IDKey(json.RawMessage("1")) {
		t.Fatal("IDKey does not canonicalise")
	}
}

func TestLineReader(t *testing.T) {
	big := strings.Repeat("x", 300<<10)
	in := "a\r\n" + big + "\n" + strings.Repeat("y", 50) + "\nlast"
	lr := NewLineReader(strings.NewReader(in), 100<<10)
	want := []struct {
		line string
		err  error
	}{{"a", nil}, {"", ErrFrameTooLarge}, {strings.Repeat("y", 50), nil}, {"last", nil}, {"", io.EOF}}
	for i, w := range want {
		got, err := lr.ReadLine()
		if !errors.Is(err, w.err) && !(err == nil && w.err == nil) {
			t.Fatalf("%d: err = %v, want %v", i, err, w.err)
		}
		if err == nil && string(got) != w.line {
			t.Fatalf("%d: got %q", i, got)
		}
	}
	// The cap applies to the content, whatever the terminator.
	for _, tc := range []struct {
		in   string
		want error
	}{
		{strings.Repeat("z", 1000) + "\n", nil},
		{strings.Repeat("z", 1000) + "\r\n", nil},
		{strings.Repeat("z", 1000), nil},
		{strings.Repeat("z", 1001), ErrFrameTooLarge},
		{strings.Repeat("z", 1001) + "\n", ErrFrameTooLarge},
		{strings.Repeat("z", 1001) + "\r\n", ErrFrameTooLarge},
	} {
		got, err := NewLineReader(strings.NewReader(tc.in), 1000).ReadLine()
		if !errors.Is(err, tc.want) && !(err == nil && tc.want == nil) {
			t.Errorf("%d bytes: err %v, want %v", len(tc.in), err, tc.want)
		}
		if err == nil && len(got) != 1000 {
			t.Errorf("%d bytes: line of %d", len(tc.in), len(got))
		}
	}
}

func TestLineReaderOversize(t *testing.T) {
	long := "<" + strings.Repeat("m", 200<<10) + ">"
	tests := []struct {
		name, in   string
		edge       int
		n          int64
		head, tail string
	}{
		{"long line, edges kept", long + "\r\n", 4, int64(len(long) + 2), "<mmm", "m>\r\n"},
		{"long final line", long, 3, int64(len(long)), "<mm", "mm>"},
		{"just over the cap", strings.Repeat("a", 9) + "bc", 2, 11, "aa", "bc"},
		{"edges wider than the line", "0123456789ab\n", 100, 13, "0123456789ab\n", "0123456789ab\n"},
		{"edges off", long + "\n", 0, int64(len(long) + 1), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			if strings.HasSuffix(in, "\n") {
				in += "next\n"
			}
			lr := NewLineReader(strings.NewReader(in), 10)
			lr.KeepEdges(tt.edge)
			if _, err := lr.ReadLine(); !errors.Is(err, ErrFrameTooLarge) {
				t.Fatalf("err = %v, want ErrFrameTooLarge", err)
			}
			n, head, tail := lr.Oversize()
			if n != tt.n || string(head) != tt.head || string(tail) != tt.tail {
				t.Fatalf("Oversize() = %d %q %q, want %d %q %q", n, head, tail, tt.n, tt.head, tt.tail)
			}
			if in != tt.in {
				if line, err := lr.ReadLine(); err != nil || string(line) != "next" {
					t.Fatalf("after the long line: %q %v", line, err)
				}
			}
		})
	}
}

func TestSSEReader(t *testing.T) {
	in := ": comment\n\nevent: endpoint\ndata: /messages?s=1\n\nid: 7\nretry: 300\ndata: {\"a\":\ndata: 1}\n\nid: 8\ndata:\n\ndata: partial"
	r := NewSSEReader(strings.NewReader(in), 0)
	ev, err := r.Next()
	if err != nil || ev.Event != "endpoint" || string(ev.Data) != "/messages?s=1" {
		t.Fatalf("endpoint event: %+v %v", ev, err)
	}
	ev, err = r.Next()
	if err != nil || ev.ID != "7" || ev.Retry != 300 || string(ev.Data) != "{\"a\":\n1}" {
		t.Fatalf("data event: %+v %v", ev, err)
	}
	ev, err = r.Next()
	if err != nil || ev.ID != "8" || !ev.HasID || len(ev.Data) != 0 {
		t.Fatalf("priming event: %+v %v", ev, err)
	}
	if _, err = r.Next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut event: %v", err)
	}
	var buf bytes.Buffer
	if err := WriteEvent(&buf, Event{ID: "1", Data: []byte("a\nb"), Retry: -1}); err != nil {
		t.Fatal(err)
	}
	back, err := NewSSEReader(&buf, 0).Next()
	if err != nil || string(back.Data) != "a\nb" || back.ID != "1" {
		t.Fatalf("write/read: %+v %v", back, err)
	}
}

func FuzzPeekFrame(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`, `{"id":"a","result":{}}`, `[1]`, `{"a":"\"}`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := PeekFrame(b)
		if err != nil {
			return
		}
		// Whenever the full decoder accepts an object, peek must agree on method and id.
		var m Message
		if json.Unmarshal(b, &m) == nil && p.Kind != KindBatch && !p.Ambiguous {
			if m.Method != p.Method {
				t.Fatalf("method: peek %q decode %q", p.Method, m.Method)
			}
			if (len(m.ID) > 0 && string(m.ID) != "null") != (p.ID != nil) {
				t.Fatalf("id presence: peek %s decode %s", p.ID, m.ID)
			}
		}
	})
}

func FuzzSSEReader(f *testing.F) {
	f.Add([]byte("data: x\n\n"))
	f.Add([]byte("id: 1\nevent: e\ndata: a\ndata: b\n\n:c\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewSSEReader(bytes.NewReader(b), 1<<12)
		for i := 0; i < 1000; i++ {
			if _, err := r.Next(); err != nil {
				return
			}
		}
	})
}

func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nbb\r\nccc"), 2)
	f.Fuzz(func(t *testing.T, b []byte, max int) {
		if max <= 0 || max > 1<<16 {
			max = 16
		}
		lr := NewLineReader(bytes.NewReader(b), max)
		lr.KeepEdges(8)
		total := 0
		for _, line := range readLines(t, lr, func() string {
			n, head, tail := lr.Oversize()
			if n <= int64(max) || len(head) > 8 || len(tail) > 8 || !bytes.Contains(b, head) || !bytes.Contains(b, tail) {
				t.Fatalf("oversize line: n %d, head %q, tail %q", n, head, tail)
			}
			return ""
		}) {
			if len(line) > max {
				t.Fatalf("line of %d over cap %d", len(line), max)
			}
			total += len(line)
		}
		if total > len(b) {
			t.Fatalf("read %d bytes from %d", total, len(b))
		}
	})
}

func BenchmarkPeekFrame(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20} {
		text := strings.Repeat(`lorem ipsum dolor sit amet, consectetur \n adipiscing elit sed do eiusmod tempor. `, size/80)
		frame := []byte(`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"` + text + `"}],"structuredContent":{"rows":[1,2,3]}},"id":42}`)
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(frame)))
			for b.Loop() {
				p, err := PeekFrame(frame)
				if err != nil || string(p.ID) != "42" {
					b.Fatal(p, err)
				}
			}
		})
	}
}

package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestOversizeID(t *testing.T) {
	tests := []struct {
		name, head, tail, want string
	}{
		{"id first", `{"jsonrpc":"2.0","id":7,"result":{"x":"`, `"}}`, "7"},
		{"string id", `{"id":"a\"b","result":`, `}`, `"a\"b"`},
		{"id last", `{"result":{"t":"xxx`, `xx","id":{"id":1}}},"jsonrpc":"2.0","id":12}`, "12"},
		{"id last then jsonrpc", `{"result":[`, `],"id":"q","jsonrpc":"2.0"}` + "\n", `"q"`},
		{"id null", `{"id":null,"error":{"code":`, `}}`, "null"},
		{"spaced", ` { "jsonrpc" : "2.0" , "id" : -3 , "result" : [`, `]}`, "-3"},
		{"number cut by the edge", `{"id":12`, `]}`, ""},
		{"nested id only", `{"result":{"id":3,`, `"x":{"id":4}}}`, ""},
		{"none", `{"result":`, `]]]`, ""},
		{"not object", `[1,2`, `3]`, ""},
	}
	for _, tt := range tests {
		id, reply := OversizeID([]byte(tt.head), []byte(tt.tail))
		if string(id) != tt.want || !reply {
			t.Errorf("%s: got %q %v want %q, a reply", tt.name, id, reply, tt.want)
		}
	}
	for _, tt := range []struct{ name, head, tail string }{
		{"request, method first", `{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"x":"`, `"}}`},
		{"request, method last", `{"jsonrpc":"2.0","id":3,"params":{"x":"`, `"}},"method":"sampling/createMessage"}`},
		{"request, id and method last", `{"params":{"x":"`, `"}},"id":3,"method":"elicitation/create","jsonrpc":"2.0"}`},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"`, `"}}`},
	} {
		if id, reply := OversizeID([]byte(tt.head), []byte(tt.tail)); reply || id != nil {
			t.Errorf("%s: got %q, a reply", tt.name, id)
		}
	}
}

// TestOversizeIDFromLineReader: the id of a line the reader refuses is
// found from the edges it keeps.
func TestOversizeIDFromLineReader(t *testing.T) {
	in := "short\n" + strings.Repeat("y", 100) + "\r\n" + `{"id":5,"a":"` + strings.Repeat("z", 50) + "\"}\n" +
		`{"a":"` + strings.Repeat("z", 2*OversizeEdge) + `","id":"last"}` + "\nlast"
	lr := NewLineReader(strings.NewReader(in), 60)
	lr.KeepEdges(OversizeEdge)
	got := readLines(t, lr, func() string {
		_, head, tail := lr.Oversize()
		id, _ := OversizeID(head, tail)
		return "OVER:" + string(id)
	})
	want := []string{"short", "OVER:", "OVER:5", `OVER:"last"`, "last"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q want %q", got, want)
	}
}

// FuzzOversizeID: any edges give nil or a JSON scalar; the id of a reply
// written with its id first or last is found from edges of any width that
// hold the id and the members around it whole, and a request written so
// is never taken for a reply.
func FuzzOversizeID(f *testing.F) {
	f.Add([]byte(`{"id":1,"result":`), []byte(`,"id":2}`), "x", 16)
	f.Add([]byte(`{"result":"`), []byte(`"id":"x","jsonrpc":"2.0"}`), `a"b`, 3)
	f.Fuzz(func(t *testing.T, head, tail []byte, id string, edge int) {
		if got, _ := OversizeID(head, tail); got != nil && (!json.Valid(got) || got[0] == '{' || got[0] == '[') {
			t.Fatalf("not a scalar id: %q", got)
		}
		raw, _ := json.Marshal(id)
		payload, _ := json.Marshal(map[string]string{"blob": strings.Repeat(id, 3)})
		first := []byte(`{"jsonrpc":"2.0","id":` + string(raw) + `,"result":` + string(payload) + `}`)
		last := []byte(`{"result":` + string(payload) + `,"id":` + string(raw) + `,"jsonrpc":"2.0"}`)
		// Room for the members around the id, and 1 to 511 bytes to spare.
		edge = edge%256 + 256 + len(raw) + len(`{"jsonrpc":"2.0","id":,`)
		edges := func(frame []byte) ([]byte, []byte) {
			return frame[:min(edge, len(frame))], frame[max(0, len(frame)-edge):]
		}
		for _, frame := range [][]byte{first, last} {
			if got, reply := OversizeID(edges(frame)); !bytes.Equal(got, raw) || !reply {
				t.Fatalf("%s with edges of %d: id %q (a reply: %v), want %q", frame, edge, got, reply, raw)
			}
		}
		edge += len(`"method":"m",`) // a request's edges hold its method too
		for _, frame := range [][]byte{
			[]byte(`{"jsonrpc":"2.0","id":` + string(raw) + `,"method":"m","params":` + string(payload) + `}`),
			[]byte(`{"params":` + string(payload) + `,"id":` + string(raw) + `,"method":"m"}`),
		} {
			if got, reply := OversizeID(edges(frame)); reply {
				t.Fatalf("%s with edges of %d: a reply, id %q", frame, edge, got)
			}
		}
	})
}

// TestLineReaderGrowsToItsCap: a line the reader refuses never grows its
// buffer past the cap (and one read), however long the line; one just
// under the cap still fits.
func TestLineReaderGrowsToItsCap(t *testing.T) {
	const max = 1 << 20
	for _, n := range []int{max, 10 * max} {
		lr := NewLineReader(io.MultiReader(strings.NewReader(strings.Repeat("x", n)+"\r\n"), strings.NewReader("next\n")), max)
		line, err := lr.ReadLine()
		if n <= max && (err != nil || len(line) != n) || n > max && !errors.Is(err, ErrFrameTooLarge) {
			t.Fatalf("a line of %d: %d bytes, %v", n, len(line), err)
		}
		if got := len(lr.lb.Buf); got > max+2+minRead {
			t.Fatalf("a line of %d grew the buffer to %d bytes, past the cap of %d", n, got, max)
		}
		if line, err := lr.ReadLine(); err != nil || string(line) != "next" {
			t.Fatalf("after a line of %d: %q %v", n, line, err)
		}
	}
}

// readLines reads lr to its end: each line, and for each line over the cap
// what over says of it.
func readLines(t *testing.T, lr *LineReader, over func() string) []string {
	t.Helper()
	var out []string
	for {
		line, err := lr.ReadLine()
		switch {
		case errors.Is(err, io.EOF):
			return out
		case errors.Is(err, ErrFrameTooLarge):
			out = append(out, over())
		case err != nil:
			t.Fatal(err)
		default:
			out = append(out, string(line))
		}
	}
}

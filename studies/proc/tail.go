package proc

import (
	"strings"
	"sync"
)

// Tail is an io.Writer that keeps the last Max lines written to it, each
// cut at 1,000 bytes (and a line still open at 4,096), so that whatever a
// program prints costs bounded memory. It is safe for concurrent use.
type Tail struct {
	// Max is how many lines are kept.
	Max int

	mu      sync.Mutex
	partial string
	lines   []string
}

// Write implements io.Writer; it never fails.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.partial + string(p)
	parts := strings.Split(s, "\n")
	t.partial = parts[len(parts)-1]
	if len(t.partial) > 4096 {
		t.partial = t.partial[:4096]
	}
	for _, line := range parts[:len(parts)-1] {
		if len(line) > 1000 {
			line = line[:1000]
		}
		t.lines = append(t.lines, line)
		if len(t.lines) > t.Max {
			t.lines = t.lines[len(t.lines)-t.Max:]
		}
	}
	return len(p), nil
}

// Lines returns the lines kept, the unfinished last one included.
func (t *Tail) Lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]string(nil), t.lines...)
	if t.partial != "" {
		out = append(out, t.partial)
	}
	return out
}

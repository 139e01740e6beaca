package clientdrill

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// The application's report: JSON lines on the client's standard output,
// one per tools/call step, in step order. Every other line is ignored.
//
//	{"call": "lookup", "outcome": "ok", "value": <what the application got>}
//	{"call": "lookup", "outcome": "error", "error": "<message>"}
//	{"call": "lookup", "outcome": "timeout"}
//
// "step" (1-based among the tools/call steps) may say which step a line
// reports; without it the n-th line reports the n-th call step.

// Limits of the reader.
const (
	maxLine    = 32 << 20
	maxRecords = 1000
)

// Application outcomes of one call.
const (
	appOK      = "ok"
	appError   = "error"
	appTimeout = "timeout"
)

// record is one line of the application's report.
type record struct {
	step    int // 0-based among the call steps
	call    string
	outcome string
	// found holds the scenario's markers the line carried.
	found map[string]bool
}

// appLine is a line's decoded form.
type appLine struct {
	Call    string          `json:"call"`
	Step    int             `json:"step"`
	Outcome string          `json:"outcome"`
	Value   json.RawMessage `json:"value"`
	Error   json.RawMessage `json:"error"`
}

// parseLine decodes one line of the report; ok is false for a line that is
// not one (a log line, an object without call or a known outcome).
func parseLine(line []byte, marks []string) (record, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return record{}, false
	}
	var l appLine
	if json.Unmarshal(line, &l) != nil || l.Call == "" {
		return record{}, false
	}
	switch l.Outcome {
	case appOK, appError, appTimeout:
	default:
		return record{}, false
	}
	r := record{step: l.Step - 1, call: l.Call, outcome: l.Outcome, found: map[string]bool{}}
	for _, m := range marks {
		if m != "" && bytes.Contains(line, []byte(m)) {
			r.found[m] = true
		}
	}
	return r, true
}

// readReport reads the client's standard output until it ends, sending each
// report line on out; a line over maxLine is skipped, and at most maxRecords
// are sent.
func readReport(r io.Reader, marks []string, out chan<- record) error {
	defer close(out)
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	n, calls := 0, 0
	skipping := false
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case skipping:
		case len(buf)+len(chunk) > maxLine:
			skipping, buf = true, nil
		default:
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if !skipping && len(buf) > 0 && n < maxRecords {
			if rec, ok := parseLine(buf, marks); ok {
				if rec.step < 0 {
					rec.step = calls
				}
				calls++
				n++
				out <- rec
			}
		}
		buf, skipping = buf[:0], false
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

package report

import (
	"bytes"
	"encoding/json"
	"slices"
)

// ToolLines finds where each tool is declared in a manifest or a drift
// capture (a tools/list result, a bare tools array, a JSON-RPC response
// frame): the 1-based line of the opening brace of the object, in a "tools"
// array or the top-level array, whose "name" is the tool. The first entry of
// a name wins. A file that is not JSON yields what was read before the fault.
func ToolLines(data []byte) map[string]int {
	out := map[string]int{}
	lines := &lineCounter{data: data}
	walkJSON(data, func(path []string, obj int64, name string) {
		n := len(path)
		if n >= 2 && path[n-1] == "name" && path[n-2] == "[]" && (n == 2 || path[n-3] == "tools") {
			if _, seen := out[name]; !seen {
				out[name] = lines.at(obj)
			}
		}
	})
	return out
}

// lineCounter gives the 1-based line of byte offsets in data. The walk asks
// for offsets in increasing order, so each question counts only the bytes
// since the previous one: a document's lines cost one pass, not one pass per
// tool (100,000 tools on one line would otherwise count 10^12 bytes).
type lineCounter struct {
	data []byte
	off  int64 // the offset last asked for
	line int   // newlines before off
}

func (c *lineCounter) at(off int64) int {
	off = min(max(off, 0), int64(len(c.data)))
	if off < c.off { // not expected of the walk; start again
		c.off, c.line = 0, 0
	}
	c.line += bytes.Count(c.data[c.off:off], []byte{'\n'})
	c.off = off
	return c.line + 1
}

// walkJSON reads data token by token. str is called for each string value
// with its path (member names, "[]" for array elements) and the offset of
// the object holding it.
func walkJSON(data []byte, str func(path []string, obj int64, s string)) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var path []string
	var objs []int64
	// value reads the value that starts with tok.
	var value func(tok json.Token) bool
	value = func(tok json.Token) bool {
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				objs = append(objs, dec.InputOffset()-1)
				for dec.More() {
					k, err := dec.Token()
					if err != nil {
						return false
					}
					name, _ := k.(string)
					path = append(path, name)
					v, err := dec.Token()
					if err != nil || !value(v) {
						return false
					}
					path = path[:len(path)-1]
				}
				objs = objs[:len(objs)-1]
			case '[':
				path = append(path, "[]")
				for dec.More() {
					v, err := dec.Token()
					if err != nil || !value(v) {
						return false
					}
				}
				path = path[:len(path)-1]
			}
			_, err := dec.Token() // the closing delimiter
			return err == nil
		case string:
			if str != nil && len(objs) > 0 {
				str(slices.Clip(path), objs[len(objs)-1], t)
			}
		}
		return true
	}
	if tok, err := dec.Token(); err == nil {
		value(tok)
	}
}

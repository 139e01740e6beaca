package jsonvalue

import (
	"bytes"
	"encoding/json"
)

// MemberLines finds the 1-based line of each member name of the object
// at path in the JSON document data (path holds member names from the top
// level: ["mcpServers"], ["projects", "/home/u/app", "mcpServers"]): the
// line of the member's name, the first of a repeated name. data must be
// plain JSON; a caller with comments blanks them first, keeping offsets
// and line breaks, so that the lines are the file's. A document that is
// not JSON yields what was read before the fault.
func MemberLines(data []byte, path ...string) map[string]int {
	out := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var at []string
	match := func() bool {
		if len(at) != len(path) {
			return false
		}
		for i := range at {
			if at[i] != path[i] {
				return false
			}
		}
		return true
	}
	var value func(tok json.Token) bool
	value = func(tok json.Token) bool {
		d, ok := tok.(json.Delim)
		if !ok {
			return true
		}
		if len(at) >= MaxJSONDepth {
			return false
		}
		switch d {
		case '{':
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return false
				}
				name, _ := k.(string)
				if match() {
					if _, seen := out[name]; !seen {
						out[name] = lineAt(data, dec.InputOffset()-1)
					}
				}
				at = append(at, name)
				v, err := dec.Token()
				if err != nil || !value(v) {
					return false
				}
				at = at[:len(at)-1]
			}
		case '[':
			at = append(at, "\x00[]") // no member name is this
			for dec.More() {
				v, err := dec.Token()
				if err != nil || !value(v) {
					return false
				}
			}
			at = at[:len(at)-1]
		}
		_, err := dec.Token() // the closing delimiter
		return err == nil
	}
	if tok, err := dec.Token(); err == nil {
		value(tok)
	}
	return out
}

// lineAt is the 1-based line of byte offset off.
func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

package jsonvalue

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// RepeatedKey finds the first object member name that repeats within one
// object of the JSON document data, in document order, looking no deeper
// than depth levels of objects (1: the top-level object's members only;
// depth <= 0: every object). It returns the JSON pointer of the repeated
// member ("/mcpServers/github") and true, or "" and false when no name
// repeats. A parser keeps the last of a repeated name, and another keeps
// the first: a file the user hands mcpdrill is refused rather than read one
// way when it was written to be read the other.
//
// Member names are compared after unescaping ("a" and "\u0061" repeat).
// data that is not JSON yields what was read before the fault; nesting
// beyond MaxJSONDepth is not looked into.
func RepeatedKey(data []byte, depth int) (string, bool) {
	if depth <= 0 || depth > MaxJSONDepth {
		depth = MaxJSONDepth
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var path []string
	// value reads the value that starts with tok at objects levels of
	// objects; it returns the pointer of a repeat, or "" and whether the
	// document can still be read.
	var value func(tok json.Token, objects int) (string, bool)
	value = func(tok json.Token, objects int) (string, bool) {
		d, ok := tok.(json.Delim)
		if !ok {
			return "", true
		}
		if len(path) >= MaxJSONDepth {
			return "", false
		}
		switch d {
		case '{':
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return "", false
				}
				name, _ := k.(string)
				if objects < depth && seen[name] {
					return pointerOf(append(path, name)), false
				}
				seen[name] = true
				path = append(path, name)
				v, err := dec.Token()
				if err != nil {
					return "", false
				}
				if p, ok := value(v, objects+1); !ok {
					return p, false
				}
				path = path[:len(path)-1]
			}
		case '[':
			for i := 0; dec.More(); i++ {
				v, err := dec.Token()
				if err != nil {
					return "", false
				}
				path = append(path, strconv.Itoa(i))
				if p, ok := value(v, objects); !ok {
					return p, false
				}
				path = path[:len(path)-1]
			}
		}
		_, err := dec.Token() // the closing delimiter
		return "", err == nil
	}
	tok, err := dec.Token()
	if err != nil {
		return "", false
	}
	p, _ := value(tok, 0)
	return p, p != ""
}

// pointerOf writes tokens as a JSON pointer.
func pointerOf(tokens []string) string {
	p := ""
	for _, t := range tokens {
		p = PointerAppend(p, t)
	}
	return p
}

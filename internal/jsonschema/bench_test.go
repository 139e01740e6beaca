package jsonschema

import "testing"

// BenchmarkCorrupt corrupts a mid-sized decoded payload.
func BenchmarkCorrupt(b *testing.B) {
	v := mustDecode(b, `{"hits":[{"id":"a","score":1.5,"tags":["x","y"],"ok":true},{"id":"b","score":2,"tags":[],"ok":false}],"total":2,"next":null}`)
	for b.Loop() {
		Corrupt(v)
	}
}

package jsonschema

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkAssess assesses the realistic golden schemas.
func BenchmarkAssess(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join("testdata", "assess", "*.json"))
	var raws [][]byte
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		raws = append(raws, raw)
	}
	for b.Loop() {
		for _, raw := range raws {
			Assess(raw)
		}
	}
}

// BenchmarkCorrupt corrupts a mid-sized decoded payload.
func BenchmarkCorrupt(b *testing.B) {
	v := mustDecode(b, `{"hits":[{"id":"a","score":1.5,"tags":["x","y"],"ok":true},{"id":"b","score":2,"tags":[],"ok":false}],"total":2,"next":null}`)
	for b.Loop() {
		Corrupt(v)
	}
}

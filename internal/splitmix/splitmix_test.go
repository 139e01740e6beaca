package splitmix

import "testing"

// TestKnownValues pins the stream of seed 0 to SplitMix64's published
// first outputs, so a change here cannot pass unnoticed.
func TestKnownValues(t *testing.T) {
	var s uint64
	for i, want := range []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f} {
		if got := Next(&s); got != want {
			t.Fatalf("value %d: %#x, want %#x", i, got, want)
		}
	}
}

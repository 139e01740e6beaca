package faults

import (
	"errors"
	"strings"
	"testing"
)

// TestDecodeObjectCap (F2): a frame of more containers than a fault
// rewrites is not decoded; a fault on it is not applied, and says why.
func TestDecodeObjectCap(t *testing.T) {
	small := `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}]}}`
	if _, err := decodeObject([]byte(small)); err != nil {
		t.Fatal(err)
	}
	big := `{"jsonrpc":"2.0","id":1,"result":{"tools":[` + strings.TrimSuffix(strings.Repeat(`{"name":"t"},`, maxDecodeContainers), ",") + `]}}`
	if _, err := decodeObject([]byte(big)); !errors.Is(err, errTooManyValues) {
		t.Fatalf("a frame of %d objects: %v", maxDecodeContainers+2, err)
	}
	a := mutatePayload(&Frame{Raw: []byte(big), Kind: KindResponse}, FaultCorrupt, nil)
	if a.Kind != Forward || !strings.Contains(a.Note, "too many") {
		t.Fatalf("corrupt on a huge frame: %v %q", a.Kind, a.Note)
	}
}

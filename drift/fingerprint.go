package drift

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

// fingerprintObject is the part of a tool the fingerprint covers.
func fingerprintObject(t mcp.Tool) map[string]any {
	return map[string]any{
		"name":         t.Name,
		"description":  t.Description,
		"inputSchema":  t.InputSchemaValue(),
		"outputSchema": t.OutputSchemaValue(),
	}
}

// ToolFingerprint is the fingerprint of one tool: "sha256:" followed by the
// lowercase hex SHA-256 of the canonical JSON of the object
// {"name", "description", "inputSchema", "outputSchema"} (a missing
// description is "", a missing schema is null).
func ToolFingerprint(t mcp.Tool) string {
	sum := sha256.Sum256(canonical(fingerprintObject(t)))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Fingerprint is the order-independent fingerprint of a tool set: "sha256:"
// followed by the lowercase hex SHA-256 of a canonical JSON array holding,
// for every tool, the object {"name", "description", "inputSchema",
// "outputSchema"}, sorted by name and then by the bytes of the tool's
// canonical encoding. Object key order, tool order and number spelling do
// not change it; array order inside a schema (enum, required) does. Titles
// and annotations are left out on purpose: they are display data and
// untrusted hints, and servers vary them between connections.
func Fingerprint(tools []mcp.Tool) string {
	type entry struct {
		name string
		enc  []byte
	}
	es := make([]entry, len(tools))
	for i, t := range tools {
		es[i] = entry{t.Name, canonical(fingerprintObject(t))}
	}
	slices.SortFunc(es, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.name, b.name), bytes.Compare(a.enc, b.enc))
	})
	var b bytes.Buffer
	b.WriteByte('[')
	for i, e := range es {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e.enc)
	}
	b.WriteByte(']')
	sum := sha256.Sum256(b.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:])
}

func hexSum(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

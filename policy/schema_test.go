package policy

import (
	"strings"
	"testing"
)

// TestSchemaCache: a schema is compiled once per policy by its exact
// bytes (a byte more is another schema), a schema that does not compile
// stays refused, and the cache stops growing at its bound.
func TestSchemaCache(t *testing.T) {
	c := newSchemaCache()
	raw := []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	a, err := c.compile(raw)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := c.compile(raw); b != a {
		t.Error("the same bytes were compiled twice")
	}
	if b, _ := c.compile(append([]byte(" "), raw...)); b == a || b == nil {
		t.Errorf("other bytes got %p, the cached schema is %p", b, a)
	}
	bad := []byte(`{"$ref":"#/$defs/missing"}`)
	for range 2 {
		if s, err := c.compile(bad); err == nil || s != nil {
			t.Errorf("an unresolvable $ref compiled: %v", err)
		}
	}
	big := []byte(`{"description":"` + strings.Repeat("x", maxCachedSchemaBytes) + `"}`)
	n := len(c.m)
	if _, err := c.compile(big); err != nil {
		t.Fatal(err)
	}
	if len(c.m) != n || c.bytes > maxCachedSchemaBytes {
		t.Errorf("past the bound: %d schemas (was %d), %d bytes", len(c.m), n, c.bytes)
	}
}

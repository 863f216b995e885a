package policy

import (
	"bytes"
	"runtime"
	"strconv"
	"testing"
)

// TestEgressRewritesBounded: a result of many short strings that each lose
// an escape sequence yields at most MaxRewrites records and one "(more)"
// record that counts the rest, and the heap Egress grows by stays a small
// multiple of the message (a record per string once cost several times it).
func TestEgressRewritesBounded(t *testing.T) {
	const strs = 200000
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"rows":[`)
	for i := range strs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"\u001b[31m` + strconv.Itoa(i%10) + `"`)
	}
	b.WriteString(`]}}}`)
	m := mustParse(t, b.String())
	s := Baseline().NewSession()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out, rw, err := s.Egress(m, &Call{Method: "tools/call", Tool: "x"})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(rw) != MaxRewrites+1 {
		t.Fatalf("%d rewrite records, want %d", len(rw), MaxRewrites+1)
	}
	more := rw[len(rw)-1]
	if more.Field != "(more)" || more.Fields != strs-MaxRewrites || more.Removed != (strs-MaxRewrites)*5 {
		t.Errorf("summary record %+v", more)
	}
	if bytes.Contains(out, []byte(`\u001b`)) {
		t.Error("an escape survived")
	}
	grown := after.TotalAlloc - before.TotalAlloc
	t.Logf("message %d bytes, Egress allocated %d", len(m.Raw), grown)
	if limit := uint64(6 * len(m.Raw)); grown > limit {
		t.Errorf("Egress allocated %d bytes for a %d-byte message (limit %d)", grown, len(m.Raw), limit)
	}
}

package policy

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
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

// TestLargeMessageProbe: a message of probeFirst bytes or more is read
// once without writing to find its first change, and written only then.
// Whatever string changes (the first, one in the middle, the last, a
// member name, none), the result is what a message read once gives, and
// a message nothing changes costs no copy of itself.
func TestLargeMessageProbe(t *testing.T) {
	const strs = 200_000 // about 1.2 MiB
	build := func(at int, unit string) string {
		var b bytes.Buffer
		b.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"rows":[`)
		for i := range strs {
			if i > 0 {
				b.WriteByte(',')
			}
			if i == at {
				b.WriteString(unit)
				continue
			}
			b.WriteString(`"row"`)
		}
		b.WriteString(`]}}}`)
		return b.String()
	}
	p := Baseline()
	for _, at := range []int{0, strs / 2, strs - 1} {
		in := build(at, `"\u001b[31mred"`)
		if len(in) < probeFirst {
			t.Fatalf("the message is %d bytes, under probeFirst", len(in))
		}
		out, rws := egressOf(t, p, "tools/call", "x", in)
		if want := strings.Replace(in, `"\u001b[31mred"`, `"red"`, 1); out != want || len(rws) != 1 {
			t.Errorf("string %d: %d rewrites, output differs from the one change: %v", at, len(rws), out != want)
		}
	}
	in := build(strs/2, `{"a\u200b":1,"a":2}`)
	m := mustParse(t, in)
	if _, _, err := p.NewSession().Egress(m, &Call{Method: "tools/call", Tool: "x"}); err == nil || !strings.Contains(err.Error(), "member names") {
		t.Errorf("member names that canonicalise alike: %v", err)
	}
	// One large string the links filter reads and keeps: its copy for
	// the filter is the only one.
	in = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"<style>` + strings.Repeat("p{}", probeFirst/3) + `</style>"}]}}`
	m = mustParse(t, in)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, rws, err := p.NewSession().Egress(m, &Call{Method: "tools/call", Tool: "x"})
	runtime.ReadMemStats(&after)
	if err != nil || len(rws) != 0 || &out[0] != &m.Raw[0] {
		t.Fatalf("an unchanged message: %v, %d rewrites, forwarded as a copy: %v", err, len(rws), &out[0] != &m.Raw[0])
	}
	if grown := after.TotalAlloc - before.TotalAlloc; grown > uint64(len(in))*3/2 {
		t.Errorf("Egress allocated %d KiB for an unchanged %d KiB message", grown>>10, len(in)>>10)
	}
}

package proxy

import (
	"testing"

	"github.com/mcpguard/mcpguard/message"
	"github.com/mcpguard/mcpguard/policy"
)

// BenchmarkPending is the pipelined pattern: ids rising, 64 in flight,
// answered in order.
func BenchmarkPending(b *testing.B) {
	p := newPendingTable()
	var next, oldest int64
	for ; next < 64; next++ {
		p.add(message.Key{Num: next}, inFlight{})
	}
	for b.Loop() {
		if _, ok := p.take(message.Key{Num: oldest}); !ok {
			b.Fatal("lost", oldest)
		}
		oldest++
		p.add(message.Key{Num: next}, inFlight{})
		next++
	}
}

// TestPendingNullID: a reply with id null (an error that answers no request
// in particular) must not take request 0 off the table, or that request
// would get no error reply if the server then died.
func TestPendingNullID(t *testing.T) {
	p := newPendingTable()
	zero := message.KeyOf([]byte("0"))
	if err := p.add(zero, newInFlight(zero, []byte("0"), policy.Call{})); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.take(message.KeyOf([]byte("null"))); ok {
		t.Fatal("an id of null took request 0")
	}
	if err := p.add(message.KeyOf([]byte("null")), inFlight{}); err != errNoID {
		t.Fatalf("adding a request with id null: %v, want errNoID", err)
	}
	if _, ok := p.take(message.KeyOf([]byte(`"0"`))); ok {
		t.Fatal(`the string id "0" took the integer id 0`)
	}
	if f, ok := p.take(zero); !ok || string(f.id()) != "0" {
		t.Fatalf("request 0 lost or its id changed: %v %s", ok, f.id())
	}
	key := message.KeyOf([]byte(`"a\u0062"`))
	if err := p.add(key, newInFlight(key, []byte(`"a\u0062"`), policy.Call{})); err != nil {
		t.Fatal(err)
	}
	if f, ok := p.take(message.KeyOf([]byte(`"ab"`))); !ok || string(f.id()) != `"a\u0062"` {
		t.Fatalf("string id not kept as written: %v %s", ok, f.id())
	}
	if got := len(p.close()); got != 0 {
		t.Fatalf("%d requests left after taking the only one", got)
	}
}

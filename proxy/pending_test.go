package proxy

import (
	"testing"

	"github.com/mcpguard/mcpguard/message"
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
	if err := p.add(zero, inFlight{id: []byte("0")}); err != nil {
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
	if _, ok := p.take(zero); !ok {
		t.Fatal("request 0 lost")
	}
	if got := len(p.close()); got != 0 {
		t.Fatalf("%d requests left after taking the only one", got)
	}
}

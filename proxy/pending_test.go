package proxy

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/policy/message"
)

// BenchmarkPending is the pipelined pattern: ids rising, 64 in flight,
// answered in order.
func BenchmarkPending(b *testing.B) {
	p := newPendingTable()
	var next, oldest int64
	for ; next < 64; next++ {
		p.add(message.Key{Num: next, Valid: true}, &inFlight{})
	}
	for b.Loop() {
		if _, ok := p.take(message.Key{Num: oldest, Valid: true}); !ok {
			b.Fatal("lost", oldest)
		}
		oldest++
		p.add(message.Key{Num: next, Valid: true}, &inFlight{})
		next++
	}
}

// TestPendingNullID: a reply with id null (an error that answers no request
// in particular) must not take request 0 off the table, or that request
// would get no error reply if the server then died.
func TestPendingNullID(t *testing.T) {
	p := newPendingTable()
	zero := message.KeyOf([]byte("0"))
	if err := p.add(zero, new(newInFlight(zero, []byte("0"), policy.Call{}))); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.take(message.KeyOf([]byte("null"))); ok {
		t.Fatal("an id of null took request 0")
	}
	if err := p.add(message.KeyOf([]byte("null")), &inFlight{}); err != errNoID {
		t.Fatalf("adding a request with id null: %v, want errNoID", err)
	}
	if _, ok := p.take(message.KeyOf([]byte(`"0"`))); ok {
		t.Fatal(`the string id "0" took the integer id 0`)
	}
	if f, ok := p.take(zero); !ok || string(f.id()) != "0" {
		t.Fatalf("request 0 lost or its id changed: %v %s", ok, f.id())
	}
	key := message.KeyOf([]byte(`"a\u0062"`))
	if err := p.add(key, new(newInFlight(key, []byte(`"a\u0062"`), policy.Call{}))); err != nil {
		t.Fatal(err)
	}
	if f, ok := p.take(message.KeyOf([]byte(`"ab"`))); !ok || string(f.id()) != `"a\u0062"` {
		t.Fatalf("string id not kept as written: %v %s", ok, f.id())
	}
	if got := len(p.close()); got != 0 {
		t.Fatalf("%d requests left after taking the only one", got)
	}
}

// FuzzPending holds the table to a plain map of what is in flight, for any
// sequence of adds and takes, with ids chosen to collide in the ring (equal
// modulo ringStart, which grows it, or modulo ringSize, which it cannot
// outgrow; negative; the extremes) and string ids that look like
// integers: nothing is lost, nothing is answered twice, a duplicate is
// refused, and close hands back exactly what is left.
func FuzzPending(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 1, 0})
	f.Add([]byte{0, 1, 0, 2, 1, 1, 0, 1, 1, 2, 1, 2})
	f.Add([]byte{0, 3, 0, 4, 0, 5, 1, 4, 0, 4, 1, 3, 1, 5})
	f.Fuzz(func(t *testing.T, ops []byte) {
		ids := []int64{0, 1, ringSize, 2 * ringSize, -ringSize, 1 + ringSize, -1, math.MaxInt64, math.MinInt64, 7,
			ringStart, 1 + ringStart, 3 * ringStart, -ringStart}
		p := newPendingTable()
		model := map[message.Key]bool{}
		for i := 0; i+1 < len(ops); i += 2 {
			op, which := ops[i]%3, int(ops[i+1])
			var key message.Key
			if which >= len(ids) {
				key = message.Key{Str: strconv.Itoa(which % 4), IsString: true, Valid: true}
			} else {
				key = message.Key{Num: ids[which], Valid: true}
			}
			call := policy.Call{Tool: fmt.Sprint(key)}
			switch op {
			case 0, 1:
				err := p.add(key, &inFlight{num: key.Num, call: call})
				if model[key] != (err == errDuplicateID) || (err != nil && err != errDuplicateID) {
					t.Fatalf("op %d: add %+v: %v, in flight: %v", i/2, key, err, model[key])
				}
				model[key] = true
			case 2:
				f, ok := p.take(key)
				if ok != model[key] || (ok && f.call != call) {
					t.Fatalf("op %d: take %+v: %v %+v, in flight: %v", i/2, key, ok, f, model[key])
				}
				delete(model, key)
			}
			if p.size() != len(model) {
				t.Fatalf("op %d: size %d, want %d", i/2, p.size(), len(model))
			}
		}
		left := p.close()
		if len(left) != len(model) {
			t.Fatalf("close returned %d, want %d", len(left), len(model))
		}
		for _, f := range left {
			if f.call.Tool == "" {
				t.Fatalf("close returned a request without its call: %+v", f)
			}
		}
		if err := p.add(message.Key{Num: 1, Valid: true}, &inFlight{}); err != errGone {
			t.Fatalf("add after close: %v, want errGone", err)
		}
	})
}

// TestPendingRingGrows: a session with few requests in flight keeps a
// small ring; ids that collide in it grow it rather than spill into the
// map, up to ringSize, and every one is answered once.
func TestPendingRingGrows(t *testing.T) {
	p := newPendingTable()
	for id := int64(1); id <= 64; id++ {
		if err := p.add(message.Key{Num: id, Valid: true}, &inFlight{num: id}); err != nil {
			t.Fatal(err)
		}
	}
	if len(p.ring) != ringStart {
		t.Fatalf("64 ids counting up grew the ring to %d slots, want %d", len(p.ring), ringStart)
	}
	const n = 3 * ringStart
	for id := int64(65); id <= n; id++ {
		if err := p.add(message.Key{Num: id, Valid: true}, &inFlight{num: id}); err != nil {
			t.Fatal(err)
		}
	}
	if len(p.ring) != 4*ringStart || len(p.nums) != 0 {
		t.Fatalf("%d ids counting up: a ring of %d slots and %d ids in the map, want %d and none", n, len(p.ring), len(p.nums), 4*ringStart)
	}
	for id := int64(1); id <= n; id++ {
		if f, ok := p.take(message.Key{Num: id, Valid: true}); !ok || f.num != id {
			t.Fatalf("id %d: %v %+v after the ring grew", id, ok, f)
		}
	}
	if p.size() != 0 {
		t.Fatalf("size %d after taking everything", p.size())
	}
}

// TestPendingRingCollision: two integer ids in one ring slot are both kept,
// each answered once, and the later one is still a duplicate of itself
// after the earlier one is gone.
func TestPendingRingCollision(t *testing.T) {
	p := newPendingTable()
	a, b := message.Key{Num: 5, Valid: true}, message.Key{Num: 5 + ringSize, Valid: true}
	for _, k := range []message.Key{a, b} {
		if err := p.add(k, &inFlight{num: k.Num}); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := p.take(a); !ok {
		t.Fatal("the first id of the slot was lost")
	}
	if err := p.add(b, &inFlight{num: b.Num}); err != errDuplicateID {
		t.Fatalf("adding %d again after %d left its slot: %v, want errDuplicateID", b.Num, a.Num, err)
	}
	if f, ok := p.take(b); !ok || f.num != b.Num {
		t.Fatalf("the second id of the slot: %v %+v", ok, f)
	}
	if _, ok := p.take(b); ok {
		t.Fatal("an id was answered twice")
	}
	if p.size() != 0 {
		t.Fatalf("size %d after taking everything", p.size())
	}
}

package proxy

import (
	"testing"
	"time"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/policy/message"
)

// TestPendingCancelReservesID: an id the agent cancelled stays reserved
// until the server answers it or cancelHold passes, so a late answer to the
// cancelled call is never taken for the answer to a new call with that id.
func TestPendingCancelReservesID(t *testing.T) {
	p := newPendingTable()
	clock := time.Unix(1000, 0)
	p.now = func() time.Time { return clock }
	for _, id := range []string{"7", `"seven"`} {
		key := message.KeyOf([]byte(id))
		if err := p.add(key, new(newInFlight(key, []byte(id), policy.Call{Method: "tools/call", Tool: "slow"}))); err != nil {
			t.Fatal(err)
		}
		if !p.cancel(key) {
			t.Fatalf("%s: cancel found nothing in flight", id)
		}
		if err := p.add(key, new(newInFlight(key, []byte(id), policy.Call{Method: "tools/call", Tool: "other"}))); err != errCancelledID {
			t.Fatalf("%s: a new request with the cancelled id: %v, want errCancelledID", id, err)
		}
		if _, ok := p.take(key); ok {
			t.Fatalf("%s: the late answer was taken as an answer to a request in flight", id)
		}
		if !p.takeCancelled(key) {
			t.Fatalf("%s: the late answer was not recognised as one", id)
		}
		if err := p.add(key, new(newInFlight(key, []byte(id), policy.Call{}))); err != nil {
			t.Fatalf("%s: the id is free once the server answered: %v", id, err)
		}
		if f, ok := p.take(key); !ok || f.call.Tool != "" {
			t.Fatalf("%s: the new request: %v %+v", id, ok, f)
		}
	}

	// Unanswered, the reservation ends after cancelHold.
	key := message.KeyOf([]byte("8"))
	p.add(key, &inFlight{num: 8})
	p.cancel(key)
	clock = clock.Add(cancelHold - time.Second)
	if err := p.add(key, &inFlight{num: 8}); err != errCancelledID {
		t.Fatalf("before cancelHold: %v", err)
	}
	clock = clock.Add(2 * time.Second)
	if err := p.add(key, &inFlight{num: 8}); err != nil {
		t.Fatalf("after cancelHold: %v", err)
	}
	if p.size() != 1 {
		t.Fatalf("size %d, want 1", p.size())
	}
	if p.cancel(message.KeyOf([]byte("99"))) {
		t.Fatal("cancel of an id never sent reserved it")
	}
	if got := p.close(); len(got) != 1 {
		t.Fatalf("close handed back %d, want the one live request (cancelled ones get no reply)", len(got))
	}
}

// Reserved ids count against maxInFlight, and expired ones are swept when
// the table is full, so cancelling cannot grow it without bound.
func TestPendingCancelBounded(t *testing.T) {
	p := newPendingTable()
	clock := time.Unix(1000, 0)
	p.now = func() time.Time { return clock }
	for i := int64(0); i < maxInFlight; i++ {
		key := message.Key{Num: i, Valid: true}
		if err := p.add(key, &inFlight{num: i}); err != nil {
			t.Fatal(err)
		}
		p.cancel(key)
	}
	if err := p.add(message.Key{Num: maxInFlight, Valid: true}, &inFlight{}); err != errTooMany {
		t.Fatalf("full of reserved ids: %v, want errTooMany", err)
	}
	clock = clock.Add(cancelHold)
	if err := p.add(message.Key{Num: maxInFlight, Valid: true}, &inFlight{}); err != nil {
		t.Fatalf("after the reservations expired: %v", err)
	}
	if p.size() != 1 || len(p.cancelled) != 0 {
		t.Fatalf("size %d, reserved %d", p.size(), len(p.cancelled))
	}
}

func TestServerRequests(t *testing.T) {
	s := newServerRequests()
	k := message.KeyOf([]byte("0"))
	if !s.add(k, "roots/list") || s.add(k, "ping") {
		t.Fatal("add, or a duplicate id accepted")
	}
	if _, ok := s.take(message.KeyOf([]byte(`"0"`))); ok {
		t.Fatal(`the string id "0" answered the integer id 0`)
	}
	if m, ok := s.take(k); !ok || m != "roots/list" {
		t.Fatalf("take: %q %v", m, ok)
	}
	if _, ok := s.take(k); ok {
		t.Fatal("answered twice")
	}
	for i := range maxServerRequests {
		s.add(message.Key{Num: int64(i + 1), Valid: true}, "ping")
	}
	if s.add(message.Key{Num: -1, Valid: true}, "ping") {
		t.Fatal("past the bound")
	}
}

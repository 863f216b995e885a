package ratelimit

import (
	"crypto/sha256"
	"strconv"
	"testing"
	"testing/synctest"
	"time"
)

func key(s string) Key { return sha256.Sum256([]byte(s)) }

func limit(t *testing.T, calls int, per time.Duration, maxKeys int) Limit {
	t.Helper()
	l, err := NewLimit(calls, per, maxKeys)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// call is Wait and, when it admits, Record, as the policy does.
func call(w *Window, k Key) time.Duration {
	wait := w.Wait(k, time.Now())
	if wait == 0 {
		w.Record(k, time.Now())
	}
	return wait
}

// TestSlidingWindow: five calls per five minutes means five in any span
// of five minutes, and the wait named is the time until the oldest call
// leaves the span.
func TestSlidingWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := NewWindow(limit(t, 5, 5*time.Minute, 0))
		pr := key("pr 12")
		for i := range 5 {
			if wait := call(w, pr); wait != 0 {
				t.Fatalf("call %d refused, wait %v", i, wait)
			}
			time.Sleep(time.Minute)
		}
		// Now 5m after the first call: it has left the window.
		if wait := call(w, pr); wait != 0 {
			t.Fatalf("call at 5m refused, wait %v", wait)
		}
		time.Sleep(30 * time.Second)
		// Calls at 1m, 2m, 3m, 4m, 5m; now 5m30s: the one at 1m leaves at 6m.
		if wait := call(w, pr); wait != 30*time.Second {
			t.Fatalf("wait %v, want 30s", wait)
		}
		// A refused call is not counted: the wait does not grow.
		if wait := call(w, pr); wait != 30*time.Second {
			t.Fatalf("second refused call: wait %v, want 30s", wait)
		}
		if wait := call(w, key("pr 13")); wait != 0 {
			t.Fatalf("another key refused, wait %v", wait)
		}
		time.Sleep(30 * time.Second)
		if wait := call(w, pr); wait != 0 {
			t.Fatalf("call after the wait refused, wait %v", wait)
		}
	})
}

// TestNoDoubleBurst: the failure of a token bucket of the same numbers,
// which admits a full burst and then its refill within one window.
func TestNoDoubleBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := NewWindow(limit(t, 5, 5*time.Minute, 0))
		k := key("")
		admitted := 0
		for range 60 { // one attempt every 5s for 5 minutes
			if call(w, k) == 0 {
				admitted++
			}
			time.Sleep(5 * time.Second)
		}
		if admitted != 5 {
			t.Fatalf("%d calls admitted in one window of 5m, want 5", admitted)
		}
	})
}

// TestMaxKeys: past MaxKeys a new key is refused while every tracked key
// still has calls in its window, and admitted in place of the least
// recently used one once that key's window is empty. Memory stays at
// MaxKeys keys however many the caller makes up.
func TestMaxKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := NewWindow(limit(t, 2, time.Minute, 2))
		call(w, key("a"))
		time.Sleep(10 * time.Second)
		call(w, key("b"))
		time.Sleep(10 * time.Second)
		// a is the least recently used; its last call was 20s ago.
		if wait := call(w, key("c")); wait != 40*time.Second {
			t.Fatalf("third key: wait %v, want 40s", wait)
		}
		call(w, key("a")) // a is used again: b is now the oldest
		time.Sleep(5 * time.Second)
		if wait := call(w, key("c")); wait != 45*time.Second {
			t.Fatalf("third key after a's call: wait %v, want 45s (b's)", wait)
		}
		time.Sleep(45 * time.Second)
		if wait := call(w, key("c")); wait != 0 {
			t.Fatalf("third key after b's window emptied: wait %v", wait)
		}
		if w.Keys() != 2 {
			t.Fatalf("%d keys", w.Keys())
		}
		// a was called 50s ago and is still counted.
		if wait := call(w, key("a")); wait != 0 {
			t.Fatalf("a refused after one call, wait %v", wait)
		}
		if wait := call(w, key("a")); wait == 0 {
			t.Fatal("a admitted a third call within its minute: the key was forgotten")
		}
		for i := range 100000 {
			call(w, key(strconv.Itoa(i)))
		}
		if w.Keys() > 2 {
			t.Fatalf("%d keys tracked, limit 2", w.Keys())
		}
	})
}

// TestSetLimit: a reloaded limit keeps the log; a smaller one keeps the
// newest calls, a larger one admits the calls it allows at once.
func TestSetLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := NewWindow(limit(t, 5, time.Minute, 0))
		k := key("k")
		for range 4 {
			call(w, k)
			time.Sleep(time.Second)
		}
		w.SetLimit(limit(t, 3, time.Minute, 0))
		// Calls at 0s, 1s, 2s, 3s; now 4s: three kept (1s, 2s, 3s).
		if wait := call(w, k); wait != 57*time.Second {
			t.Fatalf("after shrinking: wait %v, want 57s", wait)
		}
		w.SetLimit(limit(t, 4, time.Minute, 0))
		if wait := call(w, k); wait != 0 {
			t.Fatalf("after growing: wait %v", wait)
		}
		if wait := call(w, k); wait != 57*time.Second {
			t.Fatalf("after growing, full: wait %v, want 57s", wait)
		}
		w.SetLimit(limit(t, 4, 10*time.Second, 0))
		if wait := call(w, k); wait != 7*time.Second {
			t.Fatalf("shorter per: wait %v, want 7s", wait)
		}
	})
}

func TestNewLimitBounds(t *testing.T) {
	for _, c := range []struct {
		calls   int
		per     time.Duration
		maxKeys int
	}{{0, time.Second, 0}, {MaxCalls + 1, time.Second, 0}, {1, 0, 0}, {1, -time.Second, 0}, {1, time.Second, -1}, {1, time.Second, MaxMaxKeys + 1}} {
		if _, err := NewLimit(c.calls, c.per, c.maxKeys); err == nil {
			t.Errorf("NewLimit(%d, %v, %d) accepted", c.calls, c.per, c.maxKeys)
		}
	}
	if l, err := NewLimit(1, time.Second, 0); err != nil || l.MaxKeys != DefaultMaxKeys {
		t.Fatalf("%+v %v", l, err)
	}
}

// FuzzWindow: whatever the sequence of calls, keys and pauses, a key is
// never admitted more than Calls times in any span of Per, the window
// never tracks more than MaxKeys keys, and a call it refuses is admitted
// once the wait it named has passed (unless other calls came between).
// Seeds: a burst on one key, keys cycled past MaxKeys, calls spaced at
// the edge of the window.
func FuzzWindow(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3})
	f.Add([]byte{0x80, 0x90, 0x80, 0x90, 0x80, 0x90})
	f.Fuzz(func(t *testing.T, ops []byte) {
		l := Limit{Calls: 3, Per: 10 * time.Second, MaxKeys: 4}
		w := NewWindow(l)
		now := w.epoch
		admitted := map[Key][]time.Time{}
		for _, op := range ops {
			now = now.Add(time.Duration(op>>3) * time.Second / 2) // 0 to 15.5 s
			k := key(strconv.Itoa(int(op & 7)))
			wait := w.Wait(k, now)
			if wait < 0 || wait > l.Per {
				t.Fatalf("wait %v outside [0, %v]", wait, l.Per)
			}
			if wait > 0 {
				if w.Wait(k, now.Add(wait)) != 0 {
					t.Fatalf("still refused after the wait it named (%v)", wait)
				}
				continue
			}
			w.Record(k, now)
			admitted[k] = append(admitted[k], now)
			in := 0
			for _, at := range admitted[k] {
				if now.Sub(at) < l.Per {
					in++
				}
			}
			if in > l.Calls {
				t.Fatalf("%d calls of one key admitted within %v", in, l.Per)
			}
			if w.Keys() > l.MaxKeys {
				t.Fatalf("%d keys tracked", w.Keys())
			}
		}
	})
}

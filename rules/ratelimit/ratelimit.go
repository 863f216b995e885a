// Package ratelimit counts calls in a sliding window: at most Calls calls
// in any span of Per, per key. It stops an injected agent from hammering a
// tool (five review comments a minute on one pull request, a thousand
// deletes) where every single call would pass the policy.
//
// The window is a log of the last Calls call times of each key, not a
// token bucket: a bucket of Calls tokens refilled at Calls/Per admits up
// to twice Calls in one span of Per (a full bucket, then its refill),
// while "5 calls per 5m" promises five. The wait it reports is exact: the
// time until the oldest call of the key leaves the window.
//
// Memory is bounded: at most MaxKeys keys of at most Calls times each
// (8 bytes a time). A new key past MaxKeys takes the place of the least
// recently used key only when that key's window is empty (its last call
// is older than Per); otherwise the call is refused, never admitted by
// forgetting a key whose calls still count.
package ratelimit

import (
	"container/list"
	"fmt"
	"time"
)

// DefaultMaxKeys is the number of keys a limit tracks unless it says.
const DefaultMaxKeys = 1000

// Bounds of a Limit: what one policy rule may ask for.
const (
	MaxCalls   = 10000
	MaxMaxKeys = 100000
)

// Limit is at most Calls calls per span of Per, per key, for at most
// MaxKeys keys at once.
type Limit struct {
	Calls   int
	Per     time.Duration
	MaxKeys int
}

// NewLimit checks a limit as a policy writes it; maxKeys 0 means
// DefaultMaxKeys.
func NewLimit(calls int, per time.Duration, maxKeys int) (Limit, error) {
	if maxKeys == 0 {
		maxKeys = DefaultMaxKeys
	}
	switch {
	case calls < 1 || calls > MaxCalls:
		return Limit{}, fmt.Errorf("calls %d: want 1 to %d", calls, MaxCalls)
	case per <= 0:
		return Limit{}, fmt.Errorf("per %v: want a positive duration", per)
	case maxKeys < 1 || maxKeys > MaxMaxKeys:
		return Limit{}, fmt.Errorf("max_keys %d: want 1 to %d", maxKeys, MaxMaxKeys)
	}
	return Limit{Calls: calls, Per: per, MaxKeys: maxKeys}, nil
}

// Window is the call log of one limit. It is not safe for concurrent use:
// its owner serialises Wait and Record (a call admitted by several limits
// must be recorded in all of them or none).
type Window struct {
	limit Limit
	epoch time.Time // times are kept as offsets from it, on the monotonic clock
	keys  map[Key]*list.Element
	lru   list.List // of *calls, most recently called first
}

// Key names what a limit counts separately (a tool's calls for one pull
// request): a digest, so that a key costs the same whatever its text.
type Key [32]byte

// calls is the log of one key: a ring of its last call times.
type calls struct {
	key   Key
	times []time.Duration // oldest at next once full
	next  int
}

// NewWindow starts an empty log for l.
func NewWindow(l Limit) *Window {
	return &Window{limit: l, epoch: time.Now(), keys: map[Key]*list.Element{}}
}

// Limit is the limit the window enforces.
func (w *Window) Limit() Limit { return w.limit }

// Keys is the number of keys the window tracks.
func (w *Window) Keys() int { return len(w.keys) }

// SetLimit makes the window enforce l from now on, keeping its log (a
// policy reloaded with other numbers). A key keeps its newest times, as
// many as l.Calls; keys past l.MaxKeys are dropped, least recently used
// first, which can only admit calls the old log would also have counted
// against a smaller limit.
func (w *Window) SetLimit(l Limit) {
	w.limit = l
	for e := w.lru.Front(); e != nil; e = e.Next() {
		c := e.Value.(*calls)
		ordered := append(c.times[c.next:len(c.times):len(c.times)], c.times[:c.next]...)
		if len(ordered) > l.Calls {
			ordered = ordered[len(ordered)-l.Calls:]
		}
		c.times, c.next = ordered, 0
	}
	for len(w.keys) > l.MaxKeys {
		w.forget(w.lru.Back())
	}
}

// Wait returns how long a call of key must wait before the limit admits
// it at now; 0 means it is admitted now. It records nothing.
func (w *Window) Wait(key Key, now time.Time) time.Duration {
	t := now.Sub(w.epoch)
	if e, ok := w.keys[key]; ok {
		c := e.Value.(*calls)
		if len(c.times) < w.limit.Calls {
			return 0
		}
		return max(0, c.times[c.next]+w.limit.Per-t)
	}
	if len(w.keys) < w.limit.MaxKeys {
		return 0
	}
	// Full: the least recently used key makes room once its newest call
	// has left the window.
	return max(0, w.lru.Back().Value.(*calls).newest()+w.limit.Per-t)
}

// Record logs a call of key at now; the caller has seen Wait return 0, or
// forwards the call anyway (audit mode). Past MaxKeys, a new key takes the
// place of the least recently used one.
func (w *Window) Record(key Key, now time.Time) {
	t := now.Sub(w.epoch)
	e, ok := w.keys[key]
	if !ok {
		if len(w.keys) >= w.limit.MaxKeys {
			w.forget(w.lru.Back())
		}
		e = w.lru.PushFront(&calls{key: key})
		w.keys[key] = e
	}
	w.lru.MoveToFront(e)
	c := e.Value.(*calls)
	if len(c.times) < w.limit.Calls {
		c.times = append(c.times, t)
		return
	}
	c.times[c.next] = t
	c.next = (c.next + 1) % len(c.times)
}

func (w *Window) forget(e *list.Element) {
	delete(w.keys, e.Value.(*calls).key)
	w.lru.Remove(e)
}

// newest is the time of the key's last call.
func (c *calls) newest() time.Duration {
	if c.next == 0 {
		return c.times[len(c.times)-1]
	}
	return c.times[c.next-1]
}

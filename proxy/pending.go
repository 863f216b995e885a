package proxy

import (
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/proxy/telemetry"
)

// maxInFlight bounds the requests the agent may have outstanding. Real
// agents keep a handful; the bound keeps memory finite against one that
// never waits.
const maxInFlight = 10000

var (
	errDuplicateID = errors.New("a request with this id is already in flight")
	errTooMany     = errors.New("too many requests in flight")
	errGone        = errors.New("the MCP server has exited")
	errNoID        = errors.New("a request without a usable id")
	errCancelledID = errors.New("a request with this id was cancelled and the MCP server may still answer it; use a new id")
)

// inFlight is a request from the agent that the server has not answered.
// An integer id, the usual kind, is kept as its value (no copy of the
// line to allocate); a string id as the agent wrote it.
type inFlight struct {
	num   int64
	str   jsontext.Value
	call  policy.Call
	trace *telemetry.Call // nil when export is off
}

func newInFlight(key message.Key, id jsontext.Value, call policy.Call) inFlight {
	if key.IsString {
		return inFlight{str: id.Clone(), call: call}
	}
	return inFlight{num: key.Num, call: call}
}

// id is the request's id, for a reply mcpguard writes itself.
func (f inFlight) id() jsontext.Value {
	if f.str != nil {
		return f.str
	}
	return strconv.AppendInt(nil, f.num, 10)
}

// pendingTable tracks the agent's requests in flight, keyed by id. When the
// server goes away, close hands every one of them back so each gets an error
// reply: nothing waits forever.
//
// The ingress loop adds and the egress loop takes, on two threads, for
// every call. Integer ids, what clients send, mostly counting up, go in a
// ring indexed by the id's low bits: a batch of 64 requests fills 64
// neighbouring slots, which the other thread then reads in order, where a
// hash map scattered them over random cache lines that each missed on the
// other core (integration/bench: the map cost the pipelined relay about a
// tenth of its throughput). An integer id whose slot is held by another id
// in flight, and every string id, go in a map.
//
// An id the agent cancelled (notifications/cancelled) stays reserved in
// cancelled until the server answers it or cancelHold passes: MCP lets a
// server answer a request it was told to cancel, and if the agent reused
// the id meanwhile, that late answer would be taken for the answer to the
// new request and relayed under its egress rules. A new request with a
// reserved id is refused as a duplicate; the late answer is dropped.
type pendingTable struct {
	mu        sync.Mutex
	ring      []ringSlot // ringStart slots, made on first use, up to ringSize
	nums      map[int64]inFlight
	strs      map[string]inFlight
	cancelled map[message.Key]time.Time // reserved ids, until when
	n         int                       // requests in flight, in the ring and the maps, and reserved ids
	closed    bool
	now       func() time.Time
}

// cancelHold is how long an id the agent cancelled stays reserved when the
// server does not answer it.
const cancelHold = time.Minute

// ringSize is a power of two above maxInFlight, so that ids counting up
// never collide while the agent keeps within the bound.
const ringSize = 1 << 14

// ringStart is the ring's size when it is made: a power of two above the
// requests agents keep in flight. The ring doubles, up to ringSize, when
// an id's slot is held by another id in flight, so a session that never
// has many in flight does not allocate (and the collector scan, at every
// cycle) the 1.4 MB of a full ring.
const ringStart = 1 << 8

type ringSlot struct {
	used  bool
	num   int64
	call  policy.Call
	trace *telemetry.Call
}

func newPendingTable() *pendingTable {
	return &pendingTable{nums: make(map[int64]inFlight), strs: make(map[string]inFlight),
		cancelled: make(map[message.Key]time.Time), now: time.Now}
}

func (p *pendingTable) size() int { return p.n }

// add puts *f in flight under key (a copy: f stays the caller's).
func (p *pendingTable) add(key message.Key, f *inFlight) error {
	p.mu.Lock()
	err := p.addLocked(key, f)
	p.mu.Unlock() // not deferred: a wrapper function's code fetched per call
	return err
}

func (p *pendingTable) addLocked(key message.Key, f *inFlight) error {
	if p.n >= maxInFlight {
		p.sweepCancelled()
	}
	switch {
	case p.closed:
		return errGone
	case p.n >= maxInFlight:
		return errTooMany
	case !key.Valid:
		return errNoID
	}
	if len(p.cancelled) > 0 {
		if until, reserved := p.cancelled[key]; reserved {
			if p.now().Before(until) {
				return errCancelledID
			}
			delete(p.cancelled, key)
			p.n--
		}
	}
	if key.IsString {
		if _, dup := p.strs[key.Str]; dup {
			return errDuplicateID
		}
		p.strs[key.Str] = *f
		p.n++
		return nil
	}
	if p.ring == nil {
		p.ring = make([]ringSlot, ringStart)
	}
	slot := p.slot(key.Num)
	if slot.used && slot.num == key.Num {
		return errDuplicateID
	}
	if len(p.nums) > 0 {
		if _, dup := p.nums[key.Num]; dup {
			return errDuplicateID
		}
	}
	for slot.used && len(p.ring) < ringSize {
		p.grow()
		slot = p.slot(key.Num)
	}
	if slot.used {
		p.nums[key.Num] = *f
	} else {
		*slot = ringSlot{used: true, num: key.Num, call: f.call, trace: f.trace}
	}
	p.n++
	return nil
}

// slot is the ring's slot for the integer id num.
func (p *pendingTable) slot(num int64) *ringSlot {
	return &p.ring[uint64(num)&uint64(len(p.ring)-1)]
}

// grow doubles the ring. Ids in distinct slots stay in distinct slots
// (their low bits differ), so every one moves without a collision.
func (p *pendingTable) grow() {
	old := p.ring
	p.ring = make([]ringSlot, 2*len(old))
	for i := range old {
		if s := &old[i]; s.used {
			*p.slot(s.num) = *s
		}
	}
}

func (p *pendingTable) take(key message.Key) (inFlight, bool) {
	var f inFlight
	ok := p.takeInto(key, &f)
	return f, ok
}

// takeInto is take into *f, which it sets only when it reports true: the
// egress loop's reply takes its request without copying it out twice.
func (p *pendingTable) takeInto(key message.Key, f *inFlight) bool {
	p.mu.Lock()
	ok := p.takeLocked(key, f)
	p.mu.Unlock() // as in add
	return ok
}

// cancel takes the request with key out of flight and reserves its id
// (see pendingTable). It reports whether the request was in flight.
func (p *pendingTable) cancel(key message.Key) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	var f inFlight
	if ok := p.takeLocked(key, &f); !ok || p.closed {
		return false
	}
	p.cancelled[key] = p.now().Add(cancelHold)
	p.n++
	return true
}

// takeCancelled frees the reserved id key, and reports whether it was
// reserved: a response with it is a late answer to a cancelled request.
func (p *pendingTable) takeCancelled(key message.Key) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.cancelled[key]; !ok {
		return false
	}
	delete(p.cancelled, key)
	p.n--
	return true
}

// sweepCancelled frees the reserved ids whose time has passed.
func (p *pendingTable) sweepCancelled() {
	now := p.now()
	for k, until := range p.cancelled {
		if !now.Before(until) {
			delete(p.cancelled, k)
			p.n--
		}
	}
}

// takeLocked is takeInto with p.mu held.
func (p *pendingTable) takeLocked(key message.Key, f *inFlight) bool {
	var ok bool
	switch {
	case !key.Valid:
	case key.IsString:
		var g inFlight
		if g, ok = p.strs[key.Str]; ok {
			delete(p.strs, key.Str)
			*f = g
		}
	default:
		if p.ring != nil {
			if slot := p.slot(key.Num); slot.used && slot.num == key.Num {
				*f = inFlight{num: key.Num, call: slot.call, trace: slot.trace}
				*slot = ringSlot{}
				ok = true
				break
			}
		}
		if len(p.nums) == 0 {
			break
		}
		var g inFlight
		if g, ok = p.nums[key.Num]; ok {
			delete(p.nums, key.Num)
			*f = g
		}
	}
	if ok {
		p.n--
	}
	return ok
}

// has reports whether a request with key is in flight.
func (p *pendingTable) has(key message.Key) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case !key.Valid:
		return false
	case key.IsString:
		_, ok := p.strs[key.Str]
		return ok
	}
	if p.ring != nil {
		if slot := p.slot(key.Num); slot.used && slot.num == key.Num {
			return true
		}
	}
	_, ok := p.nums[key.Num]
	return ok
}

// close refuses new requests and returns those still in flight.
func (p *pendingTable) close() []inFlight {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	out := make([]inFlight, 0, p.size())
	for i := range p.ring {
		if slot := &p.ring[i]; slot.used {
			out = append(out, inFlight{num: slot.num, call: slot.call, trace: slot.trace})
			*slot = ringSlot{}
		}
	}
	for _, f := range p.nums {
		out = append(out, f)
	}
	for _, f := range p.strs {
		out = append(out, f)
	}
	clear(p.nums)
	clear(p.strs)
	clear(p.cancelled)
	p.n = 0
	return out
}

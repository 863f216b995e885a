package proxy

import (
	"errors"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/message"
	"github.com/mcpguard/mcpguard/policy"
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
)

// inFlight is a request from the agent that the server has not answered.
// An integer id, the usual kind, is kept as its value (no copy of the
// line to allocate); a string id as the agent wrote it.
type inFlight struct {
	num  int64
	str  jsontext.Value
	call policy.Call
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
type pendingTable struct {
	mu sync.Mutex
	// Integer ids (what clients send) and string ids in maps of their
	// own: hashing an int64 is cheaper than hashing a struct with a string.
	nums   map[int64]inFlight
	strs   map[string]inFlight
	closed bool
}

func newPendingTable() *pendingTable {
	return &pendingTable{nums: make(map[int64]inFlight), strs: make(map[string]inFlight)}
}

func (p *pendingTable) size() int { return len(p.nums) + len(p.strs) }

func (p *pendingTable) add(key message.Key, f inFlight) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return errGone
	case p.size() >= maxInFlight:
		return errTooMany
	case !key.Valid:
		return errNoID
	}
	if key.IsString {
		if _, dup := p.strs[key.Str]; dup {
			return errDuplicateID
		}
		p.strs[key.Str] = f
		return nil
	}
	if _, dup := p.nums[key.Num]; dup {
		return errDuplicateID
	}
	p.nums[key.Num] = f
	return nil
}

func (p *pendingTable) take(key message.Key) (inFlight, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var f inFlight
	var ok bool
	switch {
	case !key.Valid:
	case key.IsString:
		if f, ok = p.strs[key.Str]; ok {
			delete(p.strs, key.Str)
		}
	default:
		if f, ok = p.nums[key.Num]; ok {
			delete(p.nums, key.Num)
		}
	}
	return f, ok
}

// close refuses new requests and returns those still in flight.
func (p *pendingTable) close() []inFlight {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	out := make([]inFlight, 0, p.size())
	for _, f := range p.nums {
		out = append(out, f)
	}
	for _, f := range p.strs {
		out = append(out, f)
	}
	clear(p.nums)
	clear(p.strs)
	return out
}

package proxy

import (
	"errors"
	"sync"
	"time"

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
)

// inFlight is a request from the agent that the server has not answered.
type inFlight struct {
	id    jsontext.Value
	call  policy.Call
	start time.Time
}

// pendingTable tracks the agent's requests in flight, keyed by id. When the
// server goes away, close hands every one of them back so each gets an error
// reply: nothing waits forever.
type pendingTable struct {
	mu     sync.Mutex
	calls  map[message.Key]inFlight
	closed bool
}

func newPendingTable() *pendingTable {
	return &pendingTable{calls: make(map[message.Key]inFlight)}
}

func (p *pendingTable) add(key message.Key, f inFlight) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return errGone
	case len(p.calls) >= maxInFlight:
		return errTooMany
	}
	if _, dup := p.calls[key]; dup {
		return errDuplicateID
	}
	p.calls[key] = f
	return nil
}

func (p *pendingTable) take(key message.Key) (inFlight, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, ok := p.calls[key]
	if ok {
		delete(p.calls, key)
	}
	return f, ok
}

// close refuses new requests and returns those still in flight.
func (p *pendingTable) close() []inFlight {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	out := make([]inFlight, 0, len(p.calls))
	for k, f := range p.calls {
		out = append(out, f)
		delete(p.calls, k)
	}
	return out
}

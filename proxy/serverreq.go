package proxy

import (
	"sync"

	"github.com/mcpguard/mcpguard/policy/message"
)

// maxServerRequests bounds the server's requests to the agent in flight
// (roots/list, sampling, elicitation, ping: real servers keep one or two).
const maxServerRequests = 1024

// serverRequests tracks the server's requests to the agent that the agent
// has not answered, keyed by id in the server's id space, with their
// method. The relay forwards an answer from the agent only when it answers
// one of them: a response with a made-up id would otherwise reach the
// server as the answer to a request it never relayed (or to one mcpguard
// judged under another method), and the answer to roots/list is judged as
// such (policy.Session.RootsAnswer).
type serverRequests struct {
	mu      sync.Mutex
	methods map[message.Key]string
}

func newServerRequests() *serverRequests {
	return &serverRequests{methods: make(map[message.Key]string)}
}

// add records a request of the server; false when the table is full or
// the id is already in flight (the request is then not relayed).
func (s *serverRequests) add(key message.Key, method string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !key.Valid || len(s.methods) >= maxServerRequests {
		return false
	}
	if _, dup := s.methods[key]; dup {
		return false
	}
	s.methods[key] = method
	return true
}

// take returns the method of the request with key and forgets it.
func (s *serverRequests) take(key message.Key) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	method, ok := s.methods[key]
	if ok {
		delete(s.methods, key)
	}
	return method, ok
}

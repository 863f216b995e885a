package proxy

import (
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rs/zerolog"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/proxy/eventlog"
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

// logServerRequest writes one line for a decision on a request of the
// server's to the client (id: the request's; nil for an inputRequests
// entry, whose key is logged instead).
func (r *relay) logServerRequest(d policy.ServerRequestDecision, id jsontext.Value) {
	level, ev := zerolog.InfoLevel, eventlog.EventServerRequest
	switch d.Action {
	case policy.RequestRejected:
		level, ev = zerolog.WarnLevel, eventlog.EventRejected
	case policy.RequestAudited:
		level, ev = zerolog.WarnLevel, eventlog.EventAudited
	}
	var findings []string
	for _, f := range d.Findings {
		findings = append(findings, eventlog.Clean(f.String()))
	}
	what := d.Kind
	if what == "" {
		what = d.Method
	}
	msg := "server request " + what + " " + d.Action
	if d.Reason != "" {
		msg += ": " + d.Reason
	}
	if len(findings) > 0 {
		msg += "; lint: " + strings.Join(findings, ", ")
	}
	r.log.Log(eventlog.Event{Level: level, Event: ev, Direction: eventlog.Egress, Method: d.Method, ID: logID(id),
		ErrorCode: d.Code, Rule: d.Rule, Action: eventlog.Action(d.Action), Message: msg, PolicyText: true,
		Extra: func(e *zerolog.Event) {
			if d.Kind != "" {
				e.Str("kind", d.Kind)
			}
			if d.Key != "" {
				e.Str("input_request", d.Key)
			}
			if len(findings) > 0 {
				e.Strs("findings", findings)
			}
		}})
	r.tel.ServerRequest(r.egressArrived, d.Method, d.Kind, d.Action, d.Code, d.Rule, id == nil)
}

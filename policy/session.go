package policy

import (
	"github.com/mcpguard/mcpguard/message"
)

// Verdict is the policy's answer for one message from the agent.
type Verdict struct {
	// Rejection is nil when the message may reach the server.
	Rejection *message.Rejection
	// Audit means the rejection is only logged (mode: audit) and the
	// message is forwarded.
	Audit bool
	// AsError: reply with a JSON-RPC error of code Code rather than a tool
	// result (reject_as: error, or a request other than tools/call).
	AsError bool
	Code    int64
}

// Call is what the relay remembers of a request in flight, so that the
// response can be judged in its context.
type Call struct {
	Method string
	Tool   string // tools/call, prompts/get: the name called
}

// Rewrite is one change the egress canonicaliser made, for the log.
type Rewrite struct {
	Field         string // where in the message, e.g. result.content[0].text
	Canonicaliser string
	Removed       int // bytes removed
}

// Session is a policy applied to one downstream: it holds what the session
// learns (the input schemas the server announced). Safe for concurrent use.
type Session struct {
	p *Policy
}

// NewSession starts applying p to one downstream server.
func (p *Policy) NewSession() *Session {
	return &Session{p: p}
}

// Policy returns the policy the session applies.
func (s *Session) Policy() *Policy { return s.p }

// Ingress judges a request or notification from the agent.
func (s *Session) Ingress(m *message.Message) Verdict {
	return Verdict{}
}

// Egress returns the bytes to forward to the agent for a message from the
// server: m.Raw itself when nothing changes. call is the request a response
// answers, nil when unknown or not a response.
func (s *Session) Egress(m *message.Message, call *Call) ([]byte, []Rewrite, error) {
	return m.Raw, nil, nil
}

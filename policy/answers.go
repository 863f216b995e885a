package policy

import (
	"github.com/sourcegraph/jsonrpc2"

	"github.com/mcpguard/mcpguard/policy/message"
)

// Answer judges the agent's answer to a request of the server's (method
// is the request it answers: sampling/createMessage, elicitation/create,
// roots/list, ...) before it reaches the server. The answer carries what
// the user typed into a form, what a model sampled and the client's
// directories: a credential anywhere in it, member names included, is
// refused as it is in tools/call arguments (the policy's secrets settings;
// the baseline refuses). A refused answer never reaches the server; the
// relay sends the server a JSON-RPC error in its place, so the server does
// not wait for it.
func (s *Session) Answer(method string, m *message.Message) Verdict {
	body := m.Result
	if body == nil {
		body = m.Error
	}
	r := s.p.secretsIngressRule("")
	if r == nil || body == nil || r.rawClean(body) {
		return Verdict{}
	}
	w := walkers.Get().(*walker)
	w.session = s
	defer w.release()
	if rej := w.parseArgs(body, ""); rej != nil {
		return Verdict{Rejection: rej, AsError: true, Code: jsonrpc2.CodeInvalidParams}
	}
	rej := w.checkArgs([]*ingressRule{r}, "", false)
	if rej == nil {
		return Verdict{}
	}
	rej.Error = "rejected MCP input: the client's answer to " + clean(method) + " carries a credential at " + rej.Field + " (policy entry " + rej.Rule + ")"
	return Verdict{Rejection: rej, AsError: true, Code: jsonrpc2.CodeInvalidParams, Audit: s.p.Mode == Audit || r.audit}
}

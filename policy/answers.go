package policy

import (
	"github.com/sourcegraph/jsonrpc2"

	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/rules/codes"
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
	return s.now().answer(method, m)
}

func (s judge) answer(method string, m *message.Message) Verdict {
	body := m.Result
	if body == nil {
		body = m.Error
	}
	rej, audit := s.scanAnswer(body)
	if rej == nil {
		return Verdict{}
	}
	if rej.ErrorCode != codes.Malformed {
		rej.Error = "rejected MCP input: the client's answer to " + clean(method) + " carries a credential at " + rej.Field + " (policy entry " + rej.Rule + ")"
	}
	return Verdict{Rejection: rej, AsError: true, Code: jsonrpc2.CodeInvalidParams, Audit: s.policy().Mode == Audit || audit}
}

// checkInputResponses judges the inputResponses of a request (revision
// 2026-07-28: the client's answers to a result's inputRequests, sent with
// its retry) as Answer judges answers sent on their own.
func (s judge) checkInputResponses(m *message.Message) (rej *message.Rejection, audit bool) {
	if m.InputResponses == nil {
		return nil, false
	}
	rej, audit = s.scanAnswer(m.InputResponses)
	if rej != nil && rej.ErrorCode != codes.Malformed {
		rej.Field = "inputResponses." + rej.Field
		rej.Error = "rejected MCP input: the client's inputResponses carry a credential at " + rej.Field + " (policy entry " + rej.Rule + ")"
	}
	return rej, audit
}

// scanAnswer runs the secrets rule over every string of body, member
// names included; audit says the policy only audits secrets.
func (s judge) scanAnswer(body []byte) (*message.Rejection, bool) {
	r := s.policy().secretsIngressRule("")
	if r == nil || body == nil || r.rawClean(body) {
		return nil, false
	}
	w := walkers.Get().(*walker)
	w.session = s
	defer w.release()
	if rej := w.parseArgs(body, ""); rej != nil {
		return rej, false
	}
	return w.checkArgs([]*ingressRule{r}, "", false), r.audit
}

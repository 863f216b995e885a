package policy

import (
	"errors"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/sourcegraph/jsonrpc2"

	"github.com/mcpguard/mcpguard/policy/approval"
	"github.com/mcpguard/mcpguard/policy/message"
)

// Outcome is what the policy does with one message from the agent.
type Outcome string

const (
	Allowed  Outcome = "allowed"  // forwarded to the server
	Rejected Outcome = "rejected" // answered by mcpguard, never forwarded
	Audited  Outcome = "audited"  // would be rejected; forwarded because the mode is audit
	Asked    Outcome = "ask"      // held for the user's approval (action: ask); forwarded only if they allow it
)

// Evaluation is the verdict one message would get, and why: what
// `mcpguard eval` prints.
type Evaluation struct {
	Verdict   Outcome        `json:"verdict"`
	Method    string         `json:"method,omitempty"`
	Tool      string         `json:"tool,omitempty"`
	ErrorCode string         `json:"error_code,omitempty"`
	Rule      string         `json:"rule,omitempty"`
	Field     string         `json:"field,omitempty"`
	Error     string         `json:"error,omitempty"`
	Reply     jsontext.Value `json:"reply,omitempty"` // what the agent would get instead of the server's answer
	Notes     []string       `json:"notes,omitempty"`
}

// Evaluate judges one message from the agent as the relay would. toolsList,
// when not nil, is a tools/list result ({"tools":[...]}) that primes the
// server's input schemas for server_schema: enforce.
func (p *Policy) Evaluate(line []byte, toolsList []byte) Evaluation {
	s, notes := p.evalSession(toolsList)
	return s.evaluate(line, notes)
}

// evalSession is the session Evaluate judges in, and what it could not
// judge offline.
func (p *Policy) evalSession(toolsList []byte) (*Session, []string) {
	s := p.NewSession()
	var notes []string
	if toolsList == nil && p.capturesSchemas() {
		s.offline = true
		notes = append(notes, "server_schema: enforce was not evaluated; pass --tools-list with the server's tools/list result to include it")
	}
	if toolsList != nil {
		resp := []byte(`{"jsonrpc":"2.0","id":0,"result":` + string(toolsList) + `}`)
		if rm, err := message.Parse(resp); err == nil {
			s.Egress(rm, &Call{Method: "tools/list"})
		}
	}
	return s, notes
}

// evaluate judges one message in s.
func (s *Session) evaluate(line []byte, notes []string) Evaluation {
	m, err := message.Parse(line)
	if err != nil {
		var e *message.Error
		if !errors.As(err, &e) {
			e = &message.Error{Code: jsonrpc2.CodeInvalidRequest, Reason: err.Error()}
		}
		rej := message.Malformed(e)
		return Evaluation{Verdict: Rejected, ErrorCode: rej.ErrorCode, Error: rej.Error,
			Reply: message.RejectionError(e.ID, e.Code, rej)}
	}
	ev := Evaluation{Verdict: Allowed, Method: m.Method, Tool: clean(m.Name), Notes: notes}
	v := s.Ingress(m)
	if v.Ask != nil && (v.Rejection == nil || v.Audit) {
		ev.Verdict, ev.Rule = Asked, v.Ask.Rules()
		ev.Error = "the user is asked to approve this call (" + v.Ask.Rules() + "); without an answer within " + v.Ask.Timeout.String() + " it is denied"
		ev.Notes = append(ev.Notes, "prompt the user would see:\n"+approval.Message(v.Ask.Question))
		return ev
	}
	if v.Rejection == nil {
		return ev
	}
	ev.ErrorCode, ev.Rule, ev.Field, ev.Error = v.Rejection.ErrorCode, v.Rejection.Rule, v.Rejection.Field, v.Rejection.Error
	if v.Audit {
		ev.Verdict = Audited
		return ev
	}
	ev.Verdict = Rejected
	if m.Kind == message.Request {
		ev.Reply = v.Reply(m.ID)
	}
	return ev
}

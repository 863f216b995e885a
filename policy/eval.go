package policy

import (
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/sourcegraph/jsonrpc2"

	"github.com/mcpguard/mcpguard/policy/message"
)

// Outcome is what the policy does with one message from the agent.
type Outcome string

const (
	Allowed  Outcome = "allowed"  // forwarded to the server
	Rejected Outcome = "rejected" // answered by mcpguard, never forwarded
	Audited  Outcome = "audited"  // would be rejected; forwarded because the mode is audit
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
	ev := Evaluation{Verdict: Allowed, Method: m.Method, Tool: clean(m.Name), Notes: notes}
	v := s.Ingress(m)
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

// Eval is `mcpguard eval`: it writes the Evaluation of msg as indented
// JSON to w. The status is 1 when the message would be rejected, or only
// logged in audit mode (the verdict still fails: a script checking a
// policy must not pass because the policy is in audit), else 0.
func (p *Policy) Eval(msg, toolsList []byte, w io.Writer) (int, error) {
	ev := p.Evaluate(msg, toolsList)
	out, err := json.Marshal(ev, jsontext.Multiline(true))
	if err != nil {
		return 1, err
	}
	if _, err := fmt.Fprintf(w, "%s\n", out); err != nil {
		return 1, err
	}
	if ev.Verdict == Rejected || ev.Verdict == Audited {
		return 1, nil
	}
	return 0, nil
}

// Check is `mcpguard check`: it loads each policy file and writes
// "PATH: ok" to stdout, or the file's errors (file:line:col) to stderr.
// With toolsList (a server's tools/list result) it also warns, on stderr,
// about tool names the policy writes that the server does not have.
// The status is 1 when any file fails to load, 2 when there is none.
func Check(paths []string, toolsList []byte, stdout, stderr io.Writer) (int, error) {
	if len(paths) == 0 {
		return 2, errors.New("check needs at least one policy file")
	}
	status := 0
	for _, path := range paths {
		p, err := LoadFile(path)
		if err != nil {
			fmt.Fprintln(stderr, err)
			status = 1
			continue
		}
		if toolsList != nil {
			warnings, err := p.ToolNameWarnings(toolsList)
			if err != nil {
				return 2, fmt.Errorf("--tools-list: not a tools/list result: %v", err)
			}
			for _, w := range warnings {
				fmt.Fprintf(stderr, "%s: warning: %s\n", path, w)
			}
		}
		fmt.Fprintf(stdout, "%s: ok\n", path)
	}
	return status, nil
}

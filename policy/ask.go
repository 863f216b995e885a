package policy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/policy/approval"
	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/rules/codes"
)

// Approval (`action: ask`) holds a tools/call for the user's answer
// instead of refusing or forwarding it. Two entries ask:
//
//   - a tools: entry `NAME: ask` (or {action: ask}): every call of the
//     tool, under every spelling a loose server resolves to it;
//   - an ingress rule with `action: ask`: a call its check would refuse
//     (a command outside the rule's programs, say).
//
// Session.Ingress judges a call as usual first: a refusing check, a deny
// entry, a schema, a pin refuse it whatever asks. Only a call that passes
// everything that refuses and is asked about by at least one entry gets
// Verdict.Ask. The relay then asks the user through the client's
// elicitation (package approval renders the prompt and reads the answer),
// forwards the call on "allow once" or "allow for this session" (after
// Session.Remember), and answers it with AskRejection otherwise. A
// 2026-07-28 client is asked inside a result and retries the call with
// the answer: the relay takes the answer only for the same call
// (SameCall) and judges the retry with IngressAnswered.
//
// For another kind of check that wants to ask (a flows: rule, say): add
// an approval.Reason naming the entry to the call's reasons in
// checkToolCall; Ingress builds the Ask, applies what the session
// remembers, and audit mode, in one place.
//
// "Allow for this session" is remembered per tool name and set of
// entries that asked: a later call of the same tool (any arguments) that
// the same entries ask about is allowed without asking; a call that
// another entry asks about is asked again. It lasts as long as the
// Session (one client connection, one mcpguard process) and is never
// written anywhere. A policy reload keeps it only for entries that still
// say the same (see askDefinition).

// DefaultAskTimeout is how long a held call waits for the user's answer:
// under the TypeScript SDK client's default request timeout (60 s), so
// that the agent reads mcpguard's answer rather than its own timeout.
const DefaultAskTimeout = 50 * time.Second

// maxAskTimeout bounds approval.timeout.
const maxAskTimeout = time.Hour

// approvalV1 is the approval: section.
type approvalV1 struct {
	Timeout string `json:"timeout"`
}

func compileApproval(a *approvalV1) (time.Duration, error) {
	if a == nil || a.Timeout == "" {
		return DefaultAskTimeout, nil
	}
	d, err := time.ParseDuration(a.Timeout)
	if err != nil {
		return 0, err
	}
	if d < time.Second || d > maxAskTimeout {
		return 0, fmt.Errorf("%s: want 1s to %s", d, maxAskTimeout)
	}
	return d, nil
}

// Ask is a call that waits for the user's approval: what to ask them.
type Ask struct {
	approval.Question
	// Remembered: the user allowed such calls for this session; the
	// call is forwarded without asking (and the relay logs it).
	Remembered bool
	// Source is the policy file, named in the rejection when the client
	// cannot ask.
	Source string
	key    string // what "allow for this session" remembers (see Remember)
}

// Rules returns the entries that ask, comma-separated, for the log.
func (a *Ask) Rules() string {
	rules := make([]string, len(a.Reasons))
	for i, r := range a.Reasons {
		rules[i] = r.Rule
	}
	return strings.Join(rules, ",")
}

// newAsk builds the Ask of a call of tool with raw arguments args,
// marked Remembered when the session holds an allow for it.
func (s judge) newAsk(tool string, args jsontext.Value, reasons []approval.Reason) *Ask {
	p := s.policy()
	rules := make([]string, len(reasons))
	for i, r := range reasons {
		rules[i] = r.Rule + "=" + p.askDefinition(r.Rule)
	}
	slices.Sort(rules)
	key := tool + "\x00" + strings.Join(slices.Compact(rules), "\x00")
	a := &Ask{Question: approval.Question{Server: s.policy().Server, Tool: tool, Reasons: reasons,
		Arguments: args.Clone(), Timeout: s.policy().AskTimeout}, Source: s.policy().Source, key: key}
	s.mu.Lock()
	a.Remembered = s.approved[key]
	s.mu.Unlock()
	return a
}

// askDefinition is what an approval under the policy entry rule is an
// approval of, so that "allow for this session" outlives a policy reload
// (SIGHUP) only for entries that still say the same: a tools entry is
// its name (it asks about every call of the tool), an ingress rule its
// text as written (ingress[2] may be another rule after a reload), and
// any other entry the policy itself (a reload asks again).
func (p *Policy) askDefinition(rule string) string {
	if strings.HasPrefix(rule, "tools.") {
		return ""
	}
	if n, ok := strings.CutPrefix(rule, "ingress["); ok {
		if i, err := strconv.Atoi(strings.TrimSuffix(n, "]")); err == nil && i >= 0 && i < len(p.ingress) && p.ingress[i].rule == rule {
			return p.ingress[i].def
		}
	}
	return fmt.Sprintf("policy %p", p)
}

// fingerprint is a short hash of a policy entry's text, for
// askDefinition: the text itself may be large.
func fingerprint(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:16])
}

// maxApprovals bounds what a session remembers: keys hold tool names the
// agent chose.
const maxApprovals = 1024

// Remember records the user's "allow for this session" for calls like a.
func (s *Session) Remember(a *Ask) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.approved == nil {
		s.approved = map[string]bool{}
	}
	if len(s.approved) < maxApprovals {
		s.approved[a.key] = true
	}
}

// IngressAnswered judges a request that carries the user's answer about
// itself (a 2026-07-28 client's retry of a call mcpguard asked about,
// the answer bound to it: see SameCall) as Ingress does, except that
// rate limits neither refuse nor count it: the call was checked and
// counted when it was asked, and the retry is that call again, not
// another one. The relay takes each answer once, so an asked call
// passes uncounted at most once.
func (s *Session) IngressAnswered(m *message.Message) Verdict {
	j := s.now()
	j.answered = true
	return j.ingress(m)
}

// SameCall reports whether a call of tool with raw arguments args is the
// call a asks about: the same tool name, and the same arguments once
// both are in canonical form (RFC 8785 member order, spacing and string
// escapes aside; null and absent arguments are the same) with numbers of
// the same value (see sameNumber). An answer the user gave about a
// answers no other call: a 2026-07-28 client retries its call with the
// answer (see approval.InputRequired), and a retry with other arguments
// must not pass on it.
func (a *Ask) SameCall(tool string, args jsontext.Value) bool {
	return tool == a.Tool && sameArgs(canonicalArgs(args), canonicalArgs(a.Arguments))
}

// canonicalArgs is args with its members in canonical order and its
// strings in canonical spelling, numbers as written; nil for none.
// Arguments that do not canonicalise (they parsed strictly, so never)
// stay as they are.
func canonicalArgs(args jsontext.Value) []byte {
	if len(args) == 0 || args.Kind() == 'n' {
		return nil
	}
	c := args.Clone()
	if c.Canonicalize(jsontext.CanonicalizeRawInts(false), jsontext.CanonicalizeRawFloats(false)) != nil {
		return args
	}
	return c
}

// sameArgs compares two canonicalArgs token by token: numbers by
// sameNumber, everything else exactly.
func sameArgs(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	da, db := jsontext.NewDecoder(bytes.NewReader(a)), jsontext.NewDecoder(bytes.NewReader(b))
	for {
		ta, errA := da.ReadToken()
		tb, errB := db.ReadToken()
		switch {
		case errA != nil || errB != nil:
			return errA == io.EOF && errB == io.EOF
		case ta.Kind() != tb.Kind():
			return false
		case ta.Kind() == '0':
			if !sameNumber(ta.String(), tb.String()) {
				return false
			}
		case ta.Kind() == '"' && ta.String() != tb.String():
			return false
		}
	}
}

// sameNumber reports whether two JSON number literals are the same
// number to every server: spellings of one value (1, 1.0, 1e0; 0 and
// -0) below 2^53 in magnitude, and only the same spelling past it (where
// a double rounds integers) or past a double's range. RFC 8785 reads every number as a double: it takes
// 12345678901234567891 for 12345678901234567890 and 1e400 for 1e401,
// which a server that reads integers exactly (Python, Go's int64, a
// database id) takes for another account, row or amount than the one
// the user approved.
func sameNumber(a, b string) bool {
	if a == b {
		return true
	}
	x, errX := strconv.ParseFloat(a, 64)
	y, errY := strconv.ParseFloat(b, 64)
	return errX == nil && errY == nil && x == y && math.Abs(x) < 1<<53
}

// SameEntries reports whether a and b are asked for by the same policy
// entries, as they stand (see askDefinition): an answer given under one
// policy is not taken for an answer under a reloaded one that asks for
// other reasons.
func (a *Ask) SameEntries(b *Ask) bool { return a.key == b.key }

// AskOutcome is why a held call is not forwarded.
type AskOutcome uint8

const (
	AskUnavailable AskOutcome = iota // the client did not declare form elicitation
	AskDenied                        // the user denied, declined or dismissed the prompt, or the answer was unusable
	AskTimedOut                      // no answer within the timeout
	AskUnbound                       // the answer a retried call carries is not one about this call (revision 2026-07-28)
)

// AskRejection is the rejection of a held call that is not forwarded;
// how says how the answer came (approval.ReadAnswer's words), for
// AskDenied, or why the client cannot be asked, for AskUnavailable.
func (a *Ask) AskRejection(o AskOutcome, how string) *message.Rejection {
	tool, rules := clean(a.Tool), a.Rules()
	entries := "policy entry " + rules
	if len(a.Reasons) > 1 {
		entries = "policy entries " + rules
	}
	rej := &message.Rejection{Tool: tool, Rule: rules, Summary: "Tool call not approved by the user"}
	if len(a.Reasons) > 0 {
		rej.Field = clean(a.Reasons[0].Field)
	}
	switch o {
	case AskUnavailable:
		rej.ErrorCode = codes.ApprovalRequired
		rej.Reason = "this call of tool " + tool + " needs the user's approval (" + entries + "), and mcpguard cannot ask the user through this MCP client (" + clean(how) + ")"
		rej.Remediation = "Tell the user: to allow this call, use an MCP client that supports elicitation so mcpguard can ask, or change " + entries + " in " + clean(a.Source) + " from ask to allow and restart the server."
	case AskTimedOut:
		rej.ErrorCode, rej.Retryable = codes.ApprovalTimeout, true
		rej.Reason = "the user did not answer mcpguard's approval prompt for tool " + tool + " within " + a.Timeout.String() + " (" + entries + ")"
		rej.Remediation = "Retry the call when the user can answer the approval prompt, or ask the user whether to proceed."
	case AskUnbound:
		rej.ErrorCode = codes.ApprovalDenied
		rej.Reason = "the approval answer this call of tool " + tool + " carries does not approve it (" + clean(how) + "; " + entries + ")"
		rej.Remediation = "Call the tool again without mcpguard's inputResponses, so that mcpguard asks the user about this call."
	default:
		rej.ErrorCode = codes.ApprovalDenied
		rej.Reason = "the user did not approve this call of tool " + tool + " (" + clean(how) + "; " + entries + ")"
		rej.Remediation = "Do not retry this call; ask the user what to do instead."
	}
	rej.Error = "rejected MCP input: " + rej.Reason
	return rej
}

// auditRejection is what audit mode logs for a call it forwards without
// asking.
func (a *Ask) auditRejection() *message.Rejection {
	rej := a.AskRejection(AskUnavailable, "")
	rej.Reason = "this call of tool " + clean(a.Tool) + " needs the user's approval (policy entry " + a.Rules() + "); mode: audit forwards it without asking"
	rej.Error = "rejected MCP input: " + rej.Reason
	return rej
}

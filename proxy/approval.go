package proxy

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rs/zerolog"
	"github.com/sourcegraph/jsonrpc2"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/policy/approval"
	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/proxy/eventlog"
	"github.com/mcpguard/mcpguard/rules/rawjson"
)

// maxHeldAsks bounds the calls waiting for the user at once; past it a
// call that asks is denied at once (an agent that fires hundreds of
// asking calls is not going to get hundreds of prompts).
const maxHeldAsks = 16

// approvals holds the calls that wait for the user's approval
// (policy.Verdict.Ask): each one's id stays reserved in the in-flight
// table, its line is kept, and mcpguard asks the user with an
// elicitation/create request of its own to the client. The answer, the
// timeout or the agent's cancellation ends the wait; nothing blocks the
// relay meanwhile (other calls and replies flow both ways).
//
// A client of protocol revision 2026-07-28 (no initialize; its
// capabilities in each request's _meta) takes no requests: mcpguard
// answers the call at once with an incomplete result whose one
// inputRequests entry is the same elicitation, under a key mcpguard
// mints (the prompt id's prefix and a number), and forwards nothing. The
// client retries the call with the user's answer in inputResponses under
// that key; the answer is taken once, only before the approval timeout
// has passed since the asking, and only for the same call (tool and
// arguments, see policy.Ask.SameCall). The server never sees the key:
// the retry reaches it with the asked call's own inputResponses (a
// server's earlier round, kept here) in place of mcpguard's answer.
//
// The prompts' ids are strings made of a fixed prefix and 128 random bits
// drawn at start. The client's answers come back in the id space of the
// requests the client receives, which mcpguard shares with the server's
// own requests (sampling, roots, elicitation): a server request whose id
// has the prefix is refused (it could only have guessed it), so an answer
// with such an id is always mcpguard's and never reaches the server.
type approvals struct {
	r      *relay
	prefix string
	// canAsk: the client declared form elicitation at initialize;
	// initialized: it sent initialize at all.
	canAsk, initialized atomic.Bool

	mu     sync.Mutex
	seq    int
	byID   map[string]*heldAsk      // prompt id → held call
	byCall map[message.Key]*heldAsk // the call's id → held call
	inline map[string]*inlineAsk    // inputRequests key → call asked about in a result
	closed bool
}

// inlineAsk is a call asked about in an input_required result (revision
// 2026-07-28): what was asked, until the client's retry brings the
// answer or the deadline passes.
type inlineAsk struct {
	ask       *policy.Ask
	responses jsontext.Value // the asked call's own inputResponses, nil for none
	deadline  time.Time
}

// inlineAnswer is what a retried call carries in answer to mcpguard's
// inputRequests: the answer, or why it answers nothing (problem).
type inlineAnswer struct {
	ask     *policy.Ask // what was asked; nil when the key is unknown
	answer  approval.Answer
	how     string // approval.ReadAnswer's words
	problem string // why the answer does not count; "" when it does
	timeout bool   // the problem is that the answer came too late
}

// heldAsk is one call waiting for the user.
type heldAsk struct {
	promptID string
	key      message.Key
	raw      []byte // the call's line, forwarded if the user allows it
	verdict  policy.Verdict
	method   string
	logID    string
	timer    *time.Timer
}

func newApprovals(r *relay) *approvals {
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	return &approvals{r: r, prefix: "mcpguard-approval-" + hex.EncodeToString(nonce[:]) + "-",
		byID: map[string]*heldAsk{}, byCall: map[message.Key]*heldAsk{}, inline: map[string]*inlineAsk{}}
}

// noteInitialize learns from the client's initialize request whether it
// can be asked with a request of mcpguard's. A session without
// initialize is a 2026-07-28 client's, asked inside a result (askInline).
func (a *approvals) noteInitialize(m *message.Message) {
	a.canAsk.Store(approval.ClientCanAsk(m.Params))
	a.initialized.Store(true)
}

// owns reports whether id is one of mcpguard's prompts: the client's
// answer to it is consumed here; a server request with it is refused.
func (a *approvals) owns(id jsontext.Value) bool {
	k := message.KeyOf(id)
	return k.IsString && strings.HasPrefix(k.Str, a.prefix)
}

// hold asks the user about m, whose id is already reserved in the
// in-flight table under key. The call is answered (refused) at once when
// the client cannot be asked or too many calls wait.
func (a *approvals) hold(key message.Key, m *message.Message, v policy.Verdict) {
	ask := v.Ask
	if ask.Server == "" {
		ask.Server = ServerName(a.r.cfg.Policy, a.r.cfg.Argv)
	}
	h := &heldAsk{key: key, verdict: v, method: m.Method, logID: logID(m.ID)}
	if !a.initialized.Load() {
		a.askInline(h, m)
		return
	}
	h.raw = append([]byte(nil), m.Raw...)
	if !a.canAsk.Load() {
		a.refuse(h, policy.AskUnavailable, "it did not declare the elicitation capability")
		return
	}
	a.mu.Lock()
	if a.closed || len(a.byID) >= maxHeldAsks {
		why := "too many calls wait for the user's approval"
		if a.closed {
			why = "the MCP server is gone"
		}
		a.mu.Unlock()
		a.refuse(h, policy.AskDenied, why)
		return
	}
	a.seq++
	h.promptID = a.prefix + strconv.Itoa(a.seq)
	a.byID[h.promptID] = h
	a.byCall[key] = h
	h.timer = time.AfterFunc(ask.Timeout, func() { a.r.turns.do(func() { a.expire(h.promptID) }) })
	a.mu.Unlock()
	a.r.logApproval(h, eventlog.ActionAsked, "held for the user's approval")

	req := `{"jsonrpc":"2.0","id":` + strconv.Quote(h.promptID) + `,"method":"elicitation/create","params":` + string(approval.Params(ask.Question)) + `}`
	a.r.answerAgent([]byte(req))
}

// askInline asks a 2026-07-28 client about the call h: the call is
// answered at once with an input_required result holding the prompt,
// and what was asked is kept under the key minted for it (see
// approvals). A request that declares no form elicitation in its _meta
// gets OP_APPROVAL_REQUIRED.
func (a *approvals) askInline(h *heldAsk, m *message.Message) {
	ask := h.verdict.Ask
	declared, canAsk := approval.RequestCanAsk(m.Params)
	if !canAsk {
		why := "its request declares no form elicitation in _meta." + approval.MetaClientCapabilities
		if !declared {
			why = "the session has no initialize and the request declares no client capabilities"
		}
		a.refuse(h, policy.AskUnavailable, why)
		return
	}
	now := time.Now()
	a.mu.Lock()
	for k, in := range a.inline {
		if now.After(in.deadline) {
			delete(a.inline, k)
		}
	}
	if a.closed || len(a.inline) >= maxHeldAsks {
		a.mu.Unlock()
		a.refuse(h, policy.AskDenied, "too many calls wait for the user's approval")
		return
	}
	a.seq++
	key := a.prefix + strconv.Itoa(a.seq)
	a.inline[key] = &inlineAsk{ask: ask, responses: m.InputResponses.Clone(), deadline: now.Add(ask.Timeout)}
	a.mu.Unlock()
	a.r.logApproval(h, eventlog.ActionAsked, "asked the user in an input_required result (protocol revision 2026-07-28)")
	f, ok := a.r.pending.take(h.key)
	if !ok {
		return
	}
	result := approval.InputRequired(key, ask.Question, rawjson.Member(m.Params, "requestState"))
	a.r.answerAgent([]byte(`{"jsonrpc":"2.0","id":` + string(f.id()) + `,"result":` + string(result) + `}`))
	a.r.traceAsked(f, ask)
}

// answered reads the answer a request carries to one of mcpguard's
// inputRequests (revision 2026-07-28: the client's retry, the answer in
// inputResponses under mcpguard's key). It returns m and nil when m
// carries none. Otherwise it returns the request to judge and forward in
// m's place, without mcpguard's key: m with the asked call's own
// inputResponses put back when the answer is about this very call, else
// with mcpguard's keys removed; and the answer, taken (a key answers
// once), or why it answers nothing (a key mcpguard did not mint or has
// taken, an answer past the deadline or about another call, two answers).
//
// The error is for a request that cannot be rewritten (it parsed
// strictly, and so does what is cut from it: never); it must be refused.
func (a *approvals) answered(m *message.Message) (*message.Message, *inlineAnswer, error) {
	responses := m.InputResponses
	if m.Kind != message.Request || responses.Kind() != '{' {
		return m, nil, nil
	}
	var keys []string
	var answer jsontext.Value
	rawjson.EachMember(responses, func(name string, v jsontext.Value) error {
		if strings.HasPrefix(name, a.prefix) {
			keys, answer = append(keys, name), v
		}
		return nil
	})
	if len(keys) == 0 {
		return m, nil, nil
	}
	ans := &inlineAnswer{}
	var restored jsontext.Value // the asked call's own inputResponses
	now := time.Now()
	a.mu.Lock()
	for _, k := range keys {
		if in := a.inline[k]; in != nil {
			delete(a.inline, k)
			ans.ask = in.ask
			switch {
			case now.After(in.deadline):
				ans.problem, ans.timeout = "the answer came after the approval timeout", true
			case m.Method != "tools/call" || !in.ask.SameCall(m.Name, m.Arguments):
				ans.problem = "the answer was given about another call: the tool or the arguments differ"
			default:
				ans.answer, ans.how = approval.ReadAnswer(answer, nil)
				restored = in.responses
			}
		}
	}
	a.mu.Unlock()
	switch {
	case len(keys) > 1:
		ans.problem, ans.timeout = "the call carries more than one answer to mcpguard's prompts", false
	case ans.ask == nil:
		ans.problem = "an answer to a prompt mcpguard did not send, or whose answer it has taken already"
	}
	if ans.problem == "" {
		responses = restored
	} else {
		responses = withoutKeys(responses, keys)
	}
	out, err := withResponses(m, responses)
	if err != nil {
		return nil, nil, errors.New("a call carrying an answer to mcpguard's prompt that cannot be rewritten without it")
	}
	return out, ans, nil
}

// decide settles a call that carries an answer to mcpguard's
// inputRequests (ans), v being the verdict on the call as it is to be
// forwarded: it reports true when the call is refused (or asked about
// again) and false when it goes on to the server. A call the policy
// asks about goes on only with an answer that counts and allows it; one
// asked about for other reasons than the answer was given for (a reload
// between) is asked about again. A call the policy no longer asks about
// goes on, unless the user denied this very call.
func (a *approvals) decide(key message.Key, m *message.Message, v policy.Verdict, ans *inlineAnswer) bool {
	h := &heldAsk{key: key, verdict: v, method: m.Method, logID: logID(m.ID)}
	switch {
	case v.Ask == nil && ans.problem == "" && ans.answer == approval.Deny:
		h.verdict.Ask = ans.ask
		a.refuse(h, policy.AskDenied, ans.how)
		return true
	case v.Ask == nil:
		a.r.log.Log(eventlog.Event{Level: zerolog.InfoLevel, Event: eventlog.EventApproval, Direction: eventlog.Ingress,
			Method: m.Method, Tool: m.Name, ID: h.logID, Action: eventlog.ActionNone, PolicyText: true,
			Message: "approval: the policy does not ask about this call; the answer to mcpguard's prompt it carries is removed"})
		return false
	case ans.problem != "":
		o := policy.AskUnbound
		if ans.timeout {
			o = policy.AskTimedOut
		}
		a.refuse(h, o, ans.problem)
		return true
	case ans.answer == approval.Deny:
		a.refuse(h, policy.AskDenied, ans.how)
		return true
	case !v.Ask.Remembered && !ans.ask.SameEntries(v.Ask):
		a.hold(key, m, v)
		return true
	}
	if ans.answer == approval.AllowSession {
		a.r.session.Remember(v.Ask)
	}
	a.r.logApproval(h, eventlog.ActionAllowed, ans.how)
	return false
}

// withoutKeys is the inputResponses object obj without the members keys.
func withoutKeys(obj jsontext.Value, keys []string) jsontext.Value {
	for _, k := range keys {
		if cut, err := rawjson.SetMember(obj, k, nil); err == nil {
			obj = cut
		}
	}
	return obj
}

// withResponses returns m with params.inputResponses set to responses,
// removed when responses is nil or an empty object, parsed again.
func withResponses(m *message.Message, responses jsontext.Value) (*message.Message, error) {
	if string(responses) == "{}" { // compact, as every line is once parsed
		responses = nil
	}
	params, err := rawjson.SetMember(m.Params, "inputResponses", responses)
	if err != nil {
		return nil, err
	}
	raw, err := rawjson.SetMember(m.Raw, "params", params)
	if err != nil {
		return nil, err
	}
	return message.Parse(raw)
}

// take removes the held call with prompt id, nil when none waits.
func (a *approvals) take(promptID string) *heldAsk {
	a.mu.Lock()
	defer a.mu.Unlock()
	h := a.byID[promptID]
	if h != nil {
		delete(a.byID, promptID)
		delete(a.byCall, h.key)
		h.timer.Stop()
	}
	return h
}

// answer takes the client's response to a prompt: the call is forwarded
// when the user allowed it, refused otherwise.
func (a *approvals) answer(m *message.Message) {
	h := a.take(message.KeyOf(m.ID).Str)
	if h == nil {
		a.r.log.Log(eventlog.Event{Level: zerolog.WarnLevel, Event: eventlog.EventDropped, Direction: eventlog.Ingress,
			ID: logID(m.ID), Action: eventlog.ActionDropped,
			Message: "an answer to an approval prompt that no call waits for (answered already, timed out or cancelled)"})
		return
	}
	answer, how := approval.ReadAnswer(m.Result, m.Error)
	if answer == approval.Deny {
		a.refuse(h, policy.AskDenied, how)
		return
	}
	if answer == approval.AllowSession {
		a.r.session.Remember(h.verdict.Ask)
	}
	a.r.logApproval(h, eventlog.ActionAllowed, how)
	a.r.forwardHeld(h.key, h.raw)
}

// expire denies the call whose prompt got no answer in time, and tells
// the client to close the prompt.
func (a *approvals) expire(promptID string) {
	h := a.take(promptID)
	if h == nil {
		return
	}
	a.cancelPrompt(promptID, "mcpguard stopped waiting for an answer")
	a.refuse(h, policy.AskTimedOut, "")
}

// cancel ends the wait of the call with key, which the agent cancelled:
// its prompt is withdrawn. It reports whether the call was held.
func (a *approvals) cancel(key message.Key) bool {
	a.mu.Lock()
	h := a.byCall[key]
	a.mu.Unlock()
	if h == nil || a.take(h.promptID) == nil {
		return false
	}
	a.cancelPrompt(h.promptID, "the agent cancelled the call")
	a.r.logApproval(h, eventlog.ActionDropped, "the agent cancelled the call while the user was asked")
	return true
}

// cancelPrompt tells the client that mcpguard no longer waits for the
// answer to a prompt.
func (a *approvals) cancelPrompt(promptID, reason string) {
	a.r.answerAgent(cancelled(promptID, reason))
}

// cancelled is the notification that withdraws the prompt promptID.
func cancelled(promptID, reason string) []byte {
	return []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` +
		strconv.Quote(promptID) + `,"reason":` + strconv.Quote(reason) + `}}`)
}

// refuse answers a held call with its rejection, and logs it.
func (a *approvals) refuse(h *heldAsk, o policy.AskOutcome, how string) {
	rej := h.verdict.Ask.AskRejection(o, how)
	a.r.log.Log(eventlog.Event{Level: zerolog.WarnLevel, Event: eventlog.EventRejected, Direction: eventlog.Ingress,
		Method: h.method, Tool: h.verdict.Ask.Tool, ID: h.logID, ErrorCode: rej.ErrorCode, Field: rej.Field,
		Rule: rej.Rule, Action: eventlog.ActionRejected, Message: rej.Error, PolicyText: true})
	f, ok := a.r.pending.take(h.key)
	if !ok {
		return // the server went away and the call was answered
	}
	v := h.verdict
	v.Rejection, v.Audit = rej, false
	a.r.answerAgent(v.Reply(f.id()))
	a.r.traceRefused(f, rej)
}

// stop ends every wait at the end of a run: the client is told to close
// each open prompt (the calls are answered by failInFlight, which
// flushes).
func (a *approvals) stop() {
	a.mu.Lock()
	a.closed = true
	ids := make([]string, 0, len(a.byID))
	for id, h := range a.byID {
		h.timer.Stop()
		ids = append(ids, id)
	}
	clear(a.byID)
	clear(a.byCall)
	clear(a.inline)
	a.mu.Unlock()
	slices.Sort(ids)
	for _, id := range ids {
		a.r.replyToAgent(cancelled(id, "the MCP server is gone"))
	}
}

// logApproval writes one line for a held call's wait: asked, allowed.
func (r *relay) logApproval(h *heldAsk, action eventlog.Action, what string) {
	ask := h.verdict.Ask
	r.log.Log(eventlog.Event{Level: zerolog.InfoLevel, Event: eventlog.EventApproval, Direction: eventlog.Ingress,
		Method: h.method, Tool: ask.Tool, ID: h.logID, Rule: ask.Rules(), Action: action,
		Message: "approval: " + what, PolicyText: true})
}

// forwardHeld sends a call held by mcpguard to the server
// (queueToServer), unless it is no longer in flight (cancelled, or
// answered because the server went away).
func (r *relay) forwardHeld(key message.Key, raw []byte) {
	if !r.pending.has(key) {
		return
	}
	if r.queueToServer(raw) != nil {
		if f, ok := r.pending.take(key); ok {
			r.answerAgent(message.ErrorReply(f.id(), jsonrpc2.CodeInternalError, "mcpguard: the MCP server is not reading its input", nil))
		}
	}
}

package proxy

import (
	"crypto/rand"
	"encoding/hex"
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
	closed bool
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
		byID: map[string]*heldAsk{}, byCall: map[message.Key]*heldAsk{}}
}

// noteInitialize learns from the client's initialize request whether it
// can be asked. A 2026-07-28 client (server/discover, no initialize)
// is never asked: servers there do not send requests.
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
	h := &heldAsk{key: key, raw: append([]byte(nil), m.Raw...), verdict: v, method: m.Method, logID: logID(m.ID)}
	if !a.canAsk.Load() {
		why := "it did not declare the elicitation capability"
		if !a.initialized.Load() {
			why = "the session has no initialize, as in protocol revision 2026-07-28, where mcpguard does not ask"
		}
		a.refuse(h, policy.AskUnavailable, why)
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

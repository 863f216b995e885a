package proxy

import (
	"time"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/proxy/eventlog"
	"github.com/mcpguard/mcpguard/proxy/telemetry"
)

// The relay's side of OpenTelemetry export (package telemetry): each
// request from the agent is recorded from its line read to its reply
// written. With export off, r.tel is nil and each of these is a nil check:
// no clock is read.

// arrival is when the line in hand was read, for telemetry; the zero time
// when export is off.
func (r *relay) arrival() time.Time {
	if r.tel == nil {
		return time.Time{}
	}
	return time.Now()
}

// traceRequest starts the record of a request that Ingress judged and the
// relay is about to forward (audited or allowed).
func (r *relay) traceRequest(m *message.Message, call policy.Call, v policy.Verdict) *telemetry.Call {
	if r.tel == nil || m.Kind != message.Request {
		return nil
	}
	c := r.tel.Begin(r.ingressArrived, call, len(m.Raw))
	if v.Rejection != nil {
		c.Judged(eventlog.ActionAudited, v.Rejection.ErrorCode, v.Rejection.Rule)
	} else {
		c.Judged(eventlog.ActionNone, "", "")
	}
	return c
}

// traceRejected records a request that mcpguard answered with a rejection.
func (r *relay) traceRejected(m *message.Message, v policy.Verdict) {
	if r.tel == nil || m.Kind != message.Request {
		return
	}
	c := r.tel.Begin(r.ingressArrived, policy.Call{Method: m.Method, Tool: m.Name}, len(m.Raw))
	c.Judged(eventlog.ActionRejected, v.Rejection.ErrorCode, v.Rejection.Rule)
	r.tel.End(c, telemetry.Rejected)
}

// traceRefused ends the record of a call held in flight (for the tools
// list, for the user's approval) that mcpguard then answered with rej.
func (r *relay) traceRefused(f inFlight, rej *message.Rejection) {
	f.trace.Judged(eventlog.ActionRejected, rej.ErrorCode, rej.Rule)
	r.tel.End(f.trace, telemetry.Rejected)
}

// traceAsked ends the record of a call that mcpguard answered with an
// input_required result asking the user about it (revision 2026-07-28).
func (r *relay) traceAsked(f inFlight, ask *policy.Ask) {
	f.trace.Judged(eventlog.ActionAsked, "", ask.Rules())
	r.tel.End(f.trace, telemetry.Asked)
}

// traceReply ends the record of a call whose answer was written for the
// agent.
func (r *relay) traceReply(f inFlight, m *message.Message, rewrites []policy.Rewrite) {
	if f.trace == nil {
		return
	}
	f.trace.Reply(r.egressArrived, len(m.Raw), rewrites)
	r.tel.End(f.trace, telemetry.Replied)
}

// traceFailed ends the record of a call that got mcpguard's error reply
// instead of the server's answer.
func (r *relay) traceFailed(f inFlight) {
	r.tel.End(f.trace, telemetry.Failed)
}

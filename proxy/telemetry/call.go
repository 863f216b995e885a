package telemetry

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/proxy/eventlog"
)

// Outcome is how a call ended, as mcpguard saw it.
type Outcome string

// The outcomes.
const (
	Replied  Outcome = "replied"  // the server answered and the answer was relayed
	Rejected Outcome = "rejected" // mcpguard answered with a rejection; the server never saw it
	Failed   Outcome = "failed"   // the server went away, or its answer could not be relayed
	Asked    Outcome = "asked"    // mcpguard answered with an input_required result asking the user (revision 2026-07-28); the server never saw it
	Relayed  Outcome = "relayed"  // a request of the server's went on to the client
)

// maxEvents bounds the rewrite events one span carries.
const maxEvents = 20

// maxNameBytes caps a method's or tool's name in an attribute.
const maxNameBytes = 128

// Call is one request from the agent that mcpguard judged, from the line
// read to the reply written. The relay fills it on its two goroutines
// (ingress, then egress; the pending table orders them) and hands it to
// End, after which it must not touch it. It holds no value of the
// message: names, codes, sizes and times only.
type Call struct {
	start   time.Time
	method  string
	tool    string
	reqSize int
	ingress time.Duration // reading and judging the request

	action string // eventlog's action: "" (allowed), rejected, audited
	code   string
	rule   string

	respSize  int
	egress    time.Duration // reading and cleaning the reply
	rewrites  int
	canonical []string // the canonicalisers that rewrote the reply, up to maxEvents
	outcome   Outcome
	end       time.Time

	// A request of the server's to the client (ServerRequest), not the
	// agent's: its kind and whether it is an inputRequests entry.
	serverRequest bool
	kind          string
	inResult      bool
}

// Begin starts the record of a request whose line was read at arrived. It
// returns nil (and reads no clock) when e is nil.
func (e *Exporter) Begin(arrived time.Time, c policy.Call, size int) *Call {
	if e == nil {
		return nil
	}
	return &Call{start: arrived, method: name(c.Method), tool: name(c.Tool), reqSize: size}
}

// name makes a method's or tool's name, which the agent chooses, fit for
// an attribute: canonicalised as the log does, and capped.
func name(s string) string {
	s = eventlog.Clean(s)
	if len(s) > maxNameBytes {
		s = strings.ToValidUTF8(s[:maxNameBytes], "")
	}
	return s
}

// Judged records the policy's verdict on the request, now that it is
// forwarded or answered: the action ("" when allowed), its error code and
// the policy entry that decided.
func (c *Call) Judged(action eventlog.Action, code, rule string) {
	if c == nil {
		return
	}
	c.ingress = time.Since(c.start)
	c.action, c.code, c.rule = string(action), code, rule
}

// Reply records the server's answer, read at arrived, now that it is
// written for the agent: its size and what the egress rules rewrote.
func (c *Call) Reply(arrived time.Time, size int, rewrites []policy.Rewrite) {
	if c == nil {
		return
	}
	c.egress = time.Since(arrived)
	c.respSize = size
	c.rewrites = len(rewrites)
	for i := range rewrites {
		if len(c.canonical) == maxEvents {
			break
		}
		c.canonical = append(c.canonical, rewrites[i].Canonicaliser)
	}
}

// End hands c to the exporter, with how it ended. It never blocks: when
// the queue is full, c is dropped and counted.
func (e *Exporter) End(c *Call, o Outcome) {
	if e == nil || c == nil {
		return
	}
	c.outcome, c.end = o, time.Now()
	select {
	case e.calls <- c:
	default:
		e.droppedCalls.Add(1)
	}
}

// ServerRequest records the policy's decision on a request of the
// server's to the client, read at arrived: sampling/createMessage,
// elicitation/create, roots/list (kind: sampling, elicitation_form,
// elicitation_url, roots; "" for another method), sent on its own or as
// an entry of a 2026-07-28 result's inputRequests (inResult). It becomes
// one span and one mcpguard.decisions count (direction egress) with the
// method, the kind, the action (allowed, audited, rejected), the code
// and the rule; never the request's values, nor an inputRequests key
// (the server chose it). Like End, it never blocks.
func (e *Exporter) ServerRequest(arrived time.Time, method, kind, action, code, rule string, inResult bool) {
	if e == nil {
		return
	}
	c := &Call{start: arrived, method: name(method), serverRequest: true, kind: kind, inResult: inResult,
		action: action, code: code, rule: rule, outcome: Relayed}
	if action == string(eventlog.ActionRejected) {
		c.outcome = Rejected
	}
	c.end = time.Now()
	c.ingress = c.end.Sub(arrived)
	select {
	case e.calls <- c:
	default:
		e.droppedCalls.Add(1)
	}
}

// drainEvery is how often the metrics stage takes what the relay queued.
// Waiting on the channel instead would wake this goroutine for every
// call, a context switch the relay's loops pay for on a busy machine;
// QueueSize calls per drainEvery is 200,000 calls a second.
const drainEvery = 10 * time.Millisecond

// metricsStage records each call's metrics and passes it on to the span
// stage. Recording is in memory (the periodic reader exports), so this
// stage never waits on the network.
func (e *Exporter) metricsStage() {
	defer e.done.Done()
	defer close(e.spans)
	tick := time.NewTicker(drainEvery)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			e.drain()
		case <-e.stop:
			e.drain()
			return
		}
	}
}

// drain handles every call queued.
func (e *Exporter) drain() {
	for {
		select {
		case c := <-e.calls:
			e.handle(c)
		default:
			if e.mp != nil {
				e.inst.flush(e.cfg.Server)
			}
			return
		}
	}
}

func (e *Exporter) handle(c *Call) {
	if e.mp != nil {
		e.inst.record(e.cfg.Server, c)
		if e.inst.pending() >= maxCachedSets { // made-up tool names: bounded
			e.inst.flush(e.cfg.Server)
		}
	}
	if e.tp == nil {
		return
	}
	select {
	case e.spans <- c:
	default:
		e.droppedSpans.Add(1)
	}
}

// spanStage turns calls into spans. It may block in the batch processor
// when the collector is slow; the calls meanwhile wait in e.spans, or are
// dropped there and counted.
func (e *Exporter) spanStage() {
	defer e.done.Done()
	for c := range e.spans {
		e.span(c)
	}
}

// Attribute keys of mcpguard's own (the others are OpenTelemetry's
// semantic conventions for MCP and errors).
const (
	keyServer        = attribute.Key("mcpguard.server")
	keyAction        = attribute.Key("mcpguard.decision.action")
	keyCode          = attribute.Key("mcpguard.decision.code")
	keyRule          = attribute.Key("mcpguard.decision.rule")
	keyOutcome       = attribute.Key("mcpguard.outcome")
	keyDirection     = attribute.Key("mcpguard.direction")
	keyRequestSize   = attribute.Key("mcpguard.request.size")
	keyResponseSize  = attribute.Key("mcpguard.response.size")
	keyIngress       = attribute.Key("mcpguard.ingress.duration")
	keyEgress        = attribute.Key("mcpguard.egress.duration")
	keyRewrites      = attribute.Key("mcpguard.egress.rewrites")
	keyCanonicaliser = attribute.Key("mcpguard.canonicaliser")
	keyDroppedStage  = attribute.Key("mcpguard.telemetry.stage")
	keyRequestKind   = attribute.Key("mcpguard.server_request.kind")
	keyInputRequest  = attribute.Key("mcpguard.server_request.input_request")

	actionAllowed = "allowed"
	eventRewrite  = "mcpguard.rewrite"
)

// action is the call's action as exported: "allowed" rather than empty.
func (c *Call) actionName() string {
	if c.action == "" {
		return actionAllowed
	}
	return c.action
}

func (e *Exporter) span(c *Call) {
	name, kind := c.method, kindServer
	if c.tool != "" {
		name += " " + c.tool // the semantic conventions' "{mcp.method.name} {target}"
	}
	if c.serverRequest {
		kind = kindClient // a request mcpguard relays to the client
	}
	e.startOpts = append(e.startOpts[:0], kind, trace.WithTimestamp(c.start))
	_, span := e.tracer.Start(context.Background(), name, e.startOpts...)
	if !span.IsRecording() {
		span.End() // sampled out (OTEL_TRACES_SAMPLER): nothing more to build
		return
	}
	attrs := e.attrs[:0]
	attrs = append(attrs,
		semconv.McpMethodNameKey.String(c.method),
		keyAction.String(c.actionName()),
		keyOutcome.String(string(c.outcome)),
	)
	if c.serverRequest {
		attrs = append(attrs, keyDirection.String(eventlog.Egress), keyInputRequest.Bool(c.inResult))
		if c.kind != "" {
			attrs = append(attrs, keyRequestKind.String(c.kind))
		}
	} else {
		attrs = append(attrs, keyRequestSize.Int(c.reqSize), keyIngress.Float64(c.ingress.Seconds()))
	}
	if c.tool != "" {
		attrs = append(attrs, semconv.GenAIToolName(c.tool))
	}
	if c.code != "" {
		attrs = append(attrs, keyCode.String(c.code))
	}
	if c.rule != "" { // with a code, or the entries that asked
		attrs = append(attrs, keyRule.String(c.rule))
	}
	if c.outcome == Replied {
		attrs = append(attrs, keyResponseSize.Int(c.respSize), keyEgress.Float64(c.egress.Seconds()))
		if c.rewrites > 0 {
			attrs = append(attrs, keyRewrites.Int(c.rewrites))
		}
	}
	switch c.outcome {
	case Rejected:
		attrs = append(attrs, semconv.ErrorTypeKey.String(c.code))
		span.SetStatus(codes.Error, c.code)
	case Failed:
		attrs = append(attrs, semconv.ErrorTypeKey.String(string(Failed)))
		span.SetStatus(codes.Error, string(Failed))
	}
	span.SetAttributes(attrs...)
	e.attrs = attrs
	for _, canon := range c.canonical {
		span.AddEvent(eventRewrite, trace.WithAttributes(keyCanonicaliser.String(canon)), trace.WithTimestamp(c.end))
	}
	e.endOpts = append(e.endOpts[:0], trace.WithTimestamp(c.end))
	span.End(e.endOpts...)
}

// The span kinds as start options, made once.
var (
	kindServer trace.SpanStartOption = trace.WithSpanKind(trace.SpanKindServer)
	kindClient trace.SpanStartOption = trace.WithSpanKind(trace.SpanKindClient)
)

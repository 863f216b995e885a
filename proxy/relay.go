package proxy

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rs/zerolog"
	"github.com/sourcegraph/jsonrpc2"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/proxy/eventlog"
	"github.com/mcpguard/mcpguard/proxy/sessionstore"
	"github.com/mcpguard/mcpguard/proxy/telemetry"
	"github.com/mcpguard/mcpguard/rules/codes"
)

// Default size limits of one message, as the policy reference documents.
const (
	DefaultMaxRequestBytes  = 4 << 20
	DefaultMaxResponseBytes = 64 << 20
	DefaultGrace            = 3 * time.Second
)

// Config is one run of the relay.
type Config struct {
	Argv   []string // the server's command line, run without a shell
	Policy *policy.Policy
	Log    *eventlog.Logger
	// Telemetry exports each judged request as a span and metrics; nil
	// means export is off.
	Telemetry *telemetry.Exporter

	MaxRequestBytes  int           // agent to server; 0 means the default
	MaxResponseBytes int           // server to agent; 0 means the default
	Grace            time.Duration // for the server to exit after its stdin closes, and after SIGTERM
	ToolsListTimeout time.Duration // for the tools/list mcpguard sends itself; 0 means the default

	Stdin  io.Reader // from the agent
	Stdout io.Writer // to the agent
	Stderr io.Writer // the server's stderr and mcpguard's own messages
	// RawStderr passes the server's stderr through unchanged instead of
	// line by line through the text canonicaliser.
	RawStderr bool
	// Labels is the state shared by the mcpguard processes of the agent
	// session (see policy.LabelStore); Run uses the session of
	// mcpguard's parent process when it is nil.
	Labels policy.LabelStore
	// Reload, when set, reads the policy again (its file and lock file,
	// with the run's --mode): SIGHUP then reloads instead of reaching the
	// server (see relay.reload).
	Reload func() (*policy.Policy, error)
	// BoundMemory sets the process's soft memory limit to 3x the largest
	// message + 64 MiB as messages come (see memoryBudget): for the
	// mcpguard process, not a test that runs relays in its own.
	BoundMemory bool
	// Server is the server when Start started it before the policy was
	// loaded; nil: Run starts Argv itself.
	Server *Server
}

// ServerName is the name a run is logged under: the policy's server, else
// the base name of the command.
func ServerName(p *policy.Policy, argv []string) string {
	if p != nil && p.Server != "" {
		return p.Server
	}
	if len(argv) == 0 {
		return ""
	}
	return filepath.Base(argv[0])
}

type relay struct {
	cfg     Config
	log     *eventlog.Logger
	session *policy.Session
	server  *downstream
	pending *pendingTable
	// serverReqs are the server's requests the agent has not answered.
	serverReqs *serverRequests
	toAgent    *lineWriter
	toServer   *lineWriter
	tools      *toolsFetch
	// approvals holds the calls that wait for the user (action: ask).
	approvals *approvals
	memory    *memoryBudget
	// labelWarned: the warning that labels cannot be shared was logged.
	labelWarned atomic.Bool
	// toolsListChanged: the server declared tools.listChanged, so the
	// client expects notifications/tools/list_changed (see reload).
	toolsListChanged atomic.Bool
	// turns are the writers beside the egress loop; the run's end waits
	// for them.
	turns turns

	tel *telemetry.Exporter // nil: export off
	// ingressArrived and egressArrived are when the line each loop is
	// judging was read; set only when tel is not nil.
	ingressArrived, egressArrived time.Time
	// egressHead is what the egress loop's HeadCheck found in the line
	// it is judging (see policy.Session.EgressAfter).
	egressHead policy.Head
}

// Run starts the server and relays until the server has exited and its
// output is drained, then returns the server's exit status (127 when it
// could not be started).
func Run(cfg Config) int {
	cfg = cfg.withDefaults()
	srv := cfg.Server
	if srv == nil {
		srv = Start(cfg)
	}
	if srv.err != nil {
		fmt.Fprintf(cfg.Stderr, "mcpguard: cannot start %q: %v\n", srv.argv, srv.err)
		cfg.Log.Log(eventlog.Event{Level: zerolog.ErrorLevel, Event: eventlog.EventStart, Message: "cannot start the MCP server: " + srv.err.Error()})
		return 127
	}
	defer srv.stopSignals()

	for _, w := range cfg.Policy.RootWarnings(cfg.Argv) {
		fmt.Fprintln(cfg.Stderr, "mcpguard: warning: "+w)
		cfg.Log.Log(eventlog.Event{Level: zerolog.WarnLevel, Event: eventlog.EventWarning, Message: w})
	}
	srv.inForceNow(cfg.Policy)

	reserveProcs()
	growPipe(cfg.Stdin)
	growPipe(cfg.Stdout)
	if cfg.Labels == nil {
		labels := sessionstore.ForParent()
		defer labels.Close()
		cfg.Labels = labels
	}
	return serve(cfg, srv.d, srv.reloads, srv.inForce.Store)
}

// withDefaults fills in what cfg leaves zero.
func (cfg Config) withDefaults() Config {
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.ToolsListTimeout <= 0 {
		cfg.ToolsListTimeout = DefaultToolsListTimeout
	}
	if cfg.Log == nil {
		cfg.Log = eventlog.Nop()
	}
	if cfg.Policy == nil {
		cfg.Policy = policy.Baseline()
	}
	return cfg
}

// serve relays between the agent (cfg.Stdin, cfg.Stdout) and a started
// server until the server has exited and its output is drained, and
// returns the server's status. The server is a process in Run; the relay
// conformance tests give it one that runs in the test.
//
// Each receive on reloads reloads the policy (relay.reload); reloaded,
// when set, gets every policy put in force.
func serve(cfg Config, server *downstream, reloads <-chan struct{}, reloaded func(*policy.Policy)) int {
	started := time.Now()
	cfg.Log.Log(eventlog.Event{Level: zerolog.InfoLevel, Event: eventlog.EventStart, Message: "MCP server started",
		Extra: func(e *zerolog.Event) { e.Int("child_pid", server.pid).Str("mode", string(cfg.Policy.Mode)) }})

	session := cfg.Policy.NewSession()
	session.SetServerArgv(cfg.Argv)
	r := &relay{
		cfg:        cfg,
		log:        cfg.Log,
		session:    session,
		server:     server,
		pending:    newPendingTable(),
		serverReqs: newServerRequests(),
		toAgent:    newLineWriter(cfg.Stdout),
		toServer:   server.stdin,
		tel:        cfg.Telemetry,
		memory:     newMemoryBudget(cfg.BoundMemory),
	}
	r.tools = newToolsFetch(r, cfg.ToolsListTimeout)
	defer r.tools.stop()
	r.approvals = newApprovals(r)
	defer r.approvals.stop()
	r.session.OnPin = r.logPin
	r.session.OnServerRequest = func(d policy.ServerRequestDecision) { r.logServerRequest(d, nil) }
	if cfg.Labels != nil {
		session.ShareLabels(cfg.Labels, ServerName(cfg.Policy, cfg.Argv))
	}
	r.session.OnLabel = r.logLabels

	if reloads != nil {
		go func() {
			for range reloads {
				r.turns.do(func() {
					if p := r.reload(); p != nil && reloaded != nil {
						reloaded(p)
					}
				})
			}
		}()
	}
	go r.ingress()
	drained := make(chan struct{})
	go func() {
		r.egress()
		close(drained)
	}()

	select {
	case <-drained:
		// The server closed its output: it can answer nothing more.
		r.failInFlight("the MCP server closed its output before replying")
		server.stop(cfg.Grace)
	case <-server.exited:
		// Give the output the server wrote before exiting time to arrive;
		// a grandchild holding the pipe open must not keep us here.
		select {
		case <-drained:
		case <-time.After(cfg.Grace):
			// A process outside the group may still hold the pipe. The
			// read blocks in the kernel and Close cannot interrupt it:
			// answer what is in flight without waiting for it.
			server.stdout.Close()
		}
		r.failInFlight("the MCP server exited before replying")
	}
	// What the ingress loop or a timer decided to write goes out before
	// the last flush; after it nothing more begins.
	r.turns.end(cfg.Grace)
	r.toAgent.flush()
	// What the server wrote to stderr before exiting goes out first; a
	// process outside the group holding that pipe must not keep us here.
	select {
	case <-server.stderrDone:
	case <-time.After(cfg.Grace):
	}
	status := server.status
	cfg.Log.Log(eventlog.Event{Level: zerolog.InfoLevel, Event: eventlog.EventExit, Message: "MCP server exited",
		Extra: func(e *zerolog.Event) {
			e.Int("status", status).Int64("duration_ms", time.Since(started).Milliseconds())
		}})
	return status
}

// ingress relays the agent's messages to the server until the agent closes
// its side, then stops the server.
func (r *relay) ingress() {
	lines := newLineReader(r.cfg.Stdin, r.cfg.MaxRequestBytes)
	var m message.Message // reused: nothing keeps a message past its turn
	var batches batchCounter
	for {
		if drained, batch := lines.drained(); drained {
			r.flushToServer()
			if batch {
				yieldCPU()
			}
			batches.done()
		} else {
			lines.piece(r.flushToServer)
		}
		line, err := lines.next()
		if !r.turns.begin() {
			// The run has ended: nothing more is relayed, and the
			// server's input closes as when the agent closes its side.
			go r.server.stop(r.cfg.Grace)
			return
		}
		more := r.fromAgentLine(lines, &m, line, err)
		r.turns.done()
		if !more {
			return
		}
	}
}

// fromAgentLine handles what one read from the agent returned, m being
// the ingress loop's message to parse it into; false when the agent has
// closed its side.
func (r *relay) fromAgentLine(lines *lineReader, m *message.Message, line []byte, err error) bool {
	r.memory.read(len(line))
	switch {
	case err == errTooLong:
		r.refuse(&message.Error{Code: jsonrpc2.CodeInvalidRequest, ID: message.SniffIDPrefix(lines.prefix),
			Reason: "message longer than " + strconv.Itoa(r.cfg.MaxRequestBytes) + " bytes"}, nil)
		return true
	case err != nil:
		r.flushToServer()
		go r.server.stop(r.cfg.Grace)
		return false
	case isBlank(line):
		return true
	}
	r.ingressArrived = r.arrival()
	if perr := message.ParseInto(m, line); perr != nil {
		r.refuse(perr.(*message.Error), line)
		return true
	}
	r.fromAgent(m)
	return true
}

func isBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// flushToServer pushes out the requests the ingress side has buffered;
// called before a read that may block, and for a piece of a long batch
// (lineReader.piece). Only the side that writes a stream flushes it in
// its loop, so neither breaks up the other's batches.
func (r *relay) flushToServer() { r.toServer.flush() }

// flushToAgent is flushToServer for the egress side.
func (r *relay) flushToAgent() {
	if err := r.toAgent.flush(); err != nil {
		r.agentGone()
	}
}

// agentGone stops the server once nobody can read its replies.
func (r *relay) agentGone() {
	go r.server.stop(r.cfg.Grace)
}

// refuse answers a line that failed strict parsing. It never reaches the server.
func (r *relay) refuse(e *message.Error, line []byte) {
	rej := message.Malformed(e)
	r.log.Log(eventlog.Event{Level: zerolog.WarnLevel, Event: eventlog.EventMalformed, Direction: eventlog.Ingress,
		ID: logID(e.ID), ErrorCode: rej.ErrorCode, Action: eventlog.ActionRejected, Message: rej.Error, Value: line})
	r.answerAgent(message.RejectionError(e.ID, e.Code, rej))
}

// answerAgent writes a reply that mcpguard itself makes on the ingress side
// (a rejection, an error) and flushes it at once.
func (r *relay) answerAgent(b []byte) {
	r.replyToAgent(b)
	r.flushToAgent()
}

// replyToAgent buffers a line to the agent; the egress loop flushes.
func (r *relay) replyToAgent(b []byte) {
	if err := r.toAgent.writeLine(b); err != nil {
		r.agentGone()
	}
}

// fromAgent judges one parsed message and forwards it if allowed.
func (r *relay) fromAgent(m *message.Message) {
	if m.Kind == message.Notification {
		r.tel.Notification(m.Method, false)
	}
	if m.Kind == message.Response {
		r.answerFromAgent(m)
		return
	}
	if m.Kind == message.Request && m.Method == "initialize" {
		r.approvals.noteInitialize(m)
	}
	var answer *inlineAnswer
	if m.InputResponses != nil { // else it carries no answer
		retry, a, err := r.approvals.answered(m)
		if err != nil {
			r.refuse(&message.Error{Code: jsonrpc2.CodeInvalidRequest, ID: m.ID, Reason: err.Error()}, m.Raw)
			return
		}
		m, answer = retry, a
	}
	if r.session.AwaitsServerSchema(m) && r.holdForTools(m) {
		return
	}
	var v policy.Verdict
	if answer != nil && answer.problem == "" {
		v = r.session.IngressAnswered(m) // counted when it was asked
	} else {
		v = r.session.Ingress(m)
	}
	if v.AskRoots {
		r.logAskRoots(m)
		r.answerAgent(v.Reply(m.ID))
		return
	}
	if v.Rejection != nil {
		r.logVerdict(m, v)
		if !v.Audit {
			if m.Kind == message.Request {
				r.answerAgent(v.Reply(m.ID))
				r.traceRejected(m, v)
			}
			return
		}
	}
	if m.Kind == message.Notification {
		if m.RequestID != nil {
			if key := message.KeyOf(m.RequestID); r.approvals.cancel(key) {
				// Held for the user: the server never saw it.
				r.pending.take(key)
				return
			}
			// A cancelled request may never be answered (MCP asks servers
			// not to), or answered late: its id stays reserved for a
			// while, so that a late answer is not taken for the answer
			// to a new request with the same id.
			r.pending.cancel(message.KeyOf(m.RequestID))
		}
		r.toServerLine(m.Raw)
		return
	}
	key := m.IDKey()
	call := r.session.CallOf(m)
	f := newInFlight(key, m.ID, call)
	if r.tel != nil {
		f.trace = r.traceRequest(m, call, v)
	}
	if err := r.pending.add(key, &f); err != nil {
		if err == errDuplicateID || err == errNoID || err == errCancelledID {
			r.refuse(&message.Error{Code: jsonrpc2.CodeInvalidRequest, ID: m.ID, Reason: err.Error()}, m.Raw)
			return
		}
		event := eventlog.EventLimit
		if err == errGone {
			event = eventlog.EventFailed
		}
		r.log.Log(eventlog.Event{Level: zerolog.WarnLevel, Event: event, Direction: eventlog.Ingress,
			Method: m.Method, Tool: m.Name, ID: logID(m.ID), Action: eventlog.ActionRejected, Message: err.Error()})
		r.answerAgent(message.ErrorReply(m.ID, jsonrpc2.CodeInternalError, "mcpguard: "+err.Error(), nil))
		return
	}
	if (answer != nil || v.Ask != nil) && r.askFirst(key, m, v, answer) { // else it goes on
		return
	}
	if err := r.toServer.writeLine(m.Raw); err != nil {
		if f, ok := r.pending.take(key); ok {
			r.answerAgent(message.ErrorReply(f.id(), jsonrpc2.CodeInternalError, "mcpguard: the MCP server is not reading its input", nil))
		}
	}
}

// holdForTools reserves m's id and holds m until mcpguard has listed the
// server's tools (see toolsFetch). It returns false when m is to be
// judged now.
func (r *relay) holdForTools(m *message.Message) bool {
	key := m.IDKey()
	call := policy.Call{Method: m.Method, Tool: m.Name}
	f := newInFlight(key, m.ID, call)
	f.trace = r.traceRequest(m, call, policy.Verdict{}) // the verdict comes in judgeHeld
	if err := r.pending.add(key, &f); err != nil {
		return false // judged and refused on the usual path
	}
	if !r.tools.hold(key, m.Raw) {
		r.pending.take(key)
		return false
	}
	return true
}

// judgeHeld judges a call held for the tools list, now that the listing
// has ended, and forwards it or answers it. A call cancelled meanwhile, or
// answered because the server went away, is no longer in flight and is
// dropped.
func (r *relay) judgeHeld(h heldCall) {
	m, err := message.Parse(h.raw)
	if err != nil {
		return // it parsed when it arrived
	}
	v := r.session.Ingress(m)
	if v.AskRoots {
		if f, ok := r.pending.take(h.key); ok {
			r.logAskRoots(m)
			r.answerAgent(v.Reply(f.id()))
		}
		return
	}
	if v.Rejection != nil {
		r.logVerdict(m, v)
		if !v.Audit {
			if f, ok := r.pending.take(h.key); ok {
				r.answerAgent(v.Reply(f.id()))
				r.traceRefused(f, v.Rejection)
			}
			return
		}
	}
	if !r.pending.has(h.key) || r.askFirst(h.key, m, v, nil) {
		return
	}
	r.forwardHeld(h.key, m.Raw)
}

// askFirst holds a call the policy asks the user about (its id reserved
// under key) and reports true; a call the user allowed for the session
// already is logged and goes on (false), as does every other call. A
// call that carries the user's answer (a 2026-07-28 retry, see
// approvals.answered) is decided by it: forwarded (false) when the user
// allowed it, refused (true) otherwise.
func (r *relay) askFirst(key message.Key, m *message.Message, v policy.Verdict, answer *inlineAnswer) bool {
	if answer != nil {
		return r.approvals.decide(key, m, v, answer)
	}
	switch {
	case v.Ask == nil:
		return false
	case v.Ask.Remembered:
		r.logApproval(&heldAsk{verdict: v, method: m.Method, logID: logID(m.ID)}, eventlog.ActionAllowed,
			"allowed by the user's answer earlier in this session")
		return false
	}
	r.approvals.hold(key, m, v)
	return true
}

func (r *relay) toServerLine(b []byte) {
	_ = r.toServer.writeLine(b) // a dead server is noticed by egress
}

// logAskRoots logs a request answered with a request for the client's
// roots (policy.Verdict.AskRoots) instead of being forwarded.
func (r *relay) logAskRoots(m *message.Message) {
	r.log.Log(eventlog.Event{Level: zerolog.InfoLevel, Event: eventlog.EventServerRequest, Direction: eventlog.Ingress,
		Method: m.Method, Tool: m.Name, ID: logID(m.ID), Action: eventlog.ActionAsked,
		Message: "a path outside the roots known so far: the client is asked for its roots (input_required, " + policy.RootsKey + "), and its retried request is judged with them"})
}

func (r *relay) logVerdict(m *message.Message, v policy.Verdict) {
	ev := eventlog.Event{Level: zerolog.WarnLevel, Event: eventlog.EventRejected, Direction: eventlog.Ingress,
		Method: m.Method, Tool: m.Name, ID: logID(m.ID), ErrorCode: v.Rejection.ErrorCode,
		Field: v.Rejection.Field, Rule: v.Rejection.Rule, Action: eventlog.ActionRejected, Message: v.Rejection.Error,
		PolicyText: true} // the policy canonicalised the peer's parts of Error
	if v.Rejection.Value != "" {
		ev.Value = []byte(v.Rejection.Value)
	}
	if v.Audit {
		ev.Event, ev.Action = eventlog.EventAudited, eventlog.ActionAudited
	}
	if after := v.Rejection.RetryAfter; after > 0 {
		ev.Extra = func(e *zerolog.Event) { e.Int("retry_after_s", after) }
	}
	r.log.Log(ev)
}

// egress relays the server's messages to the agent until the server's
// output ends.
func (r *relay) egress() {
	lines := newLineReader(r.server.stdout, r.cfg.MaxResponseBytes)
	// A long result's head is judged as it arrives.
	var head policy.HeadCheck
	lines.arrived = head.Arrived
	var m message.Message // reused, as in ingress
	var batches batchCounter
	for {
		if drained, batch := lines.drained(); drained {
			r.flushToAgent()
			if batch {
				yieldCPU()
			}
			batches.done()
		} else {
			lines.piece(r.flushToAgent)
		}
		line, err := lines.next()
		r.egressHead = head.Done()
		r.memory.read(len(line))
		switch {
		case err == errTooLong:
			r.dropFromServer(message.SniffIDPrefix(lines.prefix), "message longer than "+strconv.Itoa(r.cfg.MaxResponseBytes)+" bytes")
			continue
		case err != nil:
			return
		case isBlank(line):
			continue
		}
		r.egressArrived = r.arrival()
		if perr := message.ParseInto(&m, line); perr != nil {
			r.dropFromServer(perr.(*message.Error).ID, "unparseable message from the server: "+perr.Error())
			continue
		}
		r.fromServer(&m)
	}
}

// dropFromServer logs a server line that cannot be relayed and, when it
// answers a request in flight, replies to that request with an error so the
// agent does not wait for it.
func (r *relay) dropFromServer(id jsontext.Value, reason string) {
	r.log.Log(eventlog.Event{Level: zerolog.WarnLevel, Event: eventlog.EventDropped, Direction: eventlog.Egress,
		ID: logID(id), Action: eventlog.ActionDropped, Message: reason})
	if id == nil {
		return
	}
	if f, ok := r.pending.take(message.KeyOf(id)); ok {
		r.replyToAgent(message.ErrorReply(f.id(), jsonrpc2.CodeInternalError, "mcpguard: the MCP server's reply could not be relayed safely: "+reason, nil))
		r.traceFailed(f)
	}
}

// fromServer canonicalises one parsed message from the server and relays
// it. A response must answer a request in flight: the egress rules that
// apply to a result depend on the call it answers (its tool, tools/list),
// so a response to no request (a second reply, a late reply to a cancelled
// request, an id the server made up) would reach the agent past them. It
// is dropped and logged; the agent had no request waiting for it.
func (r *relay) fromServer(m *message.Message) {
	var call *policy.Call
	var f inFlight
	if m.Kind == message.Response {
		key := m.IDKey()
		if r.tools.owns(key) {
			r.tools.answer(m)
			return
		}
		if !r.pending.takeInto(key, &f) {
			reason := "a response to no request in flight (a second reply, or an id the server made up)"
			if r.pending.takeCancelled(key) {
				reason = "a late response to a request the agent cancelled"
			}
			r.log.Log(eventlog.Event{Level: zerolog.WarnLevel, Event: eventlog.EventDropped, Direction: eventlog.Egress,
				ID: logID(m.ID), Action: eventlog.ActionDropped, Message: reason})
			return
		}
		call = &f.call
	}
	if m.Kind == message.Notification {
		r.tel.Notification(m.Method, true)
	}
	if m.Kind == message.Notification && m.RequestID != nil {
		// The server cancelled a request of its own: an answer the
		// agent sends later answers nothing.
		r.serverReqs.take(message.KeyOf(m.RequestID))
	}
	out, rewrites, err := r.session.EgressAfter(m, call, r.egressHead)
	if err != nil {
		r.log.Log(eventlog.Event{Level: zerolog.WarnLevel, Event: eventlog.EventDropped, Direction: eventlog.Egress,
			Method: m.Method, ID: logID(m.ID), Action: eventlog.ActionDropped, Message: err.Error()})
		if call != nil {
			r.replyToAgent(message.ErrorReply(f.id(), jsonrpc2.CodeInternalError, "mcpguard: the MCP server's reply could not be relayed safely", nil))
			r.traceFailed(f)
		}
		if m.Kind == message.Request {
			// The server's own request (a hostile id, say): it gets its
			// answer from mcpguard rather than waiting for one forever.
			r.answerServer(m.ID, message.ErrorReply(m.ID, jsonrpc2.CodeInvalidRequest, "mcpguard: this request could not be relayed safely: "+err.Error(), nil))
		}
		return
	}
	if m.Kind == message.Request && r.approvals.owns(m.ID) {
		// The id of one of mcpguard's approval prompts, which the server
		// can only have guessed: the client's answer would be ambiguous.
		r.log.Log(eventlog.Event{Level: zerolog.WarnLevel, Event: eventlog.EventDropped, Direction: eventlog.Egress,
			Method: m.Method, ID: logID(m.ID), Action: eventlog.ActionDropped,
			Message: "a server request with the id space of mcpguard's approval prompts"})
		r.answerServer(m.ID, message.ErrorReply(m.ID, jsonrpc2.CodeInvalidRequest, "mcpguard: this request id is reserved; use another", nil))
		return
	}
	if m.Kind == message.Request {
		d := r.session.JudgeServerRequest(m.Method, m.Params)
		if d.Kind != "" {
			r.logServerRequest(d, m.ID)
		}
		if d.Refused() {
			r.answerServer(m.ID, message.RejectionError(m.ID, jsonrpc2.CodeInvalidRequest, d.RejectionOf()))
			return
		}
	}
	if m.Kind == message.Request && !r.serverReqs.add(m.IDKey(), m.Method) {
		r.log.Log(eventlog.Event{Level: zerolog.WarnLevel, Event: eventlog.EventDropped, Direction: eventlog.Egress,
			Method: m.Method, ID: logID(m.ID), Action: eventlog.ActionDropped,
			Message: "a server request whose id is already in flight, or one too many in flight"})
		r.answerServer(m.ID, message.ErrorReply(m.ID, jsonrpc2.CodeInvalidRequest, "mcpguard: a request with this id is already in flight, or too many are", nil))
		return
	}
	if call != nil && (call.Method == "initialize" || call.Method == "server/discover") {
		r.noteCapabilities(m.Result)
	}
	if len(rewrites) > 0 {
		r.logRewrites(m, call, rewrites)
	}
	r.replyToAgent(out)
	if f.trace != nil {
		r.traceReply(f, m, rewrites)
	}
}

// answerFromAgent relays the agent's answer to a request of the server.
// Only an answer to a server request in flight is relayed; one that
// carries a credential is replaced by a JSON-RPC error (see
// policy.Session.Answer); an answer to
// roots/list is judged against the policy's path_scope roots (roots outside
// them are removed, see policy.Session.RootsAnswer), and one that cannot
// be read is replaced by an error to the server, so the server does not
// wait for it.
func (r *relay) answerFromAgent(m *message.Message) {
	if r.approvals.owns(m.ID) {
		r.approvals.answer(m)
		return
	}
	method, ok := r.serverReqs.take(m.IDKey())
	if !ok {
		r.log.Log(eventlog.Event{Level: zerolog.WarnLevel, Event: eventlog.EventDropped, Direction: eventlog.Ingress,
			ID: logID(m.ID), Action: eventlog.ActionDropped,
			Message: "a response to no server request in flight (an id the agent made up, a second answer, or an answer to a request the server cancelled)"})
		return
	}
	if v := r.session.Answer(method, m); v.Rejection != nil {
		ev := eventlog.Event{Level: zerolog.WarnLevel, Event: eventlog.EventRejected, Direction: eventlog.Ingress,
			Method: method, ID: logID(m.ID), ErrorCode: v.Rejection.ErrorCode, Field: v.Rejection.Field,
			Rule: v.Rejection.Rule, Action: eventlog.ActionRejected, Message: v.Rejection.Error, PolicyText: true}
		if v.Audit {
			ev.Event, ev.Action = eventlog.EventAudited, eventlog.ActionAudited
		}
		r.log.Log(ev)
		if !v.Audit {
			r.toServerLine(v.Reply(m.ID))
			return
		}
	}
	out := m.Raw
	if method == "roots/list" {
		var rewrites []policy.Rewrite
		var err error
		out, rewrites, err = r.session.RootsAnswer(m)
		if err != nil {
			r.log.Log(eventlog.Event{Level: zerolog.WarnLevel, Event: eventlog.EventRejected, Direction: eventlog.Ingress,
				Method: method, ID: logID(m.ID), ErrorCode: codes.Malformed, Action: eventlog.ActionRejected, Message: err.Error()})
			r.toServerLine(message.ErrorReply(m.ID, jsonrpc2.CodeInternalError, "mcpguard: "+err.Error(), nil))
			return
		}
		for _, rw := range rewrites {
			r.log.Log(eventlog.Event{Level: zerolog.WarnLevel, Event: eventlog.EventRewritten, Direction: eventlog.Ingress,
				Method: method, ID: logID(m.ID), Field: rw.Field, Action: eventlog.ActionRewritten,
				Message: "a root outside every path_scope root of the policy was removed from the client's roots/list answer"})
		}
	}
	r.toServerLine(out)
}

// answerServer writes mcpguard's own reply to the server's request id
// (queueToServer); a reply that cannot be written is logged.
func (r *relay) answerServer(id jsontext.Value, reply []byte) {
	if err := r.queueToServer(reply); err != nil {
		r.log.Log(eventlog.Event{Level: zerolog.WarnLevel, Event: eventlog.EventDropped, Direction: eventlog.Egress,
			ID: logID(id), Action: eventlog.ActionDropped,
			Message: "mcpguard's answer to a request of the server could not be written: " + err.Error()})
	}
}

var (
	// errNotReading: the server left a full queue unread for the grace period.
	errNotReading = errors.New("the MCP server is not reading its input")
	// errInputClosed: the relay closed the server's input (the run is ending).
	errInputClosed = errors.New("the MCP server's input is closed")
)

// queueToServer writes a line mcpguard sends the server on its own (an
// answer to a server request, a call held for the tools list or the
// user, its own tools/list) from a goroutine that must not block on the
// server's input: the line is queued behind everything written to the
// server before it and written out by the server's writer
// (lineWriter.enqueue), before the server's stdin is closed. When a
// server that does not read its input has filled the queue, it waits up
// to the grace period for room, then gives up with errNotReading; after
// the server's stdin is closed it fails at once.
func (r *relay) queueToServer(line []byte) error {
	var timeout <-chan time.Time
	for {
		room, err := r.toServer.enqueue(line)
		if err == errClosed {
			return errInputClosed
		}
		if room == nil {
			return nil
		}
		if timeout == nil {
			timeout = time.After(r.cfg.Grace)
		}
		select {
		case <-room:
		case <-timeout:
			return errNotReading
		}
	}
}

// maxRewriteLines bounds the log lines one message's rewrites produce: a
// hostile result with escapes in ten thousand strings gets twenty lines and
// a summary, not ten thousand.
const maxRewriteLines = 20

func (r *relay) logRewrites(m *message.Message, call *policy.Call, rewrites []policy.Rewrite) {
	method, tool := m.Method, ""
	if call != nil {
		method, tool = call.Method, call.Tool
	}
	rewrites = r.logHidden(m, method, rewrites)
	for i, rw := range rewrites {
		if i == maxRewriteLines {
			removed, n := 0, 0
			for _, rest := range rewrites[i:] {
				removed += rest.Removed
				n += max(1, rest.Fields)
			}
			r.log.Log(eventlog.Event{Level: zerolog.InfoLevel, Event: eventlog.EventRewritten, Direction: eventlog.Egress,
				Method: method, Tool: tool, ID: logID(m.ID), Field: "(more)", Action: eventlog.ActionRewritten,
				Message: "egress canonicalisers rewrote " + strconv.Itoa(n) + " more fields",
				Extra:   func(e *zerolog.Event) { e.Int("fields", n).Int("bytes_removed", removed) }})
			return
		}
		r.log.Log(eventlog.Event{Level: zerolog.InfoLevel, Event: eventlog.EventRewritten, Direction: eventlog.Egress,
			Method: method, Tool: tool, ID: logID(m.ID), Field: rw.Field, Rule: rw.Rule, Action: eventlog.ActionRewritten,
			Message: "egress " + rw.Canonicaliser + " canonicaliser rewrote the field",
			Extra:   func(e *zerolog.Event) { e.Str("canonicaliser", rw.Canonicaliser).Int("bytes_removed", rw.Removed) }})
	}
}

// maxHiddenNamed bounds the tool names one hidden-tools line lists.
const maxHiddenNamed = 20

// logHidden writes one line for the tools a tools/list result lost to the
// policy, naming each with the entry that denies it, and returns the
// other rewrites.
func (r *relay) logHidden(m *message.Message, method string, rewrites []policy.Rewrite) []policy.Rewrite {
	var hidden []string
	rest := rewrites[:0:0]
	for _, rw := range rewrites {
		if rw.Canonicaliser != "hidden" {
			rest = append(rest, rw)
			continue
		}
		hidden = append(hidden, rw.Tool+" ("+rw.Rule+")")
	}
	if len(hidden) == 0 {
		return rewrites
	}
	named := hidden
	more := ""
	if len(named) > maxHiddenNamed {
		named, more = named[:maxHiddenNamed], " +"+strconv.Itoa(len(hidden)-maxHiddenNamed)+" more"
	}
	r.log.Log(eventlog.Event{Level: zerolog.InfoLevel, Event: eventlog.EventRewritten, Direction: eventlog.Egress,
		Method: method, ID: logID(m.ID), Field: "result.tools", Action: eventlog.ActionRewritten,
		Message: "hid " + plural(len(hidden), "tool") + " the policy denies from the list: " + strings.Join(named, ", ") + more,
		Extra:   func(e *zerolog.Event) { e.Str("canonicaliser", "hidden").Int("tools_hidden", len(hidden)) }})
	return rest
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// failInFlight answers every request still in flight with an error.
func (r *relay) failInFlight(reason string) {
	r.approvals.stop() // the prompts of held calls are withdrawn
	for _, f := range r.pending.close() {
		r.log.Log(eventlog.Event{Level: zerolog.WarnLevel, Event: eventlog.EventFailed, Direction: eventlog.Egress,
			Method: f.call.Method, Tool: f.call.Tool, ID: logID(f.id()), Message: reason})
		r.replyToAgent(message.ErrorReply(f.id(), jsonrpc2.CodeInternalError, "mcpguard: "+reason, nil))
		r.traceFailed(f)
	}
	r.flushToAgent()
}

// logID renders an id for the log: integers as they are, strings
// canonicalised and capped, since the agent chose them.
func logID(id jsontext.Value) string {
	if len(id) == 0 {
		return ""
	}
	return eventlog.Clean(string(id))
}

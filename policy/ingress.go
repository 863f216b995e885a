package policy

import (
	"slices"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/sourcegraph/jsonrpc2"

	"github.com/mcpguard/mcpguard/policy/approval"
	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/policy/pins"
	"github.com/mcpguard/mcpguard/rules"
	"github.com/mcpguard/mcpguard/rules/canon"
	"github.com/mcpguard/mcpguard/rules/codes"
	"github.com/mcpguard/mcpguard/rules/secrets"
)

// Ingress judges a request or notification from the agent by its method,
// whatever its shape. A request method sent without an id (a tools/call
// as a notification) is refused: a server may run it all the same, and
// it would reach it unjudged; there is no one to reply to, so the relay
// only logs it. Notifications (notifications/...) carry nothing a policy
// checks. Requests: tools/call, prompts/get, resources/read,
// resources/subscribe, resources/unsubscribe and completion/complete,
// each by the rules that name it and by the secrets check (see
// secretsMethod), also under the baseline.
func (s *Session) Ingress(m *message.Message) Verdict {
	return s.now().ingress(m)
}

func (s judge) ingress(m *message.Message) Verdict {
	if m.Kind == message.Notification {
		if strings.HasPrefix(m.Method, "notifications/") {
			return Verdict{}
		}
		return Verdict{Rejection: &message.Rejection{
			ErrorCode:   codes.Malformed,
			Error:       "rejected MCP input: " + clean(m.Method) + " is a request method sent without an id (as a notification); it is not forwarded",
			Remediation: "Send requests with an id.",
			Tool:        clean(m.Name),
		}}
	}
	if m.Kind != message.Request {
		return Verdict{}
	}
	var extra []string
	var rej *message.Rejection
	if m.InputResponses != nil { // else both judge nothing
		extra, rej = s.inputRoots(m)
		if rej == nil {
			var audit bool
			if rej, audit = s.checkInputResponses(m); rej != nil {
				v := Verdict{Rejection: rej, Audit: s.policy().Mode == Audit || audit, AsError: true, Code: jsonrpc2.CodeInvalidParams}
				if m.Method == "tools/call" && !s.policy().RejectAsError {
					v.AsError, v.Code = false, 0
				}
				return v
			}
		}
	}
	var asks []approval.Reason
	var flowAudit bool // a flows: rule with action: audit refused the call
	switch {
	case rej != nil:
	case m.Method == "tools/call":
		if rej = s.checkPin(pins.Tool, m.Name); rej == nil {
			rej, asks = s.checkToolCall(m, extra)
		}
		if rej == nil && len(s.policy().flows) > 0 {
			var ask bool
			if rej, flowAudit, ask = s.checkFlows(m.Name); ask {
				asks = append(asks, approval.Reason{Rule: rej.Rule, Reason: rej.Reason})
				rej = nil
			}
		}
	case m.Method == "prompts/get":
		if rej = s.checkPin(pins.Prompt, m.Name); rej == nil {
			rej = s.checkRules(m.Method, m.Name, m.Arguments, false, extra)
		}
	case uriMethod(m.Method):
		if rej = s.checkPin(pins.Resource, m.URI); rej == nil {
			args, _ := json.Marshal(map[string]string{"uri": m.URI})
			rej = s.checkRules(m.Method, "", args, false, extra)
		}
	case m.Method == "completion/complete":
		rej = s.checkCompletion(m, extra)
	case m.Method == "subscriptions/listen":
		rej = s.checkListen(m, extra)
	default:
		return Verdict{}
	}
	if rej == nil && len(s.policy().limits) > 0 && !s.answered {
		// Counted last: a call refused for another reason never
		// reaches the server, and does not use up its allowance.
		rej = s.checkLimits(s.policy().countedBy(m), m, s.policy().Mode == Audit)
	}
	if rej == nil && asks == nil {
		return Verdict{}
	}
	v := Verdict{}
	if rej != nil {
		v.Rejection, v.Audit = rej, s.policy().Mode == Audit || flowAudit || s.auditOnly(m, rej)
		if !v.Audit && s.asksForRoots(m, rej) {
			return Verdict{AskRoots: true}
		}
	}
	if m.Method != "tools/call" || s.policy().RejectAsError {
		v.AsError, v.Code = true, jsonrpc2.CodeInvalidParams
		if rej != nil && rej.ErrorCode == codes.RateLimited {
			v.Code = CodeRateLimited
		}
	}
	if asks != nil && (rej == nil || v.Audit) {
		// Forwarded by everything that refuses: it waits for the user
		// (see ask.go), or, in audit mode, is logged as it would be
		// asked and forwarded.
		a := s.newAsk(m.Name, m.Arguments, asks)
		if s.policy().Mode == Audit {
			if rej == nil {
				v.Rejection, v.Audit = a.auditRejection(), true
			}
			return v
		}
		v.Ask = a
	}
	return v
}

// checkToolCall judges a tools/call: the rejection, else the entries that
// ask the user about it (nil when none does).
func (s judge) checkToolCall(m *message.Message, extra []string) (*message.Rejection, []approval.Reason) {
	tool := m.Name
	plan := s.policy().callPlanFor(tool)
	// The name the agent read in tools/list, where the server may have
	// listed it with invisible or control characters: judged as that
	// name too, so wi\u200bpe does not get past wipe: deny. (A name in a
	// plain message, m.TextPlain, is its own visible name.)
	if !m.TextPlain {
		if visible := canon.Visible(tool); visible != tool {
			if vp := s.policy().callPlanFor(visible); vp.denied || !plan.denied {
				plan = vp
			}
		}
	}
	d := &plan.toolDecision
	if !d.denied {
		if rule := s.policy().looseDeny(tool); rule != "" {
			// Another spelling of a denied tool (SEND_EMAIL, "send_email ",
			// a Cyrillic look-alike) that a loose server resolves to it.
			d = &toolDecision{denied: true, rule: rule}
		}
	}
	if d.denied {
		return &message.Rejection{
			ErrorCode:   codes.ToolDenied,
			Error:       "rejected MCP input: tool " + clean(tool) + " is not allowed by policy entry " + d.rule,
			Reason:      "tool " + clean(tool) + " is not allowed",
			Remediation: "Use one of the tools the policy allows (see tools/list).",
			Tool:        clean(tool),
			Rule:        d.rule,
		}, nil
	}
	var asks []approval.Reason
	if d.ask != "" {
		asks = []approval.Reason{{Rule: d.ask, Reason: "every call of this tool needs your approval"}}
	}
	rs := plan.rules
	if n := len(rs); n > 0 && rs[n-1].rawClean != nil && rs[n-1].rawClean(m.Arguments) {
		// The raw arguments hold nothing the secrets scanner could find
		// (FuzzRawClean holds it to the scanner): its implicit rule, always
		// the last, has nothing to say, and without other rules the call
		// needs no argument tree.
		rs = rs[:n-1]
	}
	needsArgs := len(d.schemas) > 0 || d.serverSchema || len(rs) > 0
	if !needsArgs {
		return nil, asks
	}
	w := walkers.Get().(*walker)
	w.session, w.extra = s, extra
	defer w.release()
	if rej := w.parseArgs(m.Arguments, tool); rej != nil {
		return rej, nil
	}
	validated := false
	for _, sch := range d.schemas {
		if errs := sch.validate(&w.tree); errs != nil {
			return schemaRejection(tool, d.schemaRule, "the policy's schema", errs, false), nil
		}
		validated = true
	}
	if d.serverSchema {
		sch, known := s.serverSchema(tool)
		switch {
		case !known && s.offline:
			sch = nil
		case !known:
			return s.unknownSchema(tool), nil
		case sch == nil:
			return &message.Rejection{
				ErrorCode:   codes.Schema,
				Error:       "rejected MCP input: the server's input schema for tool " + clean(tool) + " cannot be enforced (it does not compile, or has a $ref that cannot be resolved offline)",
				Reason:      "the server's input schema for tool " + clean(tool) + " cannot be enforced",
				Remediation: "Fix the server's inputSchema, or set server_schema: off for this tool.",
				Tool:        clean(tool), Rule: "server_schema",
			}, nil
		}
		if sch != nil {
			if errs := sch.validate(&w.tree); errs != nil {
				return schemaRejection(tool, "server_schema", "the server's inputSchema", errs, false), nil
			}
			validated = true
		}
	}
	if rej := w.checkArgs(rs, tool, validated); rej != nil {
		return rej, nil
	}
	return nil, append(asks, w.asks...)
}

// unknownSchema is the rejection of a call whose tool's inputSchema is not
// known: the server's tools/list does not include it, or mcpguard could
// not get the list.
func (s *Session) unknownSchema(tool string) *message.Rejection {
	s.mu.Lock()
	listed := s.listed
	s.mu.Unlock()
	reason := "the server's input schema for tool " + clean(tool) + " is not known: mcpguard could not list the server's tools"
	remediation := "Retry the call; if it fails again, the server is not answering tools/list."
	if listed {
		reason = "the server's tools/list does not include tool " + clean(tool)
		remediation = "Call a tool the server lists (see tools/list)."
	}
	return &message.Rejection{
		ErrorCode: codes.Schema, Error: "rejected MCP input: " + reason, Reason: reason,
		Remediation: remediation, Tool: clean(tool), Rule: "server_schema", Retryable: !listed,
	}
}

// parseArgs decodes the raw arguments of a call of tool into w's tree.
func (w *walker) parseArgs(raw []byte, tool string) *message.Rejection {
	if w.tree.parse(raw) != nil {
		return &message.Rejection{ErrorCode: codes.Malformed, Tool: clean(tool),
			Error: "rejected MCP input: arguments cannot be decoded", Reason: "arguments cannot be decoded",
			Remediation: "Send arguments as a JSON object."}
	}
	return nil
}

func schemaRejection(tool, rule, which string, errs []message.ValidationError, retryable bool) *message.Rejection {
	field := ""
	if len(errs) > 0 {
		field = clean(errs[0].InstancePath)
	}
	for i := range errs {
		errs[i].InstancePath = clean(errs[i].InstancePath)
	}
	return &message.Rejection{
		ErrorCode:        codes.Schema,
		Error:            "rejected MCP input: arguments do not match " + which + " (policy entry " + rule + ")",
		Reason:           "arguments do not match " + which,
		Remediation:      "Send arguments that match the tool's input schema; see validation_errors.",
		Tool:             clean(tool),
		Field:            field,
		Rule:             rule,
		Retryable:        retryable,
		ValidationErrors: errs,
	}
}

// checkRules decodes raw arguments and runs the ingress rules for method.
func (s judge) checkRules(method, name string, raw []byte, validated bool, extra []string) *message.Rejection {
	rs := s.policy().rulesFor(method, name)
	if n := len(rs); n > 0 && rs[n-1].rawClean != nil && rs[n-1].rawClean(raw) {
		rs = rs[:n-1] // nothing the secrets scanner could find, as in checkToolCall
	}
	if len(rs) == 0 {
		return nil
	}
	w := walkers.Get().(*walker)
	w.session, w.extra = s, extra
	defer w.release()
	if rej := w.parseArgs(raw, name); rej != nil {
		return rej
	}
	return w.checkArgs(rs, name, validated)
}

// maxCachedRuleSets bounds the cache of rules per (method, name): names come
// from the agent, and a cache keyed by them must not grow without bound.
const maxCachedRuleSets = 1024

// rulesFor returns the ingress rules that apply to a call of name by
// method, in policy order. Matching globs costs more than the checks for
// most calls, so the answer is cached per name.
func (p *Policy) rulesFor(method, name string) []*ingressRule {
	key := method + "\x00" + name
	if v, ok := p.ruleSets.Load(key); ok {
		return v.([]*ingressRule)
	}
	var out []*ingressRule
	for _, r := range p.ingress {
		if r.appliesTo(method, name) {
			out = append(out, r)
		}
	}
	if secretsMethod(method) {
		if r := p.secretsIngressRule(name); r != nil {
			out = append(out, r)
		}
	}
	if p.ruleSetCount.Add(1) <= maxCachedRuleSets {
		p.ruleSets.Store(key, out)
	}
	return out
}

func (r *ingressRule) appliesTo(method, name string) bool {
	for _, m := range r.methods {
		if m == method {
			return uriMethod(method) || globsMatch(r.tools, name)
		}
	}
	return false
}

// checkArgs runs the ingress rules that apply (rs, in policy order) on a
// call of name; the first failure is the rejection. validated says a JSON
// Schema accepted the arguments, which makes non-string values at selected
// fields legitimate (the check has nothing to say about a number).
func (w *walker) checkArgs(rs []*ingressRule, name string, validated bool) *message.Rejection {
	w.tool, w.validated = name, validated
	if w.session.Session != nil {
		w.bases = w.session.relativeBases()
	}
	if len(w.extra) > 0 {
		w.bases = append(slices.Clip(w.bases), w.extra...)
	}
	for _, r := range rs {
		for i := range r.fields {
			sel := &r.fields[i]
			if w.reachesNothing(sel) {
				continue
			}
			if rej := w.judgeSelector(r, sel, false); rej != nil {
				// Walk again in member-name order so the reported failure
				// does not depend on the order the agent wrote (a walk
				// that met no object of two members is that walk: a
				// refused flood is not judged twice).
				if w.reordered {
					rej = w.judgeSelector(r, sel, true)
				}
				if !r.ask {
					return rej
				}
				// An ask rule: the user decides, once every refusing
				// rule has passed; its other fields add nothing.
				w.asks = append(w.asks, approval.Reason{Rule: r.rule, Field: rej.Field, Value: rej.Value, Reason: rej.Reason})
				break
			}
		}
	}
	return nil
}

var walkers = sync.Pool{New: func() any {
	return &walker{path: make([]pathElem, 0, 8), tree: argTree{nodes: make([]argNode, 0, 256)}}
}}

// maxPooledNodes bounds the tree a pooled walker keeps for reuse: a
// hostile call's million values are not kept alive after it.
const maxPooledNodes = 4096

// release drops what the walker holds of one evaluation and pools it.
func (w *walker) release() {
	clear(w.path[:cap(w.path)])
	clear(w.tree.nodes) // past len they are still clear from the last release
	nodes := w.tree.nodes[:0]
	if cap(nodes) > maxPooledNodes {
		nodes = nil
	}
	*w = walker{path: w.path[:0], tree: argTree{nodes: nodes}}
	walkers.Put(w)
}

// clientScope is the check and the roots of a client_roots rule for
// this evaluation: the session's, with the roots the request carries.
func (w *walker) clientScope(r *ingressRule) (rules.Check, []string) {
	if len(w.extra) == 0 {
		return w.session.scopeFor(r), w.session.rootsFor(r)
	}
	if w.scopeRule != r {
		w.scopeRule = r
		w.scope, w.scopeRoots = w.session.requestScope(r, w.extra)
	}
	return w.scope, w.scopeRoots
}

// judge applies the rule's check to one selected value.
//
// A string check that meets a non-string rejects it as type confusion
// (["--rootdir"] or 5 where a string was expected, which a lenient server
// may read as the same thing) unless a JSON Schema accepted the arguments:
// then a number, boolean or null passes (the check has nothing to say about
// it). Arrays and objects are always searched and every string inside,
// member names included, is checked, so the rejection names the offending
// element; if nothing inside fails, a container where the selector named a
// single field (`path`, `args[1]`) is still type confusion without a
// schema, while one reached by a wildcard (`*`, `args[*]`) passes.
func (w *walker) judge(mt match) *message.Rejection {
	r, tool, validated := w.rule, w.tool, w.validated
	check, roots := r.check, r.roots
	if r.clientRoots && w.session.Session != nil {
		check, roots = w.clientScope(r)
	}
	var f *rules.Finding
	if s, ok := w.text(mt); ok {
		if bc, based := check.(basedCheck); based && len(w.bases) > 0 {
			f = bc.CheckFrom(s, w.bases)
		} else {
			f = check.Check(s)
		}
	} else {
		switch w.tree.nodes[mt.node].kind {
		case argObject, argArray:
			// Search the container with the same walker: every string
			// inside is judged as an element, not as a named field.
			named := w.named
			w.named = false
			w.allStrings(mt.node)
			rej := w.rej
			w.named, w.rej = named, nil
			if rej != nil || validated || !named {
				return rej
			}
			f = typeConfusion(r.code)
		default:
			if validated {
				return nil
			}
			f = typeConfusion(r.code)
		}
	}
	if f == nil {
		return nil
	}
	field, toolName := clean(renderPath(mt.path)), clean(tool)
	if sc, ok := r.check.(*secrets.Scanner); ok {
		// A member name on the path, or the name the call is judged
		// under (a completion ref's URI), may be the credential itself:
		// the rejection goes back to whoever sent it, and to the log.
		field, _ = sc.Redact(field)
		toolName, _ = sc.Redact(toolName)
	}
	where := "rejected MCP input " + field
	if mt.isName {
		where += " (member name)"
	}
	rem := f.Remediation
	if r.remediation != "" {
		rem = r.remediation
	}
	if rem == "" {
		rem = "Change the value of " + field + " so that it passes the policy's " + r.checkName + " check."
	}
	if len(roots) > 0 {
		// The roots are policy, not secrets: naming them lets the model
		// correct the path instead of guessing.
		rem += " Allowed roots: " + strings.Join(roots, ", ") + "."
	}
	val, _ := w.text(mt)
	return &message.Rejection{
		Value:       val,
		ErrorCode:   f.Code,
		Error:       where + ": " + f.Reason + " (policy entry " + r.rule + ")",
		Reason:      f.Reason,
		Remediation: rem,
		Tool:        toolName,
		Field:       field,
		Rule:        r.rule,
	}
}

func typeConfusion(code string) *rules.Finding {
	return &rules.Finding{Code: code, Reason: "expected a string, got another JSON type",
		Remediation: "Send this field as a string."}
}

// clean canonicalises caller-controlled text (tool names, member names in
// field paths) before it goes into a rejection or a log line.
func clean(s string) string { return canon.FreeText(s, 256) }

// uriMethod reports whether method's rules select into {uri} and match
// every request of it, whatever their tools: say.
func uriMethod(method string) bool {
	switch method {
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		return true
	}
	return false
}

// checkListen judges a subscriptions/listen request (2026-07-28), which
// replaces resources/subscribe: each URI of its
// notifications.resourceSubscriptions is judged as the uri of a
// resources/subscribe would be (pins, the rules that name
// resources/subscribe, the secrets check).
func (s judge) checkListen(m *message.Message, extra []string) *message.Rejection {
	var p struct {
		Notifications struct {
			ResourceSubscriptions []string `json:"resourceSubscriptions"`
		} `json:"notifications"`
	}
	if err := unmarshalLoose(m.Params, &p); err != nil {
		return &message.Rejection{ErrorCode: codes.Malformed,
			Error: "rejected MCP input: subscriptions/listen notifications cannot be decoded", Remediation: "Send notifications.resourceSubscriptions as an array of strings."}
	}
	for _, uri := range p.Notifications.ResourceSubscriptions {
		if rej := s.checkPin(pins.Resource, uri); rej != nil {
			return rej
		}
		args, _ := json.Marshal(map[string]string{"uri": uri})
		if rej := s.checkRules("resources/subscribe", "", args, false, extra); rej != nil {
			return rej
		}
	}
	return nil
}

// checkCompletion judges a completion/complete request: the value being
// completed is an argument of a prompt (ref/prompt: its name is the name
// rules match with tools:) or of a resource template (ref/resource: its
// uri). Rules see the arguments as prompts/get would carry them: first
// context.arguments, the values already chosen, then {argument.name:
// argument.value}. A server may act on the partial value (look it up, list
// a directory), so it is judged like a whole one.
func (s judge) checkCompletion(m *message.Message, extra []string) *message.Rejection {
	var ref struct {
		Ref struct {
			Type string `json:"type"`
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"ref"`
	}
	if err := unmarshalLoose(m.Params, &ref); err != nil {
		return &message.Rejection{ErrorCode: codes.Malformed,
			Error: "rejected MCP input: completion/complete ref cannot be decoded", Remediation: "Send ref with a string type and name or uri."}
	}
	name := ref.Ref.Name
	if ref.Ref.Type == "ref/resource" {
		name = ref.Ref.URI
	}
	if len(s.policy().rulesFor(m.Method, name)) == 0 {
		return nil
	}
	var p struct {
		Argument struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"argument"`
		Context struct {
			Arguments jsontext.Value `json:"arguments"`
		} `json:"context"`
	}
	if err := unmarshalLoose(m.Params, &p); err != nil {
		return &message.Rejection{ErrorCode: codes.Malformed, Tool: clean(name),
			Error: "rejected MCP input: completion/complete params cannot be decoded", Remediation: "Send ref, and argument with a string name and value."}
	}
	// The ref's own strings (a prompt name, a template URI) reach the
	// server too: judged by the same rules, as {"ref": ...}.
	refArgs, err := json.Marshal(map[string]any{"ref": ref.Ref})
	if err == nil {
		if rej := s.checkRules(m.Method, name, refArgs, false, extra); rej != nil {
			return rej
		}
	}
	if ctx := p.Context.Arguments; len(ctx) > 0 && ctx.Kind() != 'n' {
		if rej := s.checkRules(m.Method, name, ctx, false, extra); rej != nil {
			return rej
		}
	}
	arg, err := json.Marshal(map[string]string{p.Argument.Name: p.Argument.Value})
	if err != nil {
		return &message.Rejection{ErrorCode: codes.Malformed, Tool: clean(name),
			Error: "rejected MCP input: completion/complete argument cannot be read", Remediation: "Send argument with a string name and value."}
	}
	return s.checkRules(m.Method, name, arg, false, extra)
}

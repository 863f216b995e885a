package policy

import (
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/mcpguard/mcpguard/policy/pins"
	"github.com/mcpguard/mcpguard/rules/canon"
)

// Mode says what a failed check does.
type Mode string

const (
	Enforce Mode = "enforce" // reject
	Audit   Mode = "audit"   // log what would be rejected, forward it
)

// Policy is a compiled, immutable policy for one downstream server.
type Policy struct {
	// Source is the file the policy came from ("baseline" for the embedded one).
	Source string
	// Server names the downstream in logs; empty means the command's base name.
	Server string
	Mode   Mode
	// DenyUnknown refuses calls of tools not listed under tools: (unknown_tools: deny).
	DenyUnknown bool
	// RejectAsError sends rejected tools/call as JSON-RPC errors, not tool results.
	RejectAsError bool
	// Pins is the lock file (pins:), relative to the policy file as
	// written, resolved against its directory by LoadFile; "" for none.
	Pins string
	// LintEnforce withholds items with lint findings (lint: enforce).
	LintEnforce bool
	// LintAllow lists, by item key (name or URI), the lint rules that are
	// no finding for that item (lint_allow:).
	LintAllow map[string][]string
	// AskTimeout is how long a call held for the user's approval waits
	// for an answer before it is denied (approval: {timeout:}).
	AskTimeout time.Duration

	lock     *pins.Lock // read from Pins by LoadFile; nil: pin on first sight
	ownFiles []string   // the policy and lock files, refused by its path_scope checks (protect)
	// linted is shared by the pin state of every session (and copy) of p.
	linted *pins.LintCache
	// schemas holds the server schemas every session (and copy) of p
	// compiled.
	schemas *schemaCache

	tools   []*toolEntry
	ingress []*ingressRule
	egress  []*egressRule
	// limits are the rate_limit rules, in policy order; they judge no
	// value, so ingress does not hold them.
	limits []*ingressRule

	// calls holds the tools/call plan of every tool name written in the
	// policy, made once so that judging a call of a listed tool matches no
	// glob and allocates nothing to find its rules. A plan is exact for
	// its name whatever the name is (a glob written in the policy is also
	// a possible, literal tool name), so any name may be planned ahead.
	calls map[string]*callPlan
	// unlisted is the plan of every tool not in calls, when that plan
	// cannot depend on the name: no tool entries and no ingress rules.
	unlisted *callPlan
	// looseDenied, looseAsked and looseLabelled are the tools the tools:
	// section denies, asks about and labels, under every spelling a loose
	// server resolves to them (see looseNames).
	looseDenied   *looseNames
	looseAsked    *looseNames
	looseLabelled *looseNames

	ruleSets     sync.Map // method+"\x00"+name → []*ingressRule (see rulesFor)
	ruleSetCount atomic.Int64

	// secrets holds the secrets: and links: settings, and the scanners
	// made from them and the known secrets of the server's environment.
	secrets *secretsPolicy
	// serverRequests is the server_requests: section.
	serverRequests *serverRequestsPolicy

	// flows are the flows: rules; labelled says a tool entry has labels
	// or flows: has rules (without either, no call pays for labels).
	flows    []*flowRule
	labelled bool
}

// looseEntry is what the entries of one looseNames that match a name
// say: the first of them (rule), and the labels they give, added up.
type looseEntry struct {
	rule   string
	labels labelSet
}

// foldGlob is a glob entry of tools:, as canon.Fold reads names (pattern)
// and as canon.Loose does (loose: canon.LooseGlob).
type foldGlob struct {
	pattern, loose string
	looseEntry
}

// looseNames are the tools: entries of one kind (those that deny, those
// that ask, those that label), as a server that matches names loosely
// resolves them: send_email runs for a call of SEND_EMAIL, so an entry
// that denies, asks about or labels a tool must catch every spelling of
// it.
type looseNames struct {
	// exact maps the canon.Loose name of every entry with an exact name
	// to the entries with that name.
	exact map[string]looseEntry
	// fold are the glob entries, to match canon.Fold of a name (GIT_PUSH
	// for git_*) and canon.Loose of it (gіt_push with a Cyrillic і).
	fold []foldGlob
	// seen caches match by name (names come from the agent: at most
	// maxCachedRuleSets of them).
	seen  sync.Map
	count atomic.Int64
}

// newLooseNames gathers the tools: entries for which keep is true.
func newLooseNames(tools []*toolEntry, keep func(*toolEntry) bool) *looseNames {
	l := &looseNames{exact: map[string]looseEntry{}}
	for _, t := range tools {
		switch {
		case !keep(t):
		case t.glob:
			l.fold = append(l.fold, foldGlob{canon.Fold(t.pattern), canon.LooseGlob(t.pattern), looseEntry{t.rule, t.labels}})
		default:
			k := canon.Loose(t.pattern)
			e, ok := l.exact[k]
			if !ok {
				e.rule = t.rule
			}
			e.labels |= t.labels
			l.exact[k] = e
		}
	}
	return l
}

// match returns what the entries that name a spelling of tool a loose
// server may resolve say (an exact entry under canon.Loose, a glob under
// canon.Fold or canon.Loose); the zero looseEntry when none does.
func (l *looseNames) match(tool string) looseEntry {
	if l.empty() {
		return looseEntry{}
	}
	if v, ok := l.seen.Load(tool); ok {
		return v.(looseEntry)
	}
	loose := canon.Loose(tool)
	e := l.exact[loose]
	folded := canon.Fold(tool)
	for _, g := range l.fold {
		m, _ := path.Match(g.pattern, folded)
		if !m {
			m, _ = path.Match(g.loose, loose)
		}
		if m {
			if e.rule == "" {
				e.rule = g.rule
			}
			e.labels |= g.labels
		}
	}
	if l.count.Add(1) <= maxCachedRuleSets {
		l.seen.Store(tool, e)
	}
	return e
}

// looseDeny returns the entry that denies a spelling of tool a loose
// server may resolve, "" when none does.
func (p *Policy) looseDeny(tool string) string {
	if p.looseDenied.empty() { // most policies deny no tool: no call to make
		return ""
	}
	return p.looseDenied.match(tool).rule
}

// empty reports whether l has no entry: match says nothing of any name.
func (l *looseNames) empty() bool { return l == nil || len(l.exact) == 0 && len(l.fold) == 0 }

// callPlan is everything the policy says about calls of one tool: the
// tools: decision and the ingress rules that apply, in policy order.
type callPlan struct {
	toolDecision
	rules  []*ingressRule
	limits []*ingressRule // the rate_limit rules that count its calls
}

// planCalls fills p.calls for the tool names written in tools: and in the
// ingress rules' tools lists.
func (p *Policy) planCalls() {
	p.calls = map[string]*callPlan{}
	p.looseDenied = newLooseNames(p.tools, func(t *toolEntry) bool { return t.action == actionDeny })
	p.looseAsked = newLooseNames(p.tools, func(t *toolEntry) bool { return t.action == actionAsk })
	p.looseLabelled = newLooseNames(p.tools, func(t *toolEntry) bool { return t.labels != 0 })
	add := func(name string) {
		if _, done := p.calls[name]; !done {
			p.calls[name] = p.newCallPlan(name)
		}
	}
	for _, t := range p.tools {
		add(t.pattern)
	}
	for _, r := range append(p.ingress[:len(p.ingress):len(p.ingress)], p.limits...) {
		for _, name := range r.tools {
			add(name)
		}
	}
	if len(p.tools) == 0 && len(p.ingress) == 0 && len(p.limits) == 0 {
		p.unlisted = p.newCallPlan("")
	}
}

func (p *Policy) newCallPlan(tool string) *callPlan {
	c := &callPlan{toolDecision: p.tool(tool), rules: p.rulesFor("tools/call", tool), limits: p.limitsFor("tools/call", tool)}
	if c.ask == "" {
		// Another spelling of a tool the policy asks about, as looseDeny
		// for deny: planned here, so that a call of a tool nothing asks
		// about pays nothing for the ask entries.
		c.ask = p.looseAsked.match(tool).rule
	}
	// Another spelling of a tool the policy labels: a labelled fetch is
	// labelled as FETCH too, or a loose server would run the exfiltrating
	// tool outside the flows: rules, and a private read would set nothing.
	c.labels |= p.looseLabelled.match(tool).labels
	return c
}

// callPlanFor returns the plan for calls of tool: made in advance for a
// tool the policy names, else now.
func (p *Policy) callPlanFor(tool string) *callPlan {
	if c, ok := p.calls[tool]; ok {
		return c
	}
	if p.unlisted != nil {
		return p.unlisted
	}
	return p.newCallPlan(tool)
}

// Baseline is the policy applied without --policy: strict parsing, egress
// hygiene, logging, every tool allowed.
//
// Its secrets settings are the defaults: credentials and the known secrets
// of the environment (os.Environ, which the server inherits) are refused
// in arguments and redacted in what the server sends, and images to any
// host are removed.
func Baseline() *Policy {
	sr, err := compileServerRequests(nil)
	if err != nil {
		panic("baseline server_requests: " + err.Error()) // no hosts: cannot fail
	}
	p := &Policy{Source: "baseline", Mode: Enforce, AskTimeout: DefaultAskTimeout, secrets: defaultSecrets(), serverRequests: sr, linted: pins.NewLintCache(), schemas: newSchemaCache()}
	if err := p.learnSecrets(os.Environ(), os.LookupEnv); err != nil {
		panic("baseline secrets: " + err.Error()) // no files, no rules allowed: cannot fail
	}
	p.planCalls()
	return p
}

// WithEnvironment returns a copy of p whose known secrets come from environ
// (NAME=value entries) instead of mcpguard's own environment: for a server
// started with an environment of its own, and for tests.
func (p *Policy) WithEnvironment(environ []string) (*Policy, error) {
	q := p.WithMode(p.Mode)
	sp := *p.secrets
	q.secrets = &sp
	lookup := func(name string) (string, bool) {
		for _, kv := range environ {
			if k, v, ok := strings.Cut(kv, "="); ok && k == name {
				return v, true
			}
		}
		return "", false
	}
	if err := q.learnSecrets(environ, lookup); err != nil {
		return nil, err
	}
	q.planCalls()
	return q, nil
}

// WithMode returns a copy of p with its mode replaced (the --mode flag).
func (p *Policy) WithMode(m Mode) *Policy {
	return &Policy{Source: p.Source, Server: p.Server, Mode: m, DenyUnknown: p.DenyUnknown,
		RejectAsError: p.RejectAsError, Pins: p.Pins, LintEnforce: p.LintEnforce, LintAllow: p.LintAllow, AskTimeout: p.AskTimeout, lock: p.lock, linted: p.linted, schemas: p.schemas, tools: p.tools, ingress: p.ingress, egress: p.egress, limits: p.limits,
		calls: p.calls, unlisted: p.unlisted, looseDenied: p.looseDenied, looseAsked: p.looseAsked, looseLabelled: p.looseLabelled, secrets: p.secrets, serverRequests: p.serverRequests,
		flows: p.flows, labelled: p.labelled, ownFiles: p.ownFiles}
}

// sortTools puts exact names before globs, each in name order, so that
// decisions and error messages do not depend on map order.
func sortTools(ts []*toolEntry) {
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].glob != ts[j].glob {
			return !ts[i].glob
		}
		return ts[i].pattern < ts[j].pattern
	})
}

// toolDecision is what the tools: section says about one tool name.
type toolDecision struct {
	denied       bool
	rule         string       // the entry that denied it, or "unknown_tools"
	schemas      []*argSchema // policy schemas of every matching entry
	serverSchema bool
	schemaRule   string // the entry that asked for the schema check
	ask          string // the first tools: entry that asks about every call, "" when none
	labels       labelSet
}

// tool resolves a tool name against tools:. A matching deny wins over
// everything; an exact entry or a glob set to allow lists the tool; a
// glob set to an object only contributes settings; a tool nothing lists is
// denied when unknown_tools is deny.
func (p *Policy) tool(name string) toolDecision {
	var d toolDecision
	listed := false
	for _, t := range p.tools {
		if !t.matches(name) {
			continue
		}
		switch t.action {
		case actionDeny:
			return toolDecision{denied: true, rule: t.rule}
		case actionAllow:
			listed = true
		case actionAsk:
			listed = true
			if d.ask == "" {
				d.ask = t.rule
			}
		}
		if t.schema != nil {
			d.schemas = append(d.schemas, t.schema)
			if d.schemaRule == "" {
				d.schemaRule = t.rule + ".schema"
			}
		}
		if t.serverSchema {
			d.serverSchema = true
		}
		d.labels |= t.labels
	}
	if !listed && p.DenyUnknown {
		return toolDecision{denied: true, rule: "unknown_tools"}
	}
	return d
}

// Denied reports whether calls of the tool are refused (and the tool hidden
// from tools/list).
func (p *Policy) Denied(name string) bool { return p.tool(name).denied }

func unmarshalStrict(b []byte, v any) error {
	return json.Unmarshal(b, v, json.RejectUnknownMembers(true))
}

// unmarshalLoose decodes what a server sent, ignoring members we do not need.
func unmarshalLoose(b []byte, v any) error {
	return json.Unmarshal(b, v)
}

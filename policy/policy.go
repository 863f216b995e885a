package policy

import (
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

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

	lock *pins.Lock // read from Pins by LoadFile; nil: pin on first sight
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
	// looseDenied maps the canon.Loose name of every tool the tools:
	// section denies by exact name to its entry: a server that matches
	// names loosely runs send_email for a call of SEND_EMAIL.
	looseDenied map[string]string
	// foldDenied are the globs the tools: section denies, case folded, to
	// match canon.Fold of a name (GIT_PUSH for git_*: deny).
	foldDenied []foldGlob
	// looseSeen caches looseDeny by name (names come from the agent: at
	// most maxCachedRuleSets of them).
	looseSeen  sync.Map
	looseCount atomic.Int64

	ruleSets     sync.Map // method+"\x00"+name → []*ingressRule (see rulesFor)
	ruleSetCount atomic.Int64

	// secrets holds the secrets: and links: settings, and the scanners
	// made from them and the known secrets of the server's environment.
	secrets *secretsPolicy
	// serverRequests is the server_requests: section.
	serverRequests *serverRequestsPolicy
}

// foldGlob is a denying glob entry, case folded, and its entry.
type foldGlob struct{ pattern, rule string }

// looseDeny returns the entry that denies a spelling of tool a loose
// server may resolve: an exact deny entry under canon.Loose, a deny glob
// under canon.Fold; "" when none does.
func (p *Policy) looseDeny(tool string) string {
	if len(p.looseDenied) == 0 && len(p.foldDenied) == 0 {
		return ""
	}
	if v, ok := p.looseSeen.Load(tool); ok {
		return v.(string)
	}
	rule, ok := p.looseDenied[canon.Loose(tool)]
	if !ok {
		folded := canon.Fold(tool)
		for _, g := range p.foldDenied {
			if m, _ := path.Match(g.pattern, folded); m {
				rule = g.rule
				break
			}
		}
	}
	if p.looseCount.Add(1) <= maxCachedRuleSets {
		p.looseSeen.Store(tool, rule)
	}
	return rule
}

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
	p.looseDenied = map[string]string{}
	p.foldDenied = nil
	for _, t := range p.tools {
		switch {
		case t.action != actionDeny:
		case t.glob:
			p.foldDenied = append(p.foldDenied, foldGlob{pattern: canon.Fold(t.pattern), rule: t.rule})
		default:
			p.looseDenied[canon.Loose(t.pattern)] = t.rule
		}
	}
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
	return &callPlan{toolDecision: p.tool(tool), rules: p.rulesFor("tools/call", tool), limits: p.limitsFor("tools/call", tool)}
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
	p := &Policy{Source: "baseline", Mode: Enforce, secrets: defaultSecrets(), serverRequests: sr, linted: pins.NewLintCache(), schemas: newSchemaCache()}
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
		RejectAsError: p.RejectAsError, Pins: p.Pins, LintEnforce: p.LintEnforce, LintAllow: p.LintAllow, lock: p.lock, linted: p.linted, schemas: p.schemas, tools: p.tools, ingress: p.ingress, egress: p.egress, limits: p.limits,
		calls: p.calls, unlisted: p.unlisted, looseDenied: p.looseDenied, foldDenied: p.foldDenied, secrets: p.secrets, serverRequests: p.serverRequests}
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

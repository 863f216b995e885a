package policy

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/policy/pins"
	"github.com/mcpguard/mcpguard/rules"
	"github.com/mcpguard/mcpguard/rules/canon"
	"github.com/mcpguard/mcpguard/rules/ratelimit"
)

// fileV1 is a policy file as written (after schema validation).
type fileV1 struct {
	Version      int                       `json:"version"`
	Server       string                    `json:"server"`
	Mode         string                    `json:"mode"`
	UnknownTools string                    `json:"unknown_tools"`
	RejectAs     string                    `json:"reject_as"`
	Tools        map[string]jsontext.Value `json:"tools"`
	Ingress      []jsontext.Value          `json:"ingress"`
	Egress       []egressV1                `json:"egress"`
	Secrets      *secretsV1                `json:"secrets"`
	Links        *linksV1                  `json:"links"`
	Pins         string                    `json:"pins"`
	Lint         string                    `json:"lint"`
	LintAllow    map[string][]string       `json:"lint_allow"`
	ServerReqs   *serverRequestsV1         `json:"server_requests"`
	Approval     *approvalV1               `json:"approval"`
	Flows        []flowV1                  `json:"flows"`
}

type toolV1 struct {
	Schema       jsontext.Value `json:"schema"`
	ServerSchema string         `json:"server_schema"`
	Action       string         `json:"action"`
	Secrets      *secretsV1     `json:"secrets"`
	Labels       []string       `json:"labels"`
}

// ingressV1 is what every ingress rule has; a check's own option members
// decode into its kind's options (checks.go).
type ingressV1 struct {
	Tools       []string `json:"tools"`
	Methods     []string `json:"methods"`
	Fields      []string `json:"fields"`
	Check       string   `json:"check"`
	Remediation string   `json:"remediation"`
	Action      string   `json:"action"` // deny (default) or ask
}

type egressV1 struct {
	Tools        []string `json:"tools"`
	Fields       []string `json:"fields"`
	Canonicalise string   `json:"canonicalise"`
	MaxBytes     int      `json:"max_bytes"`
}

type action uint8

const (
	actionNone  action = iota // settings only
	actionAllow               // listed
	actionDeny                // refused and hidden
	actionAsk                 // listed; each call waits for the user's approval
)

// toolEntry is one entry under tools:.
type toolEntry struct {
	pattern      string // exact name or glob
	glob         bool
	action       action
	schema       *argSchema
	serverSchema bool
	secrets      *secretsV1 // the tool's secrets: block, nil when none
	labels       labelSet
	rule         string // "tools.<pattern>", for rejections
}

func (t *toolEntry) matches(name string) bool {
	if !t.glob {
		return t.pattern == name
	}
	ok, _ := path.Match(t.pattern, name)
	return ok
}

// ingressRule is one compiled entry under ingress:.
type ingressRule struct {
	rule        string // "ingress[N]"
	tools       []string
	methods     []string
	fields      []Selector
	checkName   string
	check       rules.Check
	code        string // the check's error code, also for type confusion
	remediation string
	roots       []string // path_scope: the roots as expanded, for rejections and start-up warnings
	// clientRoots (path_scope: client_roots: true): the directories the
	// client gave the server are roots too (Session.scopeFor).
	clientRoots bool
	audit       bool // a failure is only logged (secrets: {ingress: audit})
	// limit is a rate_limit rule's limit (check is nil): it counts calls
	// in the session, keyed by what fields selects; limitID names its
	// window there (limitIDs).
	limit   *ratelimit.Limit
	limitID string
	ask     bool   // a failure asks the user instead of refusing (action: ask)
	def     string // the rule as written (a hash of its JSON): what an approval for it is an approval of
	// rawClean, when set, says from the raw arguments that the check can
	// find nothing in any of their strings (the secrets rule's fast path).
	rawClean func(raw []byte) bool
}

// egressRule is one compiled entry under egress:.
type egressRule struct {
	rule     string // "egress[N]"
	tools    []string
	fields   []Selector
	kind     canon.Kind
	maxBytes int
}

func globsMatch(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

func validGlob(g string) error {
	_, err := path.Match(g, "")
	return err
}

// compile turns a validated file into a Policy; at locates errors.
func compile(f *fileV1, at func(pointer, msg string) *Error, lookup func(string) (string, bool)) (*Policy, Errors) {
	var errs Errors
	p := &Policy{
		Server:        f.Server,
		Mode:          Enforce,
		DenyUnknown:   f.UnknownTools == "deny",
		RejectAsError: f.RejectAs == "error",
		linted:        pins.NewLintCache(),
		schemas:       newSchemaCache(),
	}
	if f.Mode != "" {
		p.Mode = Mode(f.Mode)
	}
	p.Pins, p.LintEnforce, p.LintAllow = f.Pins, f.Lint == "enforce", f.LintAllow
	for name, raw := range f.Tools {
		ptr := "/tools/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(name)
		e := &toolEntry{pattern: name, glob: strings.ContainsAny(name, "*?["), rule: "tools." + name}
		if e.glob {
			if err := validGlob(name); err != nil {
				errs = append(errs, at(ptr, e.rule+": bad tool glob: "+err.Error()))
				continue
			}
		}
		switch string(raw) {
		case `"allow"`:
			e.action = actionAllow
		case `"deny"`:
			e.action = actionDeny
		case `"ask"`:
			e.action = actionAsk
		default:
			var t toolV1
			if err := unmarshalStrict(raw, &t); err != nil {
				errs = append(errs, at(ptr, e.rule+": "+err.Error()))
				continue
			}
			switch t.Action {
			case "allow":
				e.action = actionAllow
			case "deny":
				e.action = actionDeny
			case "ask":
				e.action = actionAsk
			default:
				if !e.glob {
					e.action = actionAllow // an exact name with settings is listed
				}
			}
			e.serverSchema = t.ServerSchema == "enforce"
			for _, l := range t.Labels {
				e.labels |= labelBit(Label(l))
			}
			p.labelled = p.labelled || e.labels != 0
			if t.Secrets != nil {
				if t.Secrets.Env != nil || t.Secrets.Files != nil {
					errs = append(errs, at(ptr+"/secrets", "secrets.env and secrets.files belong at the top of the policy"))
					continue
				}
				for _, id := range t.Secrets.AllowRules {
					if !secretsRuleKnown(id) {
						errs = append(errs, at(ptr+"/secrets/allow_rules", "unknown secrets rule "+strconv.Quote(id)))
					}
				}
				e.secrets = t.Secrets
			}
			if t.Schema != nil {
				s, err := compileArgSchema(t.Schema)
				if err != nil {
					errs = append(errs, at(ptr+"/schema", e.rule+".schema: "+err.Error()))
					continue
				}
				e.schema = s
			}
		}
		p.tools = append(p.tools, e)
	}
	sortTools(p.tools)

	for i, r := range f.Ingress {
		ptr := "/ingress/" + strconv.Itoa(i)
		rule, err := compileIngress(r, lookup)
		if err != nil {
			errs = append(errs, at(ptr, fmt.Sprintf("ingress[%d]: %v", i, err)))
			continue
		}
		rule.rule = fmt.Sprintf("ingress[%d]", i)
		if rule.limit != nil {
			p.limits = append(p.limits, rule)
			continue
		}
		p.ingress = append(p.ingress, rule)
	}
	limitIDs(p.limits)
	for i, r := range f.Egress {
		ptr := "/egress/" + strconv.Itoa(i)
		rule, err := compileEgress(r)
		if err != nil {
			errs = append(errs, at(ptr, fmt.Sprintf("egress[%d]: %v", i, err)))
			continue
		}
		rule.rule = fmt.Sprintf("egress[%d]", i)
		p.egress = append(p.egress, rule)
	}
	p.flows = compileFlows(f.Flows)
	p.labelled = p.labelled || len(p.flows) > 0
	sp, err := compileSecrets(f)
	if err != nil {
		return p, append(errs, at("/secrets", err.Error()))
	}
	p.secrets = sp
	if p.serverRequests, err = compileServerRequests(f.ServerReqs); err != nil {
		return p, append(errs, at("/server_requests/url_hosts", "server_requests.url_hosts: "+err.Error()))
	}
	if p.AskTimeout, err = compileApproval(f.Approval); err != nil {
		return p, append(errs, at("/approval/timeout", "approval.timeout: "+err.Error()))
	}
	return p, errs
}

func compileSelectors(texts []string) ([]Selector, error) {
	out := make([]Selector, 0, len(texts))
	for _, t := range texts {
		s, err := ParseSelector(t)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func compileIngress(raw jsontext.Value, lookup func(string) (string, bool)) (*ingressRule, error) {
	var r ingressV1
	if err := unmarshalLoose(raw, &r); err != nil {
		return nil, err
	}
	rule := &ingressRule{tools: r.Tools, methods: r.Methods, checkName: r.Check, remediation: r.Remediation, ask: r.Action == "ask", def: fingerprint(raw)}
	if len(rule.tools) == 0 {
		rule.tools = []string{"*"}
	}
	if len(rule.methods) == 0 {
		rule.methods = []string{"tools/call"}
	}
	if rule.ask && (len(rule.methods) != 1 || rule.methods[0] != "tools/call") {
		return nil, fmt.Errorf("action: ask applies to tools/call only (only a tool call can be held for the user)")
	}
	for _, g := range rule.tools {
		if err := validGlob(g); err != nil {
			return nil, fmt.Errorf("bad tool glob %q: %v", g, err)
		}
	}
	var err error
	if rule.fields, err = compileSelectors(r.Fields); err != nil {
		return nil, err
	}
	kind, ok := lookupCheck(r.Check)
	if !ok {
		return nil, fmt.Errorf("unknown check %q", r.Check)
	}
	b := &checkBuild{lookup: lookup, remediation: r.Remediation, code: kind.code}
	if rule.check, err = kind.build(raw, b); err != nil {
		return nil, fmt.Errorf("%s: %v", r.Check, err)
	}
	rule.code, rule.roots, rule.clientRoots, rule.limit = b.code, b.roots, b.clientRoots, b.limit
	return rule, nil
}

func compileEgress(r egressV1) (*egressRule, error) {
	rule := &egressRule{tools: r.Tools, maxBytes: r.MaxBytes}
	if len(rule.tools) == 0 {
		rule.tools = []string{"*"}
	}
	for _, g := range rule.tools {
		if err := validGlob(g); err != nil {
			return nil, fmt.Errorf("bad tool glob %q: %v", g, err)
		}
	}
	var err error
	if rule.kind, err = canon.ParseKind(r.Canonicalise); err != nil {
		return nil, err
	}
	if r.MaxBytes != 0 && rule.kind != canon.KindFreeText {
		return nil, fmt.Errorf("max_bytes applies to free_text only")
	}
	if rule.maxBytes == 0 {
		rule.maxBytes = 1024
	}
	if rule.fields, err = compileSelectors(r.Fields); err != nil {
		return nil, err
	}
	return rule, nil
}

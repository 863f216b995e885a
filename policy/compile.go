package policy

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/rules"
	"github.com/mcpguard/mcpguard/rules/canon"
	"github.com/mcpguard/mcpguard/rules/codes"
	"github.com/mcpguard/mcpguard/rules/shellcmd"
	"github.com/mcpguard/mcpguard/rules/urlcheck"
)

// fileV1 is a policy file as written (after schema validation).
type fileV1 struct {
	Version      int                       `json:"version"`
	Server       string                    `json:"server"`
	Mode         string                    `json:"mode"`
	UnknownTools string                    `json:"unknown_tools"`
	RejectAs     string                    `json:"reject_as"`
	Tools        map[string]jsontext.Value `json:"tools"`
	Ingress      []ingressV1               `json:"ingress"`
	Egress       []egressV1                `json:"egress"`
	Secrets      *secretsV1                `json:"secrets"`
	Links        *linksV1                  `json:"links"`
	Pins         string                    `json:"pins"`
	Lint         string                    `json:"lint"`
	LintAllow    map[string][]string       `json:"lint_allow"`
	ServerReqs   *serverRequestsV1         `json:"server_requests"`
}

type toolV1 struct {
	Schema       jsontext.Value `json:"schema"`
	ServerSchema string         `json:"server_schema"`
	Action       string         `json:"action"`
	Secrets      *secretsV1     `json:"secrets"`
}

type ingressV1 struct {
	Tools         []string `json:"tools"`
	Methods       []string `json:"methods"`
	Fields        []string `json:"fields"`
	Check         string   `json:"check"`
	Remediation   string   `json:"remediation"`
	Long          []string `json:"long"`
	ShortPrefixes []string `json:"short_prefixes"`
	Abbreviations *bool    `json:"abbreviations"`
	ValueShorts   []string `json:"short_with_value"`
	Max           string   `json:"max"`
	Schemes       []string `json:"schemes"`
	AllowHosts    []string `json:"allow_hosts"`
	DenyHosts     []string `json:"deny_hosts"`
	DenyPrivate   bool     `json:"deny_private"`
	AllowZero     bool     `json:"allow_zero"`
	Pattern       string   `json:"pattern"`
	Code          string   `json:"code"`
	Roots         []string `json:"roots"`
	Programs      []string `json:"programs"`
	DenyPrograms  []string `json:"deny_programs"`
	Syntax        []string `json:"syntax"`
	Env           []string `json:"env"`
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
)

// toolEntry is one entry under tools:.
type toolEntry struct {
	pattern      string // exact name or glob
	glob         bool
	action       action
	schema       *argSchema
	serverSchema bool
	secrets      *secretsV1 // the tool's secrets: block, nil when none
	rule         string     // "tools.<pattern>", for rejections
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
	audit       bool     // a failure is only logged (secrets: {ingress: audit})
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
			default:
				if !e.glob {
					e.action = actionAllow // an exact name with settings is listed
				}
			}
			e.serverSchema = t.ServerSchema == "enforce"
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
		p.ingress = append(p.ingress, rule)
	}
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
	sp, err := compileSecrets(f)
	if err != nil {
		return p, append(errs, at("/secrets", err.Error()))
	}
	p.secrets = sp
	if p.serverRequests, err = compileServerRequests(f.ServerReqs); err != nil {
		return p, append(errs, at("/server_requests/url_hosts", "server_requests.url_hosts: "+err.Error()))
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

func compileIngress(r ingressV1, lookup func(string) (string, bool)) (*ingressRule, error) {
	rule := &ingressRule{tools: r.Tools, methods: r.Methods, checkName: r.Check, remediation: r.Remediation}
	if len(rule.tools) == 0 {
		rule.tools = []string{"*"}
	}
	if len(rule.methods) == 0 {
		rule.methods = []string{"tools/call"}
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
	switch r.Check {
	case "dangerous_flags":
		var flags *rules.DangerousFlags
		if flags, err = rules.NewDangerousFlags(r.Long, r.ShortPrefixes); err == nil {
			if r.Abbreviations != nil && !*r.Abbreviations {
				flags.WithoutAbbreviations()
			}
			err = flags.WithValueShorts(r.ValueShorts)
			rule.check = flags
		}
		rule.code = codes.DangerousFlag
	case "shell_metachars":
		rule.check, rule.code = rules.NewShellMetachars(), codes.ShellMetachar
	case "shell_command":
		rule.code = codes.ShellCommand
		var syntax []shellcmd.Syntax
		if r.Syntax != nil {
			syntax = make([]shellcmd.Syntax, len(r.Syntax))
			for i, s := range r.Syntax {
				syntax[i] = shellcmd.Syntax(s)
			}
		}
		rule.check, err = shellcmd.New(shellcmd.Options{
			Programs: r.Programs, DenyPrograms: r.DenyPrograms, Syntax: syntax, Env: r.Env,
		})
	case "control_chars":
		rule.check, rule.code = rules.NewControlChars(), codes.ControlChars
	case "pattern", "deny_pattern":
		rule.code = r.Code
		if rule.code == "" {
			rule.code = codes.Pattern
		}
		if r.Check == "pattern" {
			rule.check, err = rules.NewPattern(r.Pattern, r.Code, r.Remediation)
		} else {
			rule.check, err = rules.NewDenyPattern(r.Pattern, r.Code, r.Remediation)
		}
	case "secrets":
		// The scanner needs the known secrets of the environment; it is
		// bound when they are learnt (learnSecrets).
		rule.code = codes.Secret
	case "duration":
		rule.code = codes.InvalidTimeout
		var max time.Duration
		if r.Max != "" {
			if max, err = time.ParseDuration(r.Max); err == nil && max <= 0 {
				err = fmt.Errorf("max %q: want a positive duration", r.Max)
			}
		}
		if err == nil {
			rule.check = rules.NewDuration(max, r.AllowZero)
		}
	case "url":
		rule.code = codes.URL
		rule.check, err = urlcheck.New(urlcheck.Options{
			Schemes: r.Schemes, AllowHosts: r.AllowHosts, DenyHosts: r.DenyHosts, DenyPrivate: r.DenyPrivate,
		})
	case "path_scope":
		rule.code = codes.PathScope
		roots := make([]string, len(r.Roots))
		for i, root := range r.Roots {
			if roots[i], err = expandVars(root, lookup); err != nil {
				return nil, fmt.Errorf("roots[%d]: %v", i, err)
			}
		}
		rule.check, err = rules.NewPathScope(roots)
		rule.roots = roots
	default:
		err = fmt.Errorf("unknown check %q", r.Check)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", r.Check, err)
	}
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

package policy

import (
	"fmt"
	"os"
	"strings"

	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/rules/codes"
	"github.com/mcpguard/mcpguard/rules/links"
	"github.com/mcpguard/mcpguard/rules/rawjson"
	"github.com/mcpguard/mcpguard/rules/secrets"
)

// secretsV1 is a secrets: block as written, at the top of a policy or in a
// tool's entry (env and files: top only).
type secretsV1 struct {
	Ingress    string   `json:"ingress"`
	Egress     string   `json:"egress"`
	AllowRules []string `json:"allow_rules"`
	Env        []string `json:"env"`
	Files      []string `json:"files"`
}

// linksV1 is the links: block as written.
type linksV1 struct {
	Images          string   `json:"images"`
	AllowImageHosts []string `json:"allow_image_hosts"`
	Links           string   `json:"links"`
	AllowLinkHosts  []string `json:"allow_link_hosts"`
}

// secretsRule names the implicit ingress rule of the secrets settings in
// rejections and logs.
const secretsRule = "secrets"

// secretsSettings are the secrets settings that apply to one tool.
type secretsSettings struct {
	ingress string // refuse | audit | off
	egress  string // redact | off
	allow   []string
}

// secretsPolicy is the compiled secrets: and links: configuration.
type secretsPolicy struct {
	base  secretsSettings
	env   []string
	files []string
	links *links.Filter

	known    []secrets.Known
	scanners map[string]*secrets.Scanner // by allow list

	// filter is the egress filter of base, made with the scanners when
	// planned; byTool: a tool entry has a secrets: block, so a tool's
	// filter may differ from it (see egressFilterFor).
	filter          egressFilter
	planned, byTool bool
}

func defaultSecrets() *secretsPolicy {
	return &secretsPolicy{base: secretsSettings{ingress: "refuse", egress: "redact"},
		links: links.New(links.Options{})}
}

// merge returns s with the fields b sets replaced.
func (s secretsSettings) merge(b *secretsV1) secretsSettings {
	if b == nil {
		return s
	}
	if b.Ingress != "" {
		s.ingress = b.Ingress
	}
	if b.Egress != "" {
		s.egress = b.Egress
	}
	if b.AllowRules != nil {
		s.allow = b.AllowRules
	}
	return s
}

// compileSecrets reads the secrets: and links: blocks.
func compileSecrets(f *fileV1) (*secretsPolicy, error) {
	sp := defaultSecrets()
	sp.base = sp.base.merge(f.Secrets)
	if f.Secrets != nil {
		sp.env, sp.files = f.Secrets.Env, f.Secrets.Files
	}
	for _, id := range sp.base.allow {
		if !secrets.IsRule(id) {
			return nil, fmt.Errorf("secrets.allow_rules: unknown rule %q", id)
		}
	}
	if l := f.Links; l != nil {
		sp.links = links.New(links.Options{KeepImages: l.Images == "keep", AllowImageHosts: l.AllowImageHosts,
			NeutraliseLinks: l.Links == "neutralise", AllowLinkHosts: l.AllowLinkHosts})
	}
	return sp, nil
}

// learnSecrets collects the known secrets: of environ (the environment
// the server is started with, which is mcpguard's own), the variables
// whose names look like credentials and those listed under secrets.env;
// and the contents of secrets.files (whole, and each line of 16 bytes or
// more, so that a key leaked a line at a time is still found). Then it
// makes the scanners every tool needs and binds the secrets rules.
func (p *Policy) learnSecrets(environ []string, lookup func(string) (string, bool)) error {
	sp := p.secrets
	sp.known = secrets.FromEnvironment(environ, nil)
	for _, name := range sp.env {
		if v, ok := lookup(name); ok && len(v) >= secrets.MinKnownLen {
			sp.known = append(sp.known, secrets.Known{Source: name, Value: v})
		}
	}
	for _, path := range sp.files {
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("secrets.files: %v", err)
		}
		content := strings.TrimSpace(string(b))
		if len(content) >= secrets.MinKnownLen {
			sp.known = append(sp.known, secrets.Known{Source: path, Value: content})
		}
		for _, line := range strings.Split(content, "\n") {
			line = strings.TrimSpace(line)
			if len(line) >= 16 && line != content && !strings.HasPrefix(line, "-----") {
				sp.known = append(sp.known, secrets.Known{Source: path, Value: line})
			}
		}
	}
	sp.scanners = map[string]*secrets.Scanner{}
	settings := []secretsSettings{sp.base}
	sp.byTool = false
	for _, t := range p.tools {
		if t.secrets != nil {
			settings = append(settings, sp.base.merge(t.secrets))
			sp.byTool = true
		}
	}
	for _, st := range settings {
		key := strings.Join(st.allow, "\x00")
		if _, ok := sp.scanners[key]; ok {
			continue
		}
		sc, err := secrets.New(secrets.Options{Known: sp.known, Allow: st.allow})
		if err != nil {
			return fmt.Errorf("secrets.allow_rules: %v", err)
		}
		sp.scanners[key] = sc
	}
	for _, r := range p.ingress {
		if r.checkName == "secrets" {
			r.check = sp.scanners[strings.Join(sp.base.allow, "\x00")]
		}
	}
	sp.filter, sp.planned = p.filterOf(sp.base), true
	return nil
}

// secretsFor returns the secrets settings of a tool ("" for messages that
// are not a tool's): the first tool entry with a secrets: block that
// matches the name, over the policy's.
func (p *Policy) secretsFor(tool string) secretsSettings {
	st := p.secrets.base
	if tool == "" {
		return st
	}
	for _, t := range p.tools {
		if t.secrets != nil && t.matches(tool) {
			return st.merge(t.secrets)
		}
	}
	return st
}

func (p *Policy) scannerFor(st secretsSettings) *secrets.Scanner {
	return p.secrets.scanners[strings.Join(st.allow, "\x00")]
}

// secretsMethod reports whether the implicit secrets rule judges the
// arguments of requests of method: every request whose arguments the
// server acts on. A credential an injected agent puts in a prompt
// argument, a resource URI or a completion value leaves the machine as
// surely as one in a tool call.
func secretsMethod(method string) bool {
	switch method {
	case "tools/call", "prompts/get", "completion/complete":
		return true
	}
	return uriMethod(method)
}

// secretsIngressRule is the implicit last ingress rule of a tool whose
// secrets ingress is not off: every string of the arguments, member names
// included, is checked for credentials.
func (p *Policy) secretsIngressRule(tool string) *ingressRule {
	st := p.secretsFor(tool)
	if st.ingress == "off" {
		return nil
	}
	sc := p.scannerFor(st)
	if sc == nil {
		return nil
	}
	all, _ := ParseSelector("**")
	return &ingressRule{rule: secretsRule, tools: []string{"*"}, methods: []string{"tools/call", "prompts/get", "completion/complete", "resources/read", "resources/subscribe", "resources/unsubscribe"},
		fields: []Selector{all}, checkName: "secrets", check: sc, code: codes.Secret,
		audit: st.ingress == "audit", rawClean: sc.RawClean}
}

// egressFilter is what egress applies after text to every string the
// server sends: secrets redaction, then image (and link) removal.
type egressFilter struct {
	sc *secrets.Scanner
	lf *links.Filter
}

func (p *Policy) egressFilterFor(tool string) egressFilter {
	if sp := p.secrets; sp.planned && (tool == "" || !sp.byTool) {
		return sp.filter // made once, by learnSecrets
	}
	return p.filterOf(p.secretsFor(tool))
}

// egressFilterOf is egressFilterFor(callTool(call)), the filter of a
// reply to call (nil: of no call).
func (p *Policy) egressFilterOf(call *Call) egressFilter {
	if sp := p.secrets; sp.planned && !sp.byTool {
		return sp.filter // every tool's
	}
	return p.egressFilterFor(callTool(call))
}

// filterOf is the egress filter of the secrets settings st.
func (p *Policy) filterOf(st secretsSettings) egressFilter {
	ef := egressFilter{lf: p.secrets.links}
	if st.egress != "off" {
		ef.sc = p.scannerFor(st)
	}
	return ef
}

// linksClean reports whether the links filter can change no string of
// the raw message; esc are its escapes (rawjson.ScanEscapes), members
// the names of message.MemberSet it may have, head how many of its first
// bytes a HeadCheck found free of image markers.
func (ef egressFilter) linksClean(raw []byte, esc rawjson.Escapes, members message.MemberSet, head int) bool {
	if ef.lf == nil || len(raw) == 0 {
		return true
	}
	if ef.lf.RemovesImages() && members&message.MemberIcons != 0 || ef.lf.NeutralisesLinks() && members&message.MemberURI != 0 {
		return false // an icon's src or a resource link's uri: see urlMember
	}
	return ef.lf.RawCleanAfter(raw, esc, head)
}

// secretsClean reports whether the secrets check can change no string of
// the raw message; esc are its escapes (rawjson.ScanEscapes).
func (ef egressFilter) secretsClean(raw []byte, esc rawjson.Escapes) bool {
	return ef.sc == nil || len(raw) == 0 || ef.sc.RawCleanEscapes(raw, esc)
}

// urlMember judges a string that is a URL the client acts on by itself,
// by where it stands: an icon's src (icons[N].src, of tools, prompts,
// resources, templates, serverInfo, content blocks), which clients fetch
// to draw it, is removed like an image to a host not allowed; a content
// block's uri (content[N].uri, or content.uri in a prompt or sampling
// message: a resource_link, which a client may open) like a link when
// links are neutralised. A removed URL becomes links.URLStandIn, so the
// message keeps its shape.
func (ef egressFilter) urlMember(path []pathElem, s string) (string, *Rewrite) {
	n := len(path)
	if ef.lf == nil || n < 2 || path[n-1].index >= 0 {
		return s, nil
	}
	switch last := path[n-1].key; {
	case last == "src" && n >= 3 && path[n-2].index >= 0 && path[n-3].key == "icons":
		if host, ok := ef.lf.ImageURL(s); !ok {
			return links.URLStandIn, &Rewrite{Canonicaliser: "images", Rule: "host " + host, Removed: len(s)}
		}
	case last == "uri" && (path[n-2].key == "content" && path[n-2].index < 0 || n >= 3 && path[n-2].index >= 0 && path[n-3].key == "content"):
		if host, ok := ef.lf.LinkURL(s); !ok {
			return links.URLStandIn, &Rewrite{Canonicaliser: "links", Rule: "host " + host, Removed: len(s)}
		}
	}
	return s, nil
}

// apply redacts and removes, and says what, for the log (rule ids and
// hosts, never a value).
func (ef egressFilter) apply(s string) (string, []Rewrite) {
	var out []Rewrite
	if ef.sc != nil {
		red, fs := ef.sc.Redact(s)
		for _, f := range fs {
			out = append(out, Rewrite{Canonicaliser: "secrets", Rule: f.Rule, Removed: f.End - f.Start})
		}
		s = red
	}
	if ef.lf != nil {
		kept, rs := ef.lf.Apply(s)
		for _, r := range rs {
			out = append(out, Rewrite{Canonicaliser: r.Kind + "s", Rule: "host " + r.Host, Removed: len(s) - len(kept)})
		}
		s = kept
	}
	return s, out
}

func secretsRuleKnown(id string) bool { return secrets.IsRule(id) }

// auditOnly reports whether a rejection came from a secrets check set to
// audit for the tool called: it is logged and the call goes on.
func (s judge) auditOnly(m *message.Message, rej *message.Rejection) bool {
	return rej.Rule == secretsRule && s.policy().secretsFor(m.Name).ingress == "audit"
}

// callTool is the tool whose results a response carries, "" for others.
func callTool(call *Call) string {
	if call == nil {
		return ""
	}
	switch call.Method {
	case "tools/call", "tasks/result":
		return call.Tool
	}
	return ""
}

// RedactSecrets replaces the credentials and known secrets in s, as
// egress does (policy-level settings; nothing when egress is off). The
// relay applies it to the server's stderr, line by line.
func (p *Policy) RedactSecrets(s string) string {
	if p == nil || p.secrets == nil || p.secrets.base.egress == "off" {
		return s
	}
	sc := p.scannerFor(p.secrets.base)
	if sc == nil {
		return s
	}
	out, _ := sc.Redact(s)
	return out
}

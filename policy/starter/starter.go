// Package starter writes a starter policy for one MCP server from the tools
// the server announced: every tool listed and checked against its own
// input schema, and ingress rules proposed from what each field looks like
// (paths, command-line arguments, identifiers, free text). It is what
// `mcpguard init` prints; a person reviews it, runs it in audit mode, and
// then switches it to enforce.
//
// Generate is pure: the same tools, argv and options give the same bytes.
// Everything in the output that came from the server (tool and member
// names, descriptions) is quoted or sanitised, so a hostile server cannot
// write policy lines through its tool list.
package starter

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Options are the parts of a starter policy that do not come from the tool list.
type Options struct {
	// Roots are the directories path_scope allows, absolute; empty means
	// "${PWD}". The caller reads them from the server's argv
	// (policy.ServerDirs).
	Roots []string
	// Date goes into the header comment; zero leaves it out.
	Date time.Time
}

// maxDepth bounds how deep into nested input schemas fields are proposed.
const maxDepth = 6

// tool is what the generator reads of one entry of a tools/list result.
type tool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema jsontext.Value `json:"inputSchema"`
}

// schemaNode is the part of a JSON Schema the generator walks.
type schemaNode struct {
	Type        jsontext.Value         `json:"type"`
	Description string                 `json:"description"`
	Properties  map[string]*schemaNode `json:"properties"`
	Items       jsontext.Value         `json:"items"`
	Enum        jsontext.Value         `json:"enum"`
	Const       jsontext.Value         `json:"const"`
}

func (n *schemaNode) hasType(t string) bool {
	if n == nil || len(n.Type) == 0 {
		return false
	}
	var one string
	if json.Unmarshal(n.Type, &one) == nil {
		return one == t
	}
	var many []string
	if json.Unmarshal(n.Type, &many) == nil {
		for _, m := range many {
			if m == t {
				return true
			}
		}
	}
	return false
}

func (n *schemaNode) items() *schemaNode {
	if len(n.Items) == 0 || n.Items.Kind() != '{' {
		return nil // absent, or a tuple form: not proposed
	}
	var it schemaNode
	if json.Unmarshal(n.Items, &it) != nil {
		return nil
	}
	return &it
}

// check names the ingress checks the generator proposes, in the order the
// rules are written.
type check int

const (
	checkControl check = iota
	checkFlags
	checkMeta
	checkShell
	checkPath
	numChecks
)

// toolPlan is what the generator decided for one tool.
type toolPlan struct {
	name        string
	description string
	destructive string              // the word that marked it, or ""
	dangers     []string            // why else it needs review
	commandLine string              // the field holding a shell command line, or ""
	urlField    bool                // a field holds a URL the server fetches
	fields      [numChecks][]string // selectors per check
	skipped     []string            // member names no selector can address
}

// Generate writes a starter policy for a server whose tools/list result is
// tools ({"tools":[...]}; several pages merged into one) and whose command
// line is argv. The output passes `mcpguard check` with PWD set.
func Generate(tools []byte, argv []string, opts Options) ([]byte, error) {
	var list struct {
		Tools []jsontext.Value `json:"tools"`
	}
	if err := json.Unmarshal(tools, &list); err != nil {
		return nil, fmt.Errorf("tools/list result: %v", err)
	}
	var plans []*toolPlan
	var unlisted []string
	seen := map[string]bool{}
	for _, raw := range list.Tools {
		var t tool
		if err := json.Unmarshal(raw, &t); err != nil || t.Name == "" {
			continue
		}
		if seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		if !listable(t.Name) {
			unlisted = append(unlisted, t.Name)
			continue
		}
		plans = append(plans, plan(t))
	}
	sort.Slice(plans, func(i, j int) bool { return plans[i].name < plans[j].name })
	sort.Strings(unlisted)

	w := &writer{}
	writeHeader(w, argv, opts, len(plans))
	writeTools(w, plans, unlisted)
	writeIngress(w, plans, opts.Roots)
	return []byte(w.String()), nil
}

// listable says whether a tool name can be written as an exact entry under
// tools:. The policy reads a name with *, ? or [ as a glob, so a server
// announcing a tool called "*" must not get it listed: it stays unknown,
// and unknown_tools: deny refuses it.
func listable(name string) bool {
	return len(name) <= 256 && !strings.ContainsAny(name, "*?[\\")
}

func plan(t tool) *toolPlan {
	p := &toolPlan{name: t.Name, description: t.Description, destructive: destructive(t.Name)}
	var root schemaNode
	if len(t.InputSchema) > 0 && json.Unmarshal(t.InputSchema, &root) == nil {
		p.walkObject(&root, "", 0)
	}
	for c := range p.fields {
		p.fields[c] = dedupe(p.fields[c])
	}
	p.dangers = dangers(t.Name, t.Description, p.commandLine, p.urlField)
	return p
}

// walkObject proposes checks for the properties of an object schema; prefix
// is the selector of the object ("" for the arguments themselves).
func (p *toolPlan) walkObject(n *schemaNode, prefix string, depth int) {
	if depth > maxDepth {
		return
	}
	names := make([]string, 0, len(n.Properties))
	for name := range n.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		prop := n.Properties[name]
		if prop == nil {
			continue
		}
		if !selectable(name) {
			p.skipped = append(p.skipped, name)
			continue
		}
		sel := name
		if prefix != "" {
			sel = prefix + "." + name
		}
		p.walkValue(prop, name, prop.Description, sel, depth)
	}
}

// walkValue proposes checks for one value named name at selector sel.
func (p *toolPlan) walkValue(n *schemaNode, name, description, sel string, depth int) {
	switch {
	case n.hasType("string"):
		p.stringField(n, name, description, sel, false)
	case n.hasType("array"):
		it := n.items()
		if it == nil {
			return
		}
		if it.hasType("string") {
			desc := description
			if it.Description != "" {
				desc = it.Description
			}
			p.stringField(it, name, desc, sel+"[*]", true)
			return
		}
		if it.hasType("object") || len(it.Properties) > 0 {
			p.walkObject(it, sel+"[*]", depth+1)
		}
	case n.hasType("object") || len(n.Properties) > 0:
		p.walkObject(n, sel, depth+1)
	}
}

// stringField decides the checks for a string (or every string of an
// array, inArray) named name.
func (p *toolPlan) stringField(n *schemaNode, name, description, sel string, inArray bool) {
	if len(n.Enum) > 0 || len(n.Const) > 0 {
		return // server_schema: enforce already pins the value
	}
	nn := norm(name)
	switch {
	case isPathField(name, description):
		p.fields[checkPath] = append(p.fields[checkPath], sel)
		p.fields[checkControl] = append(p.fields[checkControl], sel)
	case inArray && argvNames[nn]:
		p.fields[checkFlags] = append(p.fields[checkFlags], sel)
		p.fields[checkMeta] = append(p.fields[checkMeta], sel)
		p.fields[checkControl] = append(p.fields[checkControl], sel)
	case !inArray && commandNames[nn]:
		// A shell command line: pipes and redirections are its ordinary
		// contents, so shell_metachars would refuse every real use; it is
		// read with shell_command, and the tool gets a REVIEW mark.
		if p.commandLine == "" {
			p.commandLine = sel
		}
		p.fields[checkControl] = append(p.fields[checkControl], sel)
		if nn != "shell" { // the shell's name or path, not a command line
			p.fields[checkShell] = append(p.fields[checkShell], sel)
		}
	case urlNames[nn] || urlDescription().MatchString(description):
		p.urlField = true
		p.fields[checkControl] = append(p.fields[checkControl], sel)
	case isFreeText(name):
		// prose or file content: newlines and tabs are its normal contents
	default:
		p.fields[checkControl] = append(p.fields[checkControl], sel)
	}
}

// selectable says whether a member name can appear in a selector: the
// selector syntax has no quoting for '.', '[', ']' and '*'.
func selectable(name string) bool {
	return name != "" && len(name) <= 128 && !strings.ContainsAny(name, ".[]*")
}

func dedupe(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	seen := map[string]bool{}
	out := s[:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func writeHeader(w *writer, argv []string, opts Options, n int) {
	w.line("# Starter policy written by `mcpguard init`" + dateSuffix(opts.Date) + " for:")
	w.line("#   " + sanitize(strings.Join(argv, " "), 300))
	w.line(fmt.Sprintf("# The server announced %d tools. Review every rule and every REVIEW", n))
	w.line("# mark, validate with `mcpguard check`, try calls with `mcpguard eval`, run")
	w.line("# in audit mode and read the log (`mcpguard tail`), then switch mode to")
	w.line("# enforce. Reference: policies/README.md in the mcpguard source.")
	w.line("version: 1")
	w.line("server: " + quote(ServerName(argv)))
	w.line("# audit: rejections are only logged and the calls are forwarded. Switch")
	w.line("# to enforce once the log shows no rejections of legitimate calls.")
	w.line("mode: audit")
	w.line("# A tool the server adds later is refused until it is listed below.")
	w.line("unknown_tools: deny")
}

// launchers are commands that run the server named by their first
// non-flag argument: npx -y @modelcontextprotocol/server-memory is
// server-memory.
var launchers = set("npx", "bunx", "pnpx", "uvx", "pipx", "node", "python", "python3", "deno", "bun")

// ServerName is the name a starter policy gives the server: the base name
// of the command, or of the package a launcher (npx, uvx, node, ...) runs,
// without its npm scope or version.
func ServerName(argv []string) string {
	if len(argv) == 0 {
		return "server"
	}
	name := filepath.Base(argv[0])
	if launchers[name] {
		for _, a := range argv[1:] {
			if a == "" || strings.HasPrefix(a, "-") || a == "run" {
				continue
			}
			name = a
			if strings.HasPrefix(name, "@") {
				if i := strings.IndexByte(name, '/'); i > 0 {
					name = name[i+1:]
				}
			}
			if i := strings.IndexByte(name, '@'); i > 0 {
				name = name[:i]
			}
			name = filepath.Base(name)
			break
		}
	}
	name = sanitize(name, 100)
	if name == "" || name == "." || name == "/" {
		return "server"
	}
	return name
}

func dateSuffix(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return " on " + t.Format("2006-01-02")
}

func writeTools(w *writer, plans []*toolPlan, unlisted []string) {
	w.line("tools:")
	w.line("  # Every call is also validated against the inputSchema the server announced.")
	w.line(`  "*": {server_schema: enforce}`)
	for _, p := range plans {
		if p.destructive != "" {
			w.line("  # REVIEW: destructive (" + p.destructive + "): deny it unless the agent needs it.")
		}
		for _, d := range p.dangers {
			w.line("  # REVIEW: " + d + ".")
		}
		entry := "  " + quote(p.name) + ": allow"
		if d := firstSentence(p.description); d != "" {
			entry += "  # " + d
		}
		w.line(entry)
	}
	for _, name := range unlisted {
		w.line("  # REVIEW: the server announced a tool whose name cannot be listed exactly")
		w.line("  # (it holds glob characters or is too long): " + sanitize(name, 80))
		w.line("  # unknown_tools: deny refuses it.")
	}
}

// rule is one ingress rule before it is written: a check on the same
// fields of several tools.
type rule struct {
	check  check
	tools  []string
	fields []string
}

func writeIngress(w *writer, plans []*toolPlan, roots []string) {
	var rules []*rule
	for c := check(0); c < numChecks; c++ {
		byFields := map[string]*rule{}
		for _, p := range plans {
			if len(p.fields[c]) == 0 {
				continue
			}
			key := strings.Join(p.fields[c], "\x00")
			r := byFields[key]
			if r == nil {
				r = &rule{check: c, fields: p.fields[c]}
				byFields[key] = r
				rules = append(rules, r)
			}
			r.tools = append(r.tools, p.name)
		}
	}
	var skipped []string
	for _, p := range plans {
		for _, s := range p.skipped {
			skipped = append(skipped, p.name+": "+s)
		}
	}
	if len(rules) == 0 && len(skipped) == 0 {
		w.line("# No field of any tool looked like a path, a command line or an identifier;")
		w.line("# add ingress rules by hand (policies/README.md in the mcpguard source).")
		return
	}
	w.line("ingress:")
	for _, s := range skipped {
		w.line("  # REVIEW: no selector can address this member (its name holds . [ ] or *): " + sanitize(s, 120))
	}
	for i, r := range rules {
		if i > 0 && rules[i-1].check == r.check {
			goto body // one comment per kind of check
		}
		switch r.check {
		case checkControl:
			w.line("  # Identifiers, names and paths: no control, bidi or invisible characters.")
		case checkFlags:
			w.line("  # Command-line arguments. REVIEW: list the flags of the program behind")
			w.line("  # this server that load code, read config or write files.")
		case checkMeta:
			w.line("  # Command-line arguments: no shell metacharacters.")
		case checkShell:
			w.line("  # Shell command lines, read as the shell reads them: substitutions, eval,")
			w.line("  # variable program names, and shells or interpreters running code they")
			w.line("  # were given are refused, and the programs below wherever they run.")
			w.line("  # REVIEW: better, list the programs the server may start (programs:).")
		case checkPath:
			if len(roots) == 0 {
				w.line("  # Paths stay inside the directory mcpguard runs in. REVIEW: the roots.")
			} else {
				w.line("  # Paths stay inside the directories given to the server. REVIEW: the")
				w.line("  # roots (${HOME}/src-style variables expand when the policy loads).")
			}
		}
	body:
		w.line("  - tools: " + flow(r.tools))
		w.line("    fields: " + flow(r.fields))
		switch r.check {
		case checkControl:
			w.line("    check: control_chars")
		case checkFlags:
			w.line("    check: dangerous_flags")
			w.line("    long: [--config, --exec, --require, --import, --eval, --loader, --rootdir,")
			w.line("           --init-script, --node-options, --output, --upload-pack]")
		case checkMeta:
			w.line("    check: shell_metachars")
		case checkShell:
			w.line("    check: shell_command")
			w.line("    deny_programs: [rm, rmdir, shred, dd, mkfs, curl, wget, nc, ncat, socat, ssh, scp,")
			w.line("                    sudo, su, doas, chmod, chown, crontab, kill, pkill, killall]")
			w.line("    syntax: [pipes, lists, groups, control, redirects, variables, globs, braces]")
			w.line("    env: [CI, NODE_ENV, FORCE_COLOR, NO_COLOR]")
		case checkPath:
			w.line("    check: path_scope")
			rs := []string{"${PWD}"}
			if len(roots) > 0 {
				rs = roots
			}
			w.line("    roots: " + flow(rs))
		}
	}
}

func flow(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// firstSentence is the start of a tool description, fit for a comment.
func firstSentence(d string) string {
	d = sanitize(d, 100)
	if i := strings.Index(d, ". "); i > 0 {
		d = d[:i+1]
	}
	return d
}

type writer struct{ strings.Builder }

func (w *writer) line(s string) {
	w.WriteString(s)
	w.WriteByte('\n')
}

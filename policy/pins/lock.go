package pins

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// Kind is the sort of item a server announces in a list.
type Kind uint8

const (
	Tool Kind = iota
	Prompt
	Resource
	ResourceTemplate
	numKinds
)

var kindNames = [numKinds]struct{ name, section, key, list string }{
	Tool:             {"tool", "tools", "name", "tools/list"},
	Prompt:           {"prompt", "prompts", "name", "prompts/list"},
	Resource:         {"resource", "resources", "uri", "resources/list"},
	ResourceTemplate: {"resource template", "resource_templates", "uriTemplate", "resources/templates/list"},
}

// String names the kind in logs: tool, prompt, resource, resource template.
func (k Kind) String() string { return kindNames[k].name }

// Section is the member of a list result that holds the items, which is
// also the lock file's section: tools, prompts, resources, resourceTemplates.
func (k Kind) Section() string {
	if k == ResourceTemplate {
		return "resourceTemplates"
	}
	return kindNames[k].section
}

// KeyField is the member that identifies an item: name, or uri and
// uriTemplate for resources.
func (k Kind) KeyField() string { return kindNames[k].key }

// ListMethod is the request that lists items of the kind.
func (k Kind) ListMethod() string { return kindNames[k].list }

// KindOfList returns the kind a list request returns.
func KindOfList(method string) (Kind, bool) {
	for k := range numKinds {
		if kindNames[k].list == method {
			return k, true
		}
	}
	return 0, false
}

// Lock is what a lock file pins: the canonical definition of every item
// the server announced, its instructions and its serverInfo.
type Lock struct {
	// Instructions is the pinned text (canonical); HasInstructions is
	// false when the server sent none.
	Instructions    string
	HasInstructions bool
	ServerInfo      *Definition
	Items           [numKinds]map[string]Definition
	// MetaUnpinned: a version 1 lock, written before _meta was pinned;
	// its items are compared without their _meta until it is written
	// again (version 2).
	MetaUnpinned bool
}

// NewLock returns an empty lock.
func NewLock() *Lock {
	l := &Lock{}
	for k := range numKinds {
		l.Items[k] = map[string]Definition{}
	}
	return l
}

// lockVersion is the version Marshal writes: 2 pins items' _meta; 1,
// still read, did not.
const lockVersion = 2

// maxLockBytes bounds a lock file.
const maxLockBytes = 16 << 20

// lockFile is the file as written.
type lockFile struct {
	Version           int                 `json:"version"`
	Instructions      *string             `json:"instructions,omitempty"`
	ServerInfo        *lockItem           `json:"server_info,omitempty"`
	Tools             map[string]lockItem `json:"tools,omitempty"`
	Prompts           map[string]lockItem `json:"prompts,omitempty"`
	Resources         map[string]lockItem `json:"resources,omitempty"`
	ResourceTemplates map[string]lockItem `json:"resource_templates,omitempty"`
}

type lockItem struct {
	Digest string            `json:"digest"`
	Fields map[string]string `json:"fields"`
}

// ErrNoLock is wrapped by ReadLock when the file does not exist.
var ErrNoLock = errors.New("lock file does not exist")

// ReadLock reads and checks a lock file. Every digest must match its
// fields: a hand edit that changes one without the other is refused.
func ReadLock(path string) (*Lock, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w (write it with mcpguard pin)", path, ErrNoLock)
	}
	if err != nil {
		return nil, err
	}
	l, err := ParseLock(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// ParseLock parses the text of a lock file.
func ParseLock(data []byte) (*Lock, error) {
	if len(data) > maxLockBytes {
		return nil, errors.New("lock file is larger than 16 MiB")
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, err
	}
	if len(f.Docs) != 1 || f.Docs[0].Body == nil {
		return nil, errors.New("a lock file holds exactly one YAML document")
	}
	var alias error
	ast.Walk(visitor(func(n ast.Node) bool {
		if _, ok := n.(*ast.AliasNode); ok && alias == nil {
			alias = fmt.Errorf("line %d: YAML aliases are not allowed in a lock file", n.GetToken().Position.Line)
		}
		return alias == nil
	}), f.Docs[0].Body)
	if alias != nil {
		return nil, alias
	}
	var v any
	if err := yaml.NodeToValue(f.Docs[0].Body, &v); err != nil {
		return nil, err
	}
	doc, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var lf lockFile
	if err := json.Unmarshal(doc, &lf, json.RejectUnknownMembers(true)); err != nil {
		return nil, fmt.Errorf("not a lock file: %w", err)
	}
	if lf.Version != 1 && lf.Version != lockVersion {
		return nil, fmt.Errorf("lock file version %d; this mcpguard reads versions 1 and 2", lf.Version)
	}
	l := NewLock()
	l.MetaUnpinned = lf.Version == 1
	if lf.Instructions != nil {
		tok, err := jsontext.NewDecoder(strings.NewReader(*lf.Instructions)).ReadToken()
		if err != nil || tok.Kind() != '"' {
			return nil, errors.New("instructions is not a JSON string")
		}
		l.Instructions, l.HasInstructions = tok.String(), true
	}
	if lf.ServerInfo != nil {
		d, err := lf.ServerInfo.definition("server_info")
		if err != nil {
			return nil, err
		}
		l.ServerInfo = &d
	}
	for k, items := range [numKinds]map[string]lockItem{lf.Tools, lf.Prompts, lf.Resources, lf.ResourceTemplates} {
		for key, it := range items {
			d, err := it.definition(kindNames[k].section + "." + key)
			if err != nil {
				return nil, err
			}
			l.Items[k][key] = d
		}
	}
	return l, nil
}

func (it lockItem) definition(where string) (Definition, error) {
	// Re-canonicalise: the fields must be canonical JSON already, and the
	// digest must be theirs.
	d := Definition{Fields: map[string]string{}}
	for name, text := range it.Fields {
		def, err := Canonical([]byte(`{"v":` + text + `}`))
		if err != nil || asciiJSON(def.Fields["v"]) != asciiJSON(text) {
			return Definition{}, fmt.Errorf("%s.fields.%s is not canonical JSON", where, name)
		}
		d.Fields[name] = def.Fields["v"]
	}
	if d.Digest() != it.Digest {
		return Definition{}, fmt.Errorf("%s: digest %s does not match its fields (%s); was the lock edited by hand? run mcpguard pin again", where, it.Digest, d.Digest())
	}
	return d, nil
}

type visitor func(ast.Node) bool

func (v visitor) Visit(n ast.Node) ast.Visitor {
	if !v(n) {
		return nil
	}
	return v
}

// Marshal renders the lock file: sections and items in sorted order, one
// field per line, so a change to one field is a one-line diff.
func (l *Lock) Marshal() ([]byte, error) {
	doc := yaml.MapSlice{{Key: "version", Value: lockVersion}}
	if l.HasInstructions {
		q, err := jsontext.AppendQuote(nil, l.Instructions)
		if err != nil {
			return nil, err
		}
		doc = append(doc, yaml.MapItem{Key: "instructions", Value: asciiJSON(string(q))})
	}
	if l.ServerInfo != nil {
		doc = append(doc, yaml.MapItem{Key: "server_info", Value: itemYAML(*l.ServerInfo)})
	}
	for k := range numKinds {
		items := l.Items[k]
		if len(items) == 0 {
			continue
		}
		keys := make([]string, 0, len(items))
		for key := range items {
			keys = append(keys, key)
		}
		slices.Sort(keys)
		sec := yaml.MapSlice{}
		for _, key := range keys {
			sec = append(sec, yaml.MapItem{Key: key, Value: itemYAML(items[key])})
		}
		doc = append(doc, yaml.MapItem{Key: kindNames[k].section, Value: sec})
	}
	node, err := yaml.ValueToNode(doc, yaml.Indent(2), yaml.UseSingleQuote(true), yaml.UseLiteralStyleIfMultiline(true))
	if err != nil {
		return nil, err
	}
	if err := quoteKeys(node, doc); err != nil {
		return nil, err
	}
	body := node.String() + "\n"
	var b bytes.Buffer
	b.WriteString("# mcpguard lock file: what the MCP server shows the model, pinned by\n")
	b.WriteString("# `mcpguard pin`. Review a change with `mcpguard pin --diff`; accept it by\n")
	b.WriteString("# running `mcpguard pin` again. Values are canonical JSON (after the text\n")
	b.WriteString("# canonicaliser, members sorted); each digest is the SHA-256 of its item.\n")
	b.WriteString(body)
	// Check our own output reads back to the same lock.
	if _, err := ParseLock(b.Bytes()); err != nil {
		return nil, fmt.Errorf("the lock file does not read back (a bug in mcpguard): %w", err)
	}
	return b.Bytes(), nil
}

// quoteKeys writes every key of doc that is not plainKey double-quoted in
// node, its YAML: the YAML library's own choice for such a key (bare,
// single-quoted, a literal block) did not always read back. The nodes'
// keys are in doc's order, depth first.
func quoteKeys(node ast.Node, doc yaml.MapSlice) error {
	var keys []string
	var collect func(m yaml.MapSlice)
	collect = func(m yaml.MapSlice) {
		for _, it := range m {
			keys = append(keys, it.Key.(string))
			if sub, ok := it.Value.(yaml.MapSlice); ok {
				collect(sub)
			}
		}
	}
	collect(doc)
	i := 0
	var err error
	ast.Walk(visitor(func(n ast.Node) bool {
		mv, ok := n.(*ast.MappingValueNode)
		if !ok || err != nil {
			return err == nil
		}
		k, ok := mv.Key.(*ast.StringNode)
		switch {
		case !ok || i >= len(keys) || plainKey(keys[i]) && k.Value != keys[i]:
			err = errors.New("the lock file's keys are not in the order written (a bug in mcpguard)")
		case !plainKey(keys[i]):
			k.Value, k.Token.Type = keys[i], token.DoubleQuoteType
		}
		i++
		return true
	}), node)
	return err
}

// plainKey reports whether a key is written bare: a name of letters,
// digits, '_' and '-' that YAML reads as that string. Any other key (an
// item's name, URI or member name as the server sent it, canonicalised:
// a newline, a tab, "<<", "null", "- x") is written double-quoted, where
// YAML reads escapes as JSON does, so it reads back as written; the YAML
// library's own choice (bare, single-quoted, a literal block) did not.
func plainKey(k string) bool {
	if k == "" || k[0] == '-' || k[0] >= '0' && k[0] <= '9' {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	switch strings.ToLower(k) {
	case "null", "true", "false", "yes", "no", "on", "off", "y", "n":
		return false
	}
	return true
}

func itemYAML(d Definition) yaml.MapSlice {
	fields := yaml.MapSlice{}
	for _, name := range d.names() {
		fields = append(fields, yaml.MapItem{Key: name, Value: asciiJSON(d.Fields[name])})
	}
	return yaml.MapSlice{{Key: "digest", Value: d.Digest()}, {Key: "fields", Value: fields}}
}

// asciiJSON spells the JSON text j in ASCII: every other code point (all
// of them inside strings) becomes a \u escape, a surrogate pair above
// U+FFFF. The YAML library reads some Unicode spaces (U+00A0, U+2003,
// U+3000) as its own whitespace and trims or folds them, so a lock
// written with them raw did not read back; escaped, every string does,
// and the reader re-canonicalises to the same text and digest.
func asciiJSON(j string) string {
	var b strings.Builder
	for _, r := range j {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xFFFF:
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, hi, lo)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// WriteFile writes the lock atomically (a temporary file renamed over path).
func (l *Lock) WriteFile(path string) error {
	b, err := l.Marshal()
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// State summarises a lock file for `mcpguard status`: whether it exists
// and reads, and how many items of each kind it pins.
type State struct {
	Path    string
	Exists  bool
	Err     error // nil when it reads and checks
	Tools   int
	Prompts int
	// Resources counts resources and resource templates.
	Resources       int
	HasInstructions bool
	// ServerVersion is the serverInfo.version the lock pinned, "" when
	// it pinned none.
	ServerVersion string
	// Written is the lock file's modification time.
	Written time.Time
}

// ReadState reads the lock file at path for a summary; it never fails,
// a problem is in State.Err.
func ReadState(path string) State {
	s := State{Path: path}
	l, err := ReadLock(path)
	if errors.Is(err, ErrNoLock) {
		return s
	}
	s.Exists = true
	if err != nil {
		s.Err = err
		return s
	}
	s.Tools, s.Prompts = len(l.Items[Tool]), len(l.Items[Prompt])
	s.Resources = len(l.Items[Resource]) + len(l.Items[ResourceTemplate])
	s.HasInstructions = l.HasInstructions
	if l.ServerInfo != nil {
		var v string
		if json.Unmarshal([]byte(l.ServerInfo.Fields["version"]), &v) == nil {
			s.ServerVersion = v
		}
	}
	if fi, err := os.Stat(path); err == nil {
		s.Written = fi.ModTime()
	}
	return s
}

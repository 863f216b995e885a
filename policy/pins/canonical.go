package pins

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/rules/canon"
)

// maxDepth bounds the nesting of a definition; real schemas nest a few levels.
const maxDepth = 64

var (
	errDuplicate = errors.New("two members have the same name once canonicalised")
	errDepth     = errors.New("definition nests deeper than 64 levels")
	errNotObject = errors.New("definition is not a JSON object")
)

// Definition is one item the server shows the model (a tool, prompt,
// resource, resource template, or the serverInfo), in canonical form: every
// string and member name through the text canonicaliser, members sorted,
// no insignificant whitespace. Fields maps each top-level member to its
// canonical JSON text; the definition's own canonical text is those fields
// as one object. Canonical text is safe to print: text has removed the
// escapes and invisible characters a terminal or a model would act on.
type Definition struct {
	Fields map[string]string
}

// VolatileMeta are the keys of an item's _meta that are not pinned: they
// identify one request, not the item (a progress token, the task a
// message belongs to), so they differ on every list without the item
// changing. Every other _meta key is pinned: MCP Apps hosts act on
// _meta (ui.visibility decides whether the model sees a tool,
// ui.resourceUri which page it runs, the CSP what that page may load), so
// flipping a tool's visibility from ["app"] to ["model","app"] is a rug
// pull like a changed description.
var VolatileMeta = []string{"progressToken", "io.modelcontextprotocol/related-task"}

// Canonical parses a definition the server sent. Formatting, member order
// and what the text canonicaliser removes do not change the result; any
// other change does, in _meta too but for its VolatileMeta keys.
func Canonical(item []byte) (Definition, error) {
	d := jsontext.NewDecoder(bytes.NewReader(item))
	if d.PeekKind() != '{' {
		return Definition{}, errNotObject
	}
	n, err := readNode(d, 0)
	if err != nil {
		return Definition{}, err
	}
	def := Definition{Fields: make(map[string]string, len(n.members))}
	for _, m := range n.members {
		if m.name == "_meta" {
			m.value.members = slices.DeleteFunc(slices.Clone(m.value.members), func(mm member) bool {
				return slices.Contains(VolatileMeta, mm.name)
			})
			if m.value.kind == '{' && len(m.value.members) == 0 {
				continue // nothing but volatile keys: as if absent
			}
		}
		var b strings.Builder
		m.value.write(&b)
		def.Fields[m.name] = b.String()
	}
	return def, nil
}

// Text is the definition's canonical JSON text.
func (d Definition) Text() string {
	names := d.names()
	var b strings.Builder
	b.WriteByte('{')
	for i, name := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(&b, name)
		b.WriteByte(':')
		b.WriteString(d.Fields[name])
	}
	b.WriteByte('}')
	return b.String()
}

// Digest is "sha256:" and the hex SHA-256 of the canonical text.
func (d Definition) Digest() string { return digestOf(d.Text()) }

func (d Definition) names() []string {
	names := make([]string, 0, len(d.Fields))
	for name := range d.Fields {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// String returns the canonical member name field as a Go string, "" when
// absent or not a string.
func (d Definition) String(field string) string {
	v, ok := d.Fields[field]
	if !ok || len(v) < 2 || v[0] != '"' {
		return ""
	}
	tok, err := jsontext.NewDecoder(strings.NewReader(v)).ReadToken()
	if err != nil {
		return ""
	}
	return tok.String()
}

// ChangedFields lists, in order, the fields that differ between two
// definitions (present in one only, or with different values).
func ChangedFields(old, cur Definition) []string {
	var out []string
	for _, name := range cur.names() {
		if ov, ok := old.Fields[name]; !ok || ov != cur.Fields[name] {
			out = append(out, name)
		}
	}
	for _, name := range old.names() {
		if _, ok := cur.Fields[name]; !ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func digestOf(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// node is a parsed JSON value: objects keep their members sorted by name.
type node struct {
	kind    jsontext.Kind
	raw     string // literals and numbers: their text; strings: canonical value
	members []member
	elems   []node
}

type member struct {
	name  string
	value node
}

func readNode(d *jsontext.Decoder, depth int) (node, error) {
	if depth > maxDepth {
		return node{}, errDepth
	}
	switch kind := d.PeekKind(); kind {
	case '{':
		if _, err := d.ReadToken(); err != nil {
			return node{}, err
		}
		n := node{kind: '{'}
		for d.PeekKind() != '}' {
			tok, err := d.ReadToken()
			if err != nil {
				return node{}, err
			}
			name := canon.Text(tok.String()) // before the token is voided
			v, err := readNode(d, depth+1)
			if err != nil {
				return node{}, err
			}
			n.members = append(n.members, member{name: name, value: v})
		}
		if _, err := d.ReadToken(); err != nil {
			return node{}, err
		}
		slices.SortFunc(n.members, func(a, b member) int { return strings.Compare(a.name, b.name) })
		for i := 1; i < len(n.members); i++ {
			if n.members[i].name == n.members[i-1].name {
				return node{}, errDuplicate
			}
		}
		return n, nil
	case '[':
		if _, err := d.ReadToken(); err != nil {
			return node{}, err
		}
		n := node{kind: '['}
		for d.PeekKind() != ']' {
			v, err := readNode(d, depth+1)
			if err != nil {
				return node{}, err
			}
			n.elems = append(n.elems, v)
		}
		if _, err := d.ReadToken(); err != nil {
			return node{}, err
		}
		return n, nil
	case '"':
		tok, err := d.ReadToken()
		if err != nil {
			return node{}, err
		}
		return node{kind: '"', raw: canon.Text(tok.String())}, nil
	default:
		v, err := d.ReadValue()
		if err != nil {
			return node{}, err
		}
		return node{kind: kind, raw: string(v)}, nil
	}
}

func (n *node) write(b *strings.Builder) {
	switch n.kind {
	case '{':
		b.WriteByte('{')
		for i := range n.members {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, n.members[i].name)
			b.WriteByte(':')
			n.members[i].value.write(b)
		}
		b.WriteByte('}')
	case '[':
		b.WriteByte('[')
		for i := range n.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			n.elems[i].write(b)
		}
		b.WriteByte(']')
	case '"':
		writeString(b, n.raw)
	default:
		b.WriteString(n.raw)
	}
}

// writeString writes s as a JSON string in one fixed spelling, whatever
// escapes the server used.
func writeString(b *strings.Builder, s string) {
	v, err := jsontext.AppendQuote(nil, s)
	if err != nil { // invalid UTF-8 cannot survive canon.Text
		v, _ = jsontext.AppendQuote(nil, strings.ToValidUTF8(s, "\uFFFD"))
	}
	b.Write(v)
}

// withoutMeta is d less its _meta, for comparing with a version 1 lock,
// which did not pin _meta.
func (d Definition) withoutMeta() Definition {
	if _, ok := d.Fields["_meta"]; !ok {
		return d
	}
	out := Definition{Fields: make(map[string]string, len(d.Fields))}
	for k, v := range d.Fields {
		if k != "_meta" {
			out.Fields[k] = v
		}
	}
	return out
}

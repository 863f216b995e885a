package lint

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/rules/lazyregexp"
	"github.com/mcpguard/mcpguard/rules/rawjson"
)

// notProse are members whose strings are identifiers, addresses or
// machine syntax, not text for the model: a resource's uri is a URL by
// nature, a schema's pattern is a regex. They are still checked for
// hidden text.
var notProse = map[string]bool{
	"uri": true, "uriTemplate": true, "mimeType": true, "src": true, "$schema": true, "$id": true,
	"$ref": true, "$anchor": true, "$dynamicRef": true, "pattern": true, "format": true, "type": true,
	"contentMediaType": true, "contentEncoding": true, "sizes": true, "theme": true, "protocolVersion": true,
	"version": true, "websiteUrl": true,
}

// dataMembers hold values rather than prose (the strings of an enum or
// examples array are found under the array's member name).
var dataMembers = map[string]bool{"default": true, "examples": true, "example": true, "enum": true, "const": true}

// sensitiveName is an argument named after key material: the parameter
// itself asks for it (CyberArk's full-schema poisoning names one
// content_from_reading_ssh_id_rsa).
var sensitiveName = lazyregexp.New(`(^|[_-])(id_(rsa|dsa|ecdsa|ed25519)|private_?key|ssh_?key|seed_?phrase|mnemonic|mcp_?json)([_-]|$)`)

// Item lints one definition as the server sent it (a tool, prompt,
// resource or resource template object), read whole as the model reads
// it: its name, title and description, argument names and descriptions,
// and every string of its input and output schema (descriptions, titles,
// enums, defaults, examples) in document order, so that a directive
// split across fields is one sentence again. Each string is also checked
// on its own for hidden text and size. A finding names the field where
// its match begins. Items that cannot be decoded get no findings: they
// are judged elsewhere.
func Item(raw []byte) []Finding {
	d := jsontext.NewDecoder(bytes.NewReader(raw))
	var out []Finding
	add := func(rule, field string) {
		f := Finding{Rule: rule, Field: field}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	var r reading
	var names []string
	var walk func(path string, last string, depth int) error
	walk = func(path, last string, depth int) error {
		if depth > 64 {
			return jsontext.ErrDuplicateName // any error: stop
		}
		switch d.PeekKind() {
		case '{':
			if _, err := d.ReadToken(); err != nil {
				return err
			}
			for d.PeekKind() != '}' {
				tok, err := d.ReadToken()
				if err != nil {
					return err
				}
				name := tok.String()
				if name == "_meta" && depth == 0 {
					if err := d.SkipValue(); err != nil {
						return err
					}
					continue
				}
				field := join(path, name)
				if hidden(name) {
					add(RuleHiddenText, field+" (member name)")
				}
				if last == "properties" {
					names = append(names, field)
				}
				if err := walk(field, name, depth+1); err != nil {
					return err
				}
			}
			_, err := d.ReadToken()
			return err
		case '[':
			if _, err := d.ReadToken(); err != nil {
				return err
			}
			for i := 0; d.PeekKind() != ']'; i++ {
				if err := walk(path+"["+strconv.Itoa(i)+"]", last, depth+1); err != nil {
					return err
				}
			}
			_, err := d.ReadToken()
			return err
		case '"':
			tok, err := d.ReadToken()
			if err != nil {
				return err
			}
			s := tok.String()
			if hidden(s) {
				add(RuleHiddenText, path)
			}
			if notProse[last] {
				return nil
			}
			if len(s) > MaxTextBytes {
				add(RuleOversized, path)
			}
			ctx := Prose
			if dataMembers[last] {
				ctx = Data
			}
			r.add(path, s, ctx)
			return nil
		default:
			return d.SkipValue()
		}
	}
	_ = walk("", "", 0)
	// Argument names are read too ("sidenote"), after the text so that
	// they do not split it.
	for _, field := range names {
		name := field[strings.LastIndexByte(field, '.')+1:]
		r.add(field+" (member name)", name, Data)
		if sensitiveName().MatchString(strings.ToLower(name)) {
			add(RuleSensitiveFile, field+" (member name)")
		}
	}
	r.findings(add)
	if len(raw) > 64*MaxTextBytes {
		add(RuleOversized, "(whole definition)")
	}
	return Sorted(out)
}

// Instructions lints a server's instructions.
func Instructions(s string) []Finding {
	return Check("instructions", s, MaxInstructionsBytes, ServerInstructions)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// Report is the findings of one item of a list.
type Report struct {
	Name     string // the item's key (name, uri, uriTemplate), as sent
	Findings []Finding
}

// Listed lints every item of a list result ({"tools": [...]}, with
// section "tools" and key "name") and returns the items with findings, in
// list order.
func Listed(result []byte, section, key string) []Report {
	var out []Report
	if list := rawjson.Member(result, section); list.Kind() == '[' {
		rawjson.EachElement(list, func(_ int, v jsontext.Value) error {
			if fs := Item(v); len(fs) > 0 {
				out = append(out, Report{Name: keyOf(v, key), Findings: fs})
			}
			return nil
		})
	}
	return out
}

func keyOf(item jsontext.Value, key string) string {
	if v := rawjson.Member(item, key); v.Kind() == '"' {
		return rawjson.Unescape(string(v[1 : len(v)-1]))
	}
	return ""
}

package lint

import (
	"bytes"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
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

// Item lints every string of one definition as the server sent it (a tool,
// prompt, resource or resource template object): descriptions, titles,
// argument and schema descriptions, defaults, enums, examples. Member
// names are checked for hidden text. Items that cannot be decoded get no
// findings: they are judged elsewhere.
func Item(raw []byte) []Finding {
	d := jsontext.NewDecoder(bytes.NewReader(raw))
	var out []Finding
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
				out = append(out, Check(field+" (member name)", name, 0, Data)...)
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
			if notProse[last] {
				if hidden(s) {
					out = append(out, Finding{Rule: RuleHiddenText, Field: path})
				}
				return nil
			}
			ctx := Prose
			if dataMembers[last] {
				ctx = Data
			}
			out = append(out, Check(path, s, 0, ctx)...)
			return nil
		default:
			return d.SkipValue()
		}
	}
	_ = walk("", "", 0)
	if len(raw) > 64*MaxTextBytes {
		out = append(out, Finding{Rule: RuleOversized, Field: "(whole definition)"})
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
	d := jsontext.NewDecoder(bytes.NewBuffer(result))
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil
	}
	var out []Report
	for d.PeekKind() == '"' {
		tok, err := d.ReadToken()
		if err != nil {
			return out
		}
		if tok.String() != section || d.PeekKind() != '[' {
			if d.SkipValue() != nil {
				return out
			}
			continue
		}
		d.ReadToken()
		for d.PeekKind() != ']' && d.PeekKind() != 0 {
			v, err := d.ReadValue()
			if err != nil {
				return out
			}
			if fs := Item(v); len(fs) > 0 {
				out = append(out, Report{Name: keyOf(v, key), Findings: fs})
			}
		}
		return out
	}
	return out
}

func keyOf(item jsontext.Value, key string) string {
	d := jsontext.NewDecoder(bytes.NewReader(item))
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return ""
	}
	for d.PeekKind() == '"' {
		tok, err := d.ReadToken()
		if err != nil {
			return ""
		}
		if tok.String() == key && d.PeekKind() == '"' {
			v, _ := d.ReadToken()
			return v.String()
		}
		if d.SkipValue() != nil {
			return ""
		}
	}
	return ""
}

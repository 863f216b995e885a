package message

import (
	"bytes"

	"github.com/go-json-experiment/json/jsontext"
)

// parseFast is Parse for the common well-formed message, on the spans one
// validator pass records, into m. It returns false whenever the line is refused or
// unusual (escaped or unknown envelope names, more members than the
// validator records, ...); Parse then runs the jsontext slow path, which
// accepts or explains. When it returns true, the slow path would have
// returned the same message (FuzzParseFast holds the two equal).
// v is the validator to run, reset, and left reset.
func parseFast(m *Message, line []byte, v *validator) bool {
	ok := parseSpans(m, line, v)
	v.reset()
	if !ok {
		*m = Message{}
	}
	return ok
}

func parseSpans(m *Message, line []byte, v *validator) bool {
	line = trimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return false
	}
	v.run(line)
	val := &v.res
	if !val.ok || val.topOver {
		return false
	}
	lastName := m.Name // a session calls few tools: most names repeat
	*m = Message{Raw: line, TextPlain: val.textPlain, escapes: val.esc, members: val.members, passRead: true}
	var version, method jsontext.Value
	for k := range val.nTop {
		s := &val.top[k] // not a copy: see note
		if s.escapedName {
			return false
		}
		name, value := s.name(line), s.value(line) // sliced once, not in every case
		switch string(name[1 : len(name)-1]) {
		case "jsonrpc":
			version = value
		case "id":
			m.ID = value
		case "method":
			method = value
		case "params":
			m.Params = value
		case "result":
			m.Result = value
		case "error":
			m.Error = value
		default:
			return false
		}
	}
	if string(version) != `"2.0"` {
		return false
	}
	if m.ID != nil && checkID(m.ID, method == nil && m.Error != nil) != nil {
		return false
	}
	switch {
	case method != nil:
		if m.Result != nil || m.Error != nil || kindOf(method) != '"' {
			return false
		}
		m.Method = memberName(method, bytes.IndexByte(method, '\\') >= 0, knownMethods)
		m.Kind = Notification
		if m.ID != nil {
			m.Kind = Request
		}
		if m.Params != nil {
			if kindOf(m.Params) != '{' || val.paramsOver {
				return false
			}
			for k := range val.nParams {
				s := &val.params[k]
				name := memberName(s.name(line), s.escapedName, commonNames)
				if foldVariant(name, paramsMembers) || m.readParam(name, s.value(line), lastName) != nil {
					return false
				}
			}
		}
		if (m.Method == "tools/call" || m.Method == "prompts/get") && m.Kind == Request && m.Name == "" {
			return false
		}
	case m.Result != nil && m.Error != nil:
		return false
	case m.Result != nil || m.Error != nil:
		if m.ID == nil || (m.Error != nil && checkErrorObject(m.Error) != nil) {
			return false
		}
		m.Kind = Response
	default:
		return false
	}
	if val.whitespace {
		raw := jsontext.Value(bytes.Clone(line))
		if raw.Compact() != nil {
			return false
		}
		m.Raw = raw
	}
	return true
}

// knownMethods are the methods whose names parsing returns without
// allocating: the ones a busy session sends most.
var knownMethods = []string{"tools/call", "notifications/progress", "notifications/message", "ping", "resources/read",
	"prompts/get", "tools/list", "notifications/cancelled", "completion/complete"}

// memberName decodes a raw (quoted) member name; an unescaped name equal to
// one of known is returned without allocating.
func memberName(raw []byte, escaped bool, known []string) string {
	if escaped {
		return unquote(raw)
	}
	body := raw[1 : len(raw)-1]
	for _, k := range known {
		if string(body) == k {
			return k
		}
	}
	return string(body)
}

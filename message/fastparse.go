package message

import (
	"bytes"

	"github.com/go-json-experiment/json/jsontext"
)

// parseFast is Parse for the common well-formed message, on the spans one
// validator pass records. It returns nil whenever the line is refused or
// unusual (escaped or unknown envelope names, more members than the
// validator records, ...); Parse then runs the jsontext slow path, which
// accepts or explains. When it returns a message, the slow path would have
// returned the same one (FuzzParseFast holds the two equal).
func parseFast(line []byte) *Message {
	line = bytes.Trim(line, " \t\r\n")
	if len(line) == 0 || line[0] != '{' {
		return nil
	}
	v := validate(line)
	defer v.release()
	val := &v.res
	if !val.ok || val.topOver {
		return nil
	}
	m := &Message{Raw: line, TextPlain: val.textPlain}
	var version, method jsontext.Value
	for _, s := range val.top[:val.nTop] {
		if s.escapedName {
			return nil
		}
		switch string(s.name[1 : len(s.name)-1]) {
		case "jsonrpc":
			version = s.value
		case "id":
			m.ID = s.value
		case "method":
			method = s.value
		case "params":
			m.Params = s.value
		case "result":
			m.Result = s.value
		case "error":
			m.Error = s.value
		default:
			return nil
		}
	}
	if string(version) != `"2.0"` {
		return nil
	}
	if m.ID != nil && checkID(m.ID, method == nil && m.Error != nil) != nil {
		return nil
	}
	switch {
	case method != nil:
		if m.Result != nil || m.Error != nil || method.Kind() != '"' {
			return nil
		}
		m.Method = unquote(method)
		m.Kind = Notification
		if m.ID != nil {
			m.Kind = Request
		}
		if m.Params != nil {
			if m.Params.Kind() != '{' || val.paramsOver {
				return nil
			}
			for _, s := range val.params[:val.nParams] {
				name := memberName(s.name, s.escapedName, commonNames)
				if foldVariant(name, paramsMembers) || m.readParam(name, s.value) != nil {
					return nil
				}
			}
		}
		if (m.Method == "tools/call" || m.Method == "prompts/get") && m.Kind == Request && m.Name == "" {
			return nil
		}
	case m.Result != nil && m.Error != nil:
		return nil
	case m.Result != nil || m.Error != nil:
		if m.ID == nil || (m.Error != nil && checkErrorObject(m.Error) != nil) {
			return nil
		}
		m.Kind = Response
	default:
		return nil
	}
	if val.whitespace {
		raw := jsontext.Value(bytes.Clone(line))
		if raw.Compact() != nil {
			return nil
		}
		m.Raw = raw
	}
	return m
}

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

package message

import (
	"bytes"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/sourcegraph/jsonrpc2"
)

// paramsMembers are member names that MCP methods give meaning to in params,
// across every protocol revision mcpguard relays. A member that differs from
// one of these only by case or Unicode folding (`ARGUMENTS`, `argumentſ`,
// `Name`) is refused: servers decoding with Go's encoding/json match names
// case-insensitively and with folding (CVE-2026-27896 in the Go MCP SDK) and
// would read the variant as the real member while a policy checked the
// other one.
var paramsMembers = []string{
	"_meta", "name", "arguments", "uri", "cursor", "level", "ref", "argument",
	"context", "protocolVersion", "capabilities", "clientInfo", "messages",
	"requestId", "reason", "progressToken", "progress", "total", "message",
	"roots", "task", "taskId", "ttl", "inputResponses", "requestState",
	"systemPrompt", "includeContext", "temperature", "maxTokens",
	"stopSequences", "metadata", "modelPreferences", "requestedSchema", "mode",
	"elicitationId", "url", "logger", "data", "action", "content",
}

// commonNames are the member names readName returns without allocating.
var commonNames = []string{"name", "arguments", "_meta", "uri", "progressToken", "code", "message", "data", "cursor"}

// metaMembers are the names _meta gives meaning to (`progressToKen` with a
// Kelvin sign folds onto progressToken).
var metaMembers = []string{"progressToken", "io.modelcontextprotocol/related-task"}

// foldVariant reports whether name is not one of known but folds onto one.
func foldVariant(name string, known []string) bool {
	for _, k := range known {
		if name == k {
			return false
		}
	}
	for _, k := range known {
		if strings.EqualFold(name, k) {
			return true
		}
	}
	return false
}

// readParams checks params member names and pulls out the members that
// policies judge. Params must be an object: every MCP method defines them so.
func (m *Message) readParams() *Error {
	if m.Params.Kind() != '{' {
		return invalid(jsonrpc2.CodeInvalidParams, "params must be an object")
	}
	var bad *Error
	err := eachMember(m.Params, func(name string, d *decoder) error {
		if bad != nil {
			return d.SkipValue()
		}
		if foldVariant(name, paramsMembers) {
			bad = invalid(jsonrpc2.CodeInvalidParams, "params member "+quoteName(name)+" differs only by case or Unicode folding from a known member")
			return d.SkipValue()
		}
		v, err := d.ReadValue()
		if err != nil {
			return err
		}
		bad = m.readParam(name, v, "")
		return nil
	})
	if bad != nil {
		return bad
	}
	if err != nil {
		return decodeError(err)
	}
	return nil
}

// readParamsInline is readParams on the envelope's own decoder, positioned
// at the params object: the same checks in the same pass. m.Method must be
// set. m.Params becomes the raw object, sliced out of line.
func (m *Message) readParamsInline(d *decoder, line []byte) *Error {
	if _, err := d.ReadToken(); err != nil { // '{'
		return decodeError(err)
	}
	start := d.InputOffset() - 1
	for d.PeekKind() != '}' {
		name, err := d.readName(commonNames...)
		if err != nil {
			return decodeError(err)
		}
		if foldVariant(name, paramsMembers) {
			return invalid(jsonrpc2.CodeInvalidParams, "params member "+quoteName(name)+" differs only by case or Unicode folding from a known member")
		}
		v, err := d.ReadValue()
		if err != nil {
			return decodeError(err)
		}
		if bad := m.readParam(name, v, ""); bad != nil {
			return bad
		}
	}
	if _, err := d.ReadToken(); err != nil { // '}'
		return decodeError(err)
	}
	m.Params = line[start:d.InputOffset()]
	return nil
}

// readParam checks one params member and keeps it when policies judge it.
// lastName is a tool or prompt name to reuse when the member spells the
// same one, so that a repeated call costs no allocation for its name.
func (m *Message) readParam(name string, v jsontext.Value, lastName string) *Error {
	switch name {
	case "_meta":
		if kindOf(v) != '{' {
			return invalid(jsonrpc2.CodeInvalidParams, "params._meta must be an object")
		}
		var bad *Error
		err := eachMember(v, func(name string, d *decoder) error {
			if bad == nil && foldVariant(name, metaMembers) {
				bad = invalid(jsonrpc2.CodeInvalidParams, "params._meta member "+quoteName(name)+" differs only by case or Unicode folding from a known member")
			}
			return d.SkipValue()
		})
		if bad != nil {
			return bad
		}
		if err != nil {
			return decodeError(err)
		}
	case "task":
		m.Task = m.Method == "tools/call" && kindOf(v) == '{'
	case "name":
		if m.Method != "tools/call" && m.Method != "prompts/get" {
			return nil
		}
		if kindOf(v) != '"' {
			return invalid(jsonrpc2.CodeInvalidParams, "params.name must be a string")
		}
		if body := v[1 : len(v)-1]; string(body) == lastName && bytes.IndexByte(body, '\\') < 0 {
			m.Name = lastName // without escapes, the raw text is the name
		} else {
			m.Name = unquote(v)
		}
	case "arguments":
		if m.Method != "tools/call" && m.Method != "prompts/get" {
			return nil
		}
		switch kindOf(v) {
		case 'n':
			// The go-sdk client sends null for "no arguments"; a server
			// reads it as none (or refuses it), never as hostile content.
			return nil
		case '{':
			m.Arguments = v
			return nil
		}
		return invalid(jsonrpc2.CodeInvalidParams, "params.arguments must be an object")
	case "requestId":
		if m.Method != "notifications/cancelled" {
			return nil
		}
		if err := checkID(v, false); err != nil {
			return invalid(jsonrpc2.CodeInvalidParams, "params.requestId must be a string or an integer")
		}
		m.RequestID = v
	case "inputResponses":
		m.InputResponses = v
	case "uri":
		if !judged(m.Method, "resources/read", "resources/subscribe", "resources/unsubscribe") {
			return nil
		}
		if kindOf(v) != '"' {
			return invalid(jsonrpc2.CodeInvalidParams, "params.uri must be a string")
		}
		m.URI = unquote(v)
	}
	return nil
}

func judged(method string, methods ...string) bool {
	for _, x := range methods {
		if method == x {
			return true
		}
	}
	return false
}

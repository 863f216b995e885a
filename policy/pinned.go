package policy

import (
	"bytes"
	"slices"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/policy/pins"
	"github.com/mcpguard/mcpguard/rules/codes"
	"github.com/mcpguard/mcpguard/rules/rawjson"
)

// The hooks from a session into its pin state (package pins): lists and
// initialize results are judged on the way to the agent, calls of what was
// withheld are refused on the way to the server.

// checkPin refuses a call of an item that was withheld from its list, or
// that the lock file does not pin.
func (s judge) checkPin(kind pins.Kind, key string) *message.Rejection {
	b := s.pinState().Check(kind, key)
	if b == nil {
		return nil
	}
	remediation := "Review what the server now shows the model (mcpguard pin --diff); accept it by running mcpguard pin again."
	if b.Code == codes.ToolUnpinned {
		remediation = "Use a pinned " + kind.String() + " (see its list), or review this one and pin it with mcpguard pin."
	}
	return &message.Rejection{
		ErrorCode:   b.Code,
		Error:       "rejected MCP input: " + b.Reason,
		Remediation: remediation,
		Tool:        clean(key),
		Rule:        "pins",
	}
}

func (s *Session) logPin(ev *pins.Event) {
	if ev != nil && s.OnPin != nil {
		s.OnPin(*ev)
	}
}

// pinResult judges the result of a list of prompts, resources or resource
// templates, or of initialize (server/discover). It returns nil when it
// changes nothing.
func (s judge) pinResult(m *message.Message, method string) ([]byte, error) {
	if kind, ok := pins.KindOfList(method); ok {
		return s.pinList(m, kind)
	}
	return s.pinInit(m)
}

// pinItem judges one item of a list and logs the decision.
func (s *Session) pinItem(l *pins.List, v jsontext.Value) bool {
	keep, ev := l.Judge(v)
	s.logPin(ev)
	return keep
}

// pinList judges every item of a prompts, resources or resource templates
// list and withholds those that differ from their pins.
func (s judge) pinList(m *message.Message, kind pins.Kind) ([]byte, error) {
	var kept []jsontext.Value
	changed := false
	l := s.pinState().NewList(kind)
	err := eachArrayMember(m.Result, kind.Section(), func(_ int, v jsontext.Value) error {
		if s.pinItem(l, v) {
			kept = append(kept, v)
		} else {
			changed = true
		}
		return nil
	})
	s.listDone(m.Result, kind)
	if err != nil || !changed {
		return nil, nil
	}
	return replaceMember(m.Raw, "result", kind.Section(), kept)
}

// listDone tells the pin state that a list is complete (its last page).
func (s judge) listDone(result jsontext.Value, kind pins.Kind) {
	more := false
	_ = eachResultMember(result, func(name string, _ jsontext.Value) { more = more || name == "nextCursor" })
	if !more {
		s.pinState().ListDone(kind)
	}
}

// pinInit judges the instructions and serverInfo of an initialize (or
// server/discover) result: instructions that differ from their pin are
// replaced by it, or removed.
func (s judge) pinInit(m *message.Message) ([]byte, error) {
	var instructions string
	present := false
	var info jsontext.Value
	_ = eachResultMember(m.Result, func(name string, v jsontext.Value) {
		switch name {
		case "instructions":
			if v.Kind() == '"' {
				instructions, present = message.Unquote(v), true
			}
		case "serverInfo":
			info = slices.Clone(v)
		}
	})
	if info != nil {
		s.logPin(s.pinState().ServerInfo(info))
	}
	out, outPresent, rewrite, ev := s.pinState().Instructions(instructions, present)
	s.logPin(ev)
	if !rewrite {
		return nil, nil
	}
	var with jsontext.Value
	if outPresent {
		q, err := jsontext.AppendQuote(nil, out)
		if err != nil {
			return nil, err
		}
		with = q
	}
	return setResultMember(m.Raw, "instructions", with)
}

// eachResultMember calls fn for each member of a result object.
func eachResultMember(obj jsontext.Value, fn func(name string, v jsontext.Value)) error {
	if obj.Kind() != '{' {
		return nil
	}
	return rawjson.EachMember(obj, func(name string, v jsontext.Value) error {
		fn(name, v)
		return nil
	})
}

// setResultMember returns msg with msg.result[name] set to with, or
// removed when with is nil; everything else keeps its exact text.
func setResultMember(msg []byte, name string, with jsontext.Value) ([]byte, error) {
	result := rawjson.Member(msg, "result")
	if result.Kind() != '{' {
		return bytes.Clone(msg), nil
	}
	nr, err := rawjson.SetMember(result, name, with)
	if err != nil {
		return nil, err
	}
	return rawjson.SetMember(msg, "result", nr)
}

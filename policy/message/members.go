package message

import "github.com/mcpguard/mcpguard/rules/rawjson"

// MemberSet is a set of the member names whose presence anywhere in a
// message decides whether a check must look into it at all. The parser's
// pass notes every one it meets, at any depth and once unescaped
// (inputRequest\u0073 is inputRequests), so that the message that has
// none, nearly every one, is not searched again for each.
type MemberSet uint8

const (
	// MemberInputRequests: a 2026-07-28 result's requests for the
	// client's input, each judged as a server request.
	MemberInputRequests MemberSet = 1 << iota
	// MemberIcons: icons, whose src a client fetches to draw them.
	MemberIcons
	// MemberURI: a uri, of a resource link a client may open.
	MemberURI
)

// memberNames are the names of the MemberSet's elements, in bit order.
var memberNames = [...]string{"inputRequests", "icons", "uri"}

// memberOf returns the element of MemberSet that a member name
// (unescaped) is, 0 for any other name.
func memberOf(name []byte) MemberSet {
	switch len(name) {
	case 3:
		if string(name) == "uri" {
			return MemberURI
		}
	case 5:
		if string(name) == "icons" {
			return MemberIcons
		}
	case 13:
		if string(name) == "inputRequests" {
			return MemberInputRequests
		}
	}
	return 0
}

// Members returns the names of MemberSet that members of m have, at any
// depth: exactly, from the parser's pass, when the fast path read m;
// else what MembersIn finds in m.Raw. It never leaves out a name m has.
func (m *Message) Members() MemberSet {
	if m.passRead {
		return m.members
	}
	return MembersIn(m.Raw, m.Escapes())
}

// MembersIn returns the names of MemberSet that members of the JSON
// text raw may have (rawjson.MayHoldName: spelled out or with escaped
// letters); esc are raw's escapes. It never leaves out a name raw has,
// and may add one that only a string value spells.
func MembersIn(raw []byte, esc rawjson.Escapes) MemberSet {
	var set MemberSet
	for i, name := range memberNames {
		if rawjson.MayHoldName(raw, name, esc) {
			set |= 1 << i
		}
	}
	return set
}

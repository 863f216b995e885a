package policy

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// argTree is a call's arguments decoded for the checks: one node per JSON
// value, in document order. Strings are cut from one copy of the
// arguments' text, and only a string with escapes is unescaped into its
// own; numbers are parsed as json.Unmarshal parses them into any.
//
// It exists because decoding into map[string]any (a map, an interface and
// a string per value) cost as much as all the checks of a 20-rule policy
// together, on every tools/call. It reads bytes that message.Parse has
// already validated strictly (UTF-8, escapes, grammar, duplicate names,
// depth), so it does not validate again; it still fails closed, with an
// error and never a panic, on anything it does not expect.
// FuzzArgTree holds it equal to json.Unmarshal on every valid JSON text.
type argTree struct {
	raw   []byte
	text  string // one copy of raw, which strings without escapes share
	nodes []argNode
}

type argKind uint8

const (
	argNull argKind = iota
	argFalse
	argTrue
	argNumber
	argString
	argObject
	argArray
)

// argNode is one value. A container's members or elements follow it; end
// is the index after its last descendant, so a walk steps over a child
// with i = nodes[i].end.
type argNode struct {
	name string // the member name, when the node is a member's value
	str  string // argString: the decoded text; argNumber: the literal
	len  int32  // argObject, argArray: number of members or elements
	end  int32
	kind argKind
}

// number is an argNumber's value as json.Unmarshal decodes it into any;
// parse has already refused a literal out of float64's range.
func (n *argNode) number() float64 {
	x, _ := strconv.ParseFloat(n.str, 64)
	return x
}

var errArgs = errors.New("arguments cannot be decoded")

// maxArgDepth bounds the recursion of parse on text that was not validated
// (message.Parse refuses depth > 64 before this runs).
const maxArgDepth = 1000

// parse decodes raw, the validated JSON text of the arguments; nil means
// absent arguments, which read as an empty object.
func (t *argTree) parse(raw []byte) error {
	t.raw, t.nodes = raw, t.nodes[:0]
	if raw == nil {
		t.text = ""
		t.nodes = append(t.nodes, argNode{kind: argObject, end: 1})
		return nil
	}
	if cap(t.nodes) < len(raw)/2+1 { // a value takes two bytes at least
		// Size the nodes once: every value but the first follows a ',',
		// '[' or '{' of the text. Growing by append would allocate five
		// times the final size for a hostile array of a million zeros.
		bound := 1 + bytes.Count(raw, []byte{','}) + bytes.Count(raw, []byte{'['}) + bytes.Count(raw, []byte{'{'})
		if cap(t.nodes) < bound {
			t.nodes = make([]argNode, 0, bound)
		}
	}
	t.text = string(raw)
	s := argScanner{t: t}
	s.space()
	if err := s.value("", 0); err != nil {
		return err
	}
	if s.space(); s.i != len(t.text) {
		return errArgs
	}
	return nil
}

// any decodes the arguments into map[string]any and friends, for
// kaptinlin, which is asked only when fastSchema cannot say "valid".
func (t *argTree) any() (any, error) {
	if t.raw == nil {
		return map[string]any{}, nil
	}
	var v any
	err := json.Unmarshal(t.raw, &v)
	return v, err
}

// member returns the index of the member of object i named exactly name.
func (t *argTree) member(i int32, name string) (int32, bool) {
	for c := i + 1; c < t.nodes[i].end; c = t.nodes[c].end {
		if t.nodes[c].name == name {
			return c, true
		}
	}
	return 0, false
}

type argScanner struct {
	t *argTree
	i int
}

func (s *argScanner) space() {
	for s.i < len(s.t.text) {
		switch s.t.text[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value appends the value at s.i, and its descendants, as a member named
// name (or an element, with name "").
func (s *argScanner) value(name string, depth int) error {
	text := s.t.text
	if s.i >= len(text) || depth > maxArgDepth {
		return errArgs
	}
	at := int32(len(s.t.nodes))
	s.t.nodes = append(s.t.nodes, argNode{name: name})
	n := argNode{name: name}
	switch c := text[s.i]; {
	case c == '{':
		n.kind = argObject
		count, err := s.sequence('}', func() error {
			k, err := s.str()
			if err != nil {
				return err
			}
			if s.space(); s.i >= len(text) || text[s.i] != ':' {
				return errArgs
			}
			s.i++
			s.space()
			return s.value(k, depth+1)
		})
		if err != nil {
			return err
		}
		n.len = count
	case c == '[':
		n.kind = argArray
		count, err := s.sequence(']', func() error { return s.value("", depth+1) })
		if err != nil {
			return err
		}
		n.len = count
	case c == '"':
		str, err := s.str()
		if err != nil {
			return err
		}
		n.kind, n.str = argString, str
	case c == '-' || c >= '0' && c <= '9':
		start := s.i
		for s.i < len(text) && isNumberByte(text[s.i]) {
			s.i++
		}
		x, err := strconv.ParseFloat(text[start:s.i], 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsInf(x, 0) {
			// json.Unmarshal refuses a number out of float64's range.
			return errArgs
		}
		n.kind, n.str = argNumber, text[start:s.i]
	case s.literal("true"):
		n.kind = argTrue
	case s.literal("false"):
		n.kind = argFalse
	case s.literal("null"):
		n.kind = argNull
	default:
		return errArgs
	}
	n.end = int32(len(s.t.nodes))
	s.t.nodes[at] = n
	return nil
}

// sequence reads the members or elements of the container whose opening
// bracket is at s.i, up to its closing byte, with item reading one of
// them; it returns how many there were.
func (s *argScanner) sequence(closing byte, item func() error) (int32, error) {
	text := s.t.text
	s.i++
	if s.space(); s.i < len(text) && text[s.i] == closing {
		s.i++
		return 0, nil
	}
	for count := int32(1); ; count++ {
		s.space()
		if err := item(); err != nil {
			return 0, err
		}
		if s.space(); s.i < len(text) && text[s.i] == ',' {
			s.i++
			continue
		}
		if s.i < len(text) && text[s.i] == closing {
			s.i++
			return count, nil
		}
		return 0, errArgs
	}
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

func (s *argScanner) literal(word string) bool {
	if len(s.t.text)-s.i >= len(word) && s.t.text[s.i:s.i+len(word)] == word {
		s.i += len(word)
		return true
	}
	return false
}

// str reads the string at s.i: a substring of the text when it has no
// escape, else unescaped by jsontext.
func (s *argScanner) str() (string, error) {
	text := s.t.text
	if s.i >= len(text) || text[s.i] != '"' {
		return "", errArgs
	}
	start := s.i
	if end := strings.IndexByte(text[start+1:], '"'); end >= 0 {
		// The common string has no escape: find its end with two
		// vectorised searches rather than byte by byte.
		if body := text[start+1 : start+1+end]; strings.IndexByte(body, '\\') < 0 {
			s.i = start + end + 2
			return body, nil
		}
	}
	escaped := false
	for s.i++; s.i < len(text); s.i++ {
		switch text[s.i] {
		case '\\':
			escaped = true
			s.i++ // the escaped byte cannot end the string
		case '"':
			s.i++
			if !escaped {
				return text[start+1 : s.i-1], nil
			}
			b, err := jsontext.AppendUnquote(nil, text[start:s.i])
			if err != nil {
				return "", errArgs
			}
			return string(b), nil
		}
	}
	return "", errArgs
}

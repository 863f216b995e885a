// Package approval is the user's side of `action: ask`: the elicitation
// prompt mcpguard sends the client for a held call, and the reading of
// the client's answer.
//
// The prompt is read by a person deciding whether to let a tool call
// through, and every part of it that the agent chose (the tool name,
// member names, argument values) may be hostile: a value of
// "x\n\nmcpguard: this call is safe, approved by your admin" must not be
// able to pass for mcpguard's own lines. Everything the agent chose is
// therefore shown as a Go-quoted string: newlines, tabs, control, bidi,
// zero-width and other invisible characters become escapes (\n, \u202e),
// a quote inside becomes \", and every value sits on its own line after a
// field name mcpguard wrote. Values are cut to a bounded length (the
// prompt is not the place to read a file) and the fields shown are
// bounded in number, so that a prompt stays small whatever the call.
//
// A client of protocol revision 2026-07-28, which takes no requests from
// a server, is asked the same question inside an incomplete result
// (InputRequired), and answers it when it retries its call.
//
// The answer is a form with one required choice, decision: allow_once,
// allow_session or deny (legacy enum with enumNames, which both the
// 2025-06-18 and 2025-11-25 revisions accept). Anything but an accepted
// form with one of those values (decline, cancel, an error, a missing or
// unknown value) is a denial.
package approval

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/rules/canon"
)

// Reason is one policy entry that asks for the call: its name (tools.X,
// ingress[N], flows[N]), the field it judged ("" for the whole call), the
// value it judged there and why, in the policy's words. The value is shown
// next to its field whatever the number of arguments, so an agent cannot
// push the questioned value out of the prompt behind harmless fields.
type Reason struct {
	Rule   string
	Field  string
	Value  string
	Reason string
}

// Question is a held call as the user is asked about it.
type Question struct {
	Server    string         // the server's name in logs
	Tool      string         // the tool called, as the agent wrote it
	Reasons   []Reason       // every entry that asks, in policy order
	Arguments jsontext.Value // the call's arguments as the agent sent them
	Timeout   time.Duration  // how long the user has; no answer denies
}

// Bounds of the prompt: a call with large or many arguments still makes a
// prompt of a few KiB.
const (
	maxFields     = 16  // argument fields shown
	maxValueRunes = 160 // characters of a value before it is cut
	maxPathBytes  = 120 // bytes of a field path
	maxReasons    = 8
	maxMarks      = 2 // combining marks in a row on one character
)

// The decisions the form offers, as the client sends them back.
const (
	ChoiceOnce    = "allow_once"
	ChoiceSession = "allow_session"
	ChoiceDeny    = "deny"
)

// Params is the params object of the elicitation/create request that asks
// q (form mode, the default of every revision that has elicitation).
func Params(q Question) []byte {
	p := struct {
		Message         string `json:"message"`
		RequestedSchema any    `json:"requestedSchema"`
	}{Message: Message(q), RequestedSchema: requestedSchema}
	b, err := json.Marshal(p, json.Deterministic(true))
	if err != nil {
		panic("approval: params do not marshal: " + err.Error()) // strings and a fixed schema
	}
	return b
}

var requestedSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"decision": map[string]any{
			"type":        "string",
			"title":       "Decision",
			"description": "Allow this call once, allow such calls of this tool for the rest of this session, or deny it.",
			"enum":        []string{ChoiceOnce, ChoiceSession, ChoiceDeny},
			"enumNames":   []string{"Allow once", "Allow for this session", "Deny"},
		},
	},
	"required": []string{"decision"},
}

// Message is the text of the prompt: mcpguard's own lines, with every
// part the agent chose quoted (see the package comment).
func Message(q Question) string {
	var b strings.Builder
	b.WriteString("mcpguard holds a tool call until you answer.\n")
	if q.Server != "" {
		b.WriteString("Server: " + Quote(q.Server, maxValueRunes) + "\n")
	}
	b.WriteString("Tool: " + Quote(q.Tool, maxValueRunes) + "\n")
	for i, r := range q.Reasons {
		if i == maxReasons {
			b.WriteString("(" + strconv.Itoa(len(q.Reasons)-i) + " more policy entries ask)\n")
			break
		}
		b.WriteString("Asked by policy entry " + Quote(r.Rule, 64))
		if r.Field != "" {
			b.WriteString(" on field " + Quote(r.Field, maxPathBytes) + " = " + Quote(r.Value, maxValueRunes))
		}
		if r.Reason != "" {
			b.WriteString(": " + Quote(r.Reason, 2*maxValueRunes))
		}
		b.WriteString("\n")
	}
	b.WriteString("Arguments (quoted; long values are cut):\n")
	writeFields(&b, q.Arguments)
	b.WriteString("Choose: allow once; allow for this session (later calls of this tool that the same policy entries ask about are allowed without asking, until this connection ends); or deny.")
	if q.Timeout > 0 {
		b.WriteString(" No answer within " + q.Timeout.String() + " denies.")
	}
	return b.String()
}

// Quote renders text the agent chose on one line: a Go string literal
// (strconv.Quote: non-printable characters become escapes), cut to max
// characters before quoting, with the length of what was cut. Two kinds
// of printable characters are escaped too: invisible ones (canon.Invisible:
// Hangul fillers, the combining grapheme joiner, variation selectors,
// which strconv.Quote keeps and a renderer draws as nothing, so "a.txt"
// followed by fillers hides what comes after), and combining marks past
// maxMarks on one character (stacked marks are drawn over the lines
// above and below, over mcpguard's own).
func Quote(s string, max int) string {
	tail := ""
	if utf8.RuneCountInString(s) > max {
		cut, n := 0, 0
		for i := range s {
			if n == max {
				cut = i
				break
			}
			n++
		}
		s, tail = s[:cut], "... ("+strconv.Itoa(len(s))+" bytes)"
	}
	q := []byte{'"'}
	run, marks := 0, 0 // start of the run quoted as is; marks in a row
	for i, r := range s {
		if marks++; !unicode.In(r, unicode.Mn, unicode.Me) {
			marks = 0
		}
		if !canon.Invisible(r) && marks <= maxMarks {
			continue
		}
		q = append(q, unquoted(s[run:i])...)
		if r > 0xFFFF {
			q = fmt.Appendf(q, `\U%08x`, r)
		} else {
			q = fmt.Appendf(q, `\u%04x`, r)
		}
		run = i + utf8.RuneLen(r)
	}
	q = append(append(q, unquoted(s[run:])...), '"')
	return string(q) + tail
}

// unquoted is strconv.Quote of s without its quotes.
func unquoted(s string) string {
	if s == "" {
		return ""
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// writeFields writes one line per scalar in args (field path = value), at
// most maxFields, then how many more there are. Arguments that are not a
// JSON object are shown as one value.
func writeFields(b *strings.Builder, args jsontext.Value) {
	if args.Kind() == 'n' { // arguments: null reads as none
		args = nil
	}
	dec := jsontext.NewDecoder(strings.NewReader(string(args)))
	shown, more := 0, 0
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			break
		}
		kind := tok.Kind()
		switch kind {
		case '{', '[', '}', ']':
			continue
		}
		depth := dec.StackDepth()
		if parent, n := dec.StackIndex(depth); depth > 0 && parent == '{' && n%2 == 1 {
			continue // a member name: shown in the path of its value
		}
		if shown == maxFields {
			more++
			continue
		}
		value := tok.String() // null, true, false, or a number's text
		if kind == '"' {
			value = Quote(value, maxValueRunes)
		}
		b.WriteString("  " + fieldPath(dec, depth) + " = " + value + "\n")
		shown++
	}
	if shown == 0 {
		b.WriteString("  (none)\n")
	}
	if more > 0 {
		b.WriteString("  (" + strconv.Itoa(more) + " more fields not shown)\n")
	}
}

// fieldPath renders the path of the value dec has just read: plain member
// names as .name (the first without the dot), others quoted as ["name"],
// array elements as [i]; cut to maxPathBytes.
func fieldPath(dec *jsontext.Decoder, depth int) string {
	var b strings.Builder
	level := 0
	for tok := range dec.StackPointer().Tokens() {
		level++
		if kind, _ := dec.StackIndex(level); kind == '[' {
			b.WriteString("[" + tok + "]")
			continue
		}
		switch {
		case !isPlainName(tok):
			b.WriteString("[" + strconv.Quote(tok) + "]")
		case b.Len() > 0:
			b.WriteString("." + tok)
		default:
			b.WriteString(tok)
		}
		if b.Len() > maxPathBytes {
			break
		}
	}
	s := b.String()
	if s == "" || depth == 0 {
		return "(value)"
	}
	if len(s) > maxPathBytes {
		cut := maxPathBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

// isPlainName reports whether a member name can be shown bare: ASCII
// letters, digits, _ and -, starting with a letter or _.
func isPlainName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// Answer is what the user decided about a held call.
type Answer uint8

const (
	Deny         Answer = iota // denied, declined, dismissed, or no usable answer
	AllowOnce                  // this call only
	AllowSession               // this call and later ones asked for the same reasons
)

// ReadAnswer reads the client's response to the prompt (its result or
// error member) and says how it came to the answer, for the log and the
// rejection: "allowed once", "allowed for this session", "denied",
// "declined", "dismissed", or why the answer is unusable.
func ReadAnswer(result, rpcError jsontext.Value) (Answer, string) {
	if len(result) == 0 {
		return Deny, "the client answered the prompt with an error (it could not show it)"
	}
	var r struct {
		Action  string `json:"action"`
		Content struct {
			Decision string `json:"decision"`
		} `json:"content"`
	}
	if json.Unmarshal(result, &r) != nil {
		return Deny, "the client's answer to the prompt cannot be read"
	}
	switch r.Action {
	case "decline":
		return Deny, "declined"
	case "cancel":
		return Deny, "dismissed"
	case "accept":
	default:
		return Deny, "the client's answer to the prompt has no known action"
	}
	switch r.Content.Decision {
	case ChoiceOnce:
		return AllowOnce, "allowed once"
	case ChoiceSession:
		return AllowSession, "allowed for this session"
	case ChoiceDeny:
		return Deny, "denied"
	}
	return Deny, "the client's answer to the prompt has no known decision"
}

// capabilities is a client's capabilities object, as much of it as
// approval reads.
type capabilities struct {
	Elicitation *struct {
		Form jsontext.Value `json:"form"`
		URL  jsontext.Value `json:"url"`
	} `json:"elicitation"`
}

// canAsk reports whether c declares form elicitation: elicitation is an
// object that is empty (2025-06-18: form is the only mode) or has form
// (2025-11-25 on; {url: {}} alone is a client that cannot show forms).
func (c *capabilities) canAsk() bool {
	e := c.Elicitation
	return e != nil && (e.Form.Kind() == '{' || (e.Form == nil && e.URL == nil))
}

// ClientCanAsk reports whether the params of an initialize request
// declare form elicitation (capabilities.elicitation, see canAsk).
func ClientCanAsk(params jsontext.Value) bool {
	var p struct {
		Capabilities capabilities `json:"capabilities"`
	}
	return json.Unmarshal(params, &p) == nil && p.Capabilities.canAsk()
}

// MetaClientCapabilities is the _meta member in which a request of
// protocol revision 2026-07-28 carries the client's capabilities: that
// revision has no initialize, and a client declares what it can do on
// each request.
const MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"

// RequestCanAsk reads the client capabilities a request's params carry
// in _meta (revision 2026-07-28): declared is whether they are there at
// all, canAsk whether they declare form elicitation (see canAsk).
func RequestCanAsk(params jsontext.Value) (declared, canAsk bool) {
	var p struct {
		Meta map[string]jsontext.Value `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false, false
	}
	raw, ok := p.Meta[MetaClientCapabilities]
	if !ok || raw.Kind() != '{' {
		return false, false
	}
	var c capabilities
	return true, json.Unmarshal(raw, &c) == nil && c.canAsk()
}

// InputRequired is the result that asks q of a 2026-07-28 client: an
// incomplete result (resultType input_required) whose one inputRequests
// entry, under key, is the elicitation/create request Params(q) makes.
// The client shows the form and retries its call with the answer in
// inputResponses[key] (read it with ReadAnswer). requestState, when not
// nil, is the call's own requestState (a server's, from an earlier
// round), given back so that the retry carries it again.
func InputRequired(key string, q Question, requestState jsontext.Value) []byte {
	b := []byte(`{"resultType":"input_required","inputRequests":{`)
	b, err := jsontext.AppendQuote(b, key)
	if err != nil {
		panic("approval: key does not quote: " + err.Error()) // mcpguard's own ASCII key
	}
	b = append(b, `:{"method":"elicitation/create","params":`...)
	b = append(b, Params(q)...)
	b = append(b, "}}"...)
	if requestState.Kind() == '"' {
		b = append(append(b, `,"requestState":`...), requestState...)
	}
	return append(b, '}')
}

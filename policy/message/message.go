// Package message owns the JSON-RPC 2.0 message as mcpguard sees it: strict
// parsing of one stdio line into an envelope, the id space, and the replies
// mcpguard writes itself.
//
// Parsing is strict so that mcpguard never judges a message that the
// downstream reads differently (a parser differential). Every line is decoded
// with go-json-experiment, which rejects duplicate member names at any depth
// (escaped spellings too), invalid UTF-8, lone surrogates and trailing data,
// and matches names case-sensitively. On top of that this package refuses
// what that decoder still accepts but real peers read differently: unknown
// envelope members (`Method`, `method\u0000`), case- and Unicode-fold
// variants of known params members (`ARGUMENTS`, `argumentſ`), nesting
// deeper than MaxDepth, ids that are neither strings nor safe integers.
//
// Strict parsing has two implementations that must agree. Every line first
// goes through a one-pass validator (validate.go) that enforces exactly
// what the strict decoder does (syntax, UTF-8, surrogate escapes, duplicate
// names after unescaping) plus the depth limit, and records the envelope's
// members; anything it refuses or finds unusual is parsed again by
// go-json-experiment, which decides and explains the refusal. FuzzValidate
// holds the validator equal to the decoder on every input and FuzzParseFast
// holds the two parse paths equal. Past its first bytes a long string is
// scanned in windows with vector code (ascii.ValidPrint from
// github.com/segmentio/asm, then bytes.IndexByte from escape to escape);
// FuzzVectorScan holds it to the byte-wise rule.
//
// Decisions the protocol leaves open: batches (arrays, revision 2025-03-26
// only) are refused whole; integer ids must lie within ±(2^53−1) and not be
// -0, since a JavaScript peer would read a larger one as another id;
// `arguments: null` reads as no arguments (the go-sdk client sends it).
package message

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/sourcegraph/jsonrpc2"

	"github.com/mcpguard/mcpguard/rules/rawjson"
)

// Kind is the JSON-RPC shape of a message.
type Kind uint8

const (
	Request Kind = iota + 1
	Notification
	Response
)

func (k Kind) String() string {
	switch k {
	case Request:
		return "request"
	case Notification:
		return "notification"
	case Response:
		return "response"
	}
	return "invalid"
}

// Message is one strictly parsed JSON-RPC message. Its byte slices may alias
// the line it was parsed from: they are valid until that buffer is reused.
type Message struct {
	// Raw is the validated message in compact form, the only bytes mcpguard
	// ever forwards. String and number text is kept exactly.
	Raw    []byte
	Kind   Kind
	ID     jsontext.Value // nil for notifications
	Method string
	Params jsontext.Value // nil when absent
	Result jsontext.Value // responses only
	Error  jsontext.Value // responses only

	// Members of params that policies judge, when the method has them.
	Name      string         // tools/call, prompts/get: params.name
	Arguments jsontext.Value // tools/call, prompts/get: params.arguments
	URI       string         // resources/read, resources/subscribe: params.uri
	RequestID jsontext.Value // notifications/cancelled: params.requestId
	Task      bool           // tools/call: params.task is an object (a task-augmented call)
	// InputResponses is a request's params.inputResponses (revision
	// 2026-07-28: the client's answers to a result's inputRequests), nil
	// when absent.
	InputResponses jsontext.Value

	// TextPlain reports that every string in Raw, member names included,
	// is printable ASCII with no escapes but \" \\ \/ \n \r \t: no text
	// canonicaliser can change it. False means "not known", not "unsafe".
	TextPlain bool

	// escapes is rawjson.ScanEscapes(Raw) and members the names of
	// MemberSet that members of Raw have, when passRead (the fast path's
	// validator reads both on its pass).
	escapes  rawjson.Escapes
	members  MemberSet
	passRead bool

	// v is the validator ParseInto runs for the next message parsed into
	// this one: kept here, not taken from a pool per message.
	v *validator
}

// Escapes returns rawjson.ScanEscapes(m.Raw), from the parser's pass when
// it has read them. Of a part of Raw (Result, Arguments) they may say
// more than the part holds, never less.
func (m *Message) Escapes() rawjson.Escapes {
	if m.passRead {
		return m.escapes
	}
	return rawjson.ScanEscapes(m.Raw)
}

// IDKey returns the message's id as a map key (see KeyOf).
func (m *Message) IDKey() Key { return KeyOf(m.ID) }

// Error is why a line was refused. Reason never contains text from the line
// itself: it is shown to a possibly hostile peer and written to logs.
type Error struct {
	Code   int64          // JSON-RPC code of the reply: parse error, invalid request, invalid params
	Reason string         // what is wrong, in words
	ID     jsontext.Value // the id to echo, nil when it cannot be read unambiguously
}

func (e *Error) Error() string { return e.Reason }

func invalid(code int64, reason string) *Error { return &Error{Code: code, Reason: reason} }

// Parse strictly decodes one line (without its newline) into a Message.
// A refused line yields an *Error whose ID is the request id when it can be
// read unambiguously.
func Parse(line []byte) (*Message, error) {
	m := new(Message)
	v := validators.Get().(*validator)
	err := parseInto(m, line, v)
	validators.Put(v)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// ParseInto is Parse into a Message the caller reuses (the relay keeps one
// per direction, so that a message costs no allocation of its own, and
// its parse reuses the validator the Message keeps). On error *m is left
// zero but for that validator. A Message is parsed into by one goroutine
// at a time.
func ParseInto(m *Message, line []byte) error {
	v := m.v
	if v == nil {
		v = new(validator)
	}
	err := parseInto(m, line, v)
	m.v = v
	return err
}

// parseInto is ParseInto with the validator v.
func parseInto(m *Message, line []byte, v *validator) error {
	if parseFast(m, line, v) {
		return nil
	}
	slow, err := parse(line)
	if err != nil {
		if err.ID == nil {
			err.ID = SniffID(line)
		}
		*m = Message{}
		return err
	}
	*m = *slow
	return nil
}

var bom = []byte{0xEF, 0xBB, 0xBF}

func parse(line []byte) (*Message, *Error) {
	line = trimSpace(line)
	switch {
	case len(line) == 0:
		return nil, invalid(jsonrpc2.CodeParseError, "empty message")
	case bytes.HasPrefix(line, bom):
		return nil, invalid(jsonrpc2.CodeParseError, "message starts with a byte order mark")
	case line[0] == '[':
		// Batches exist only in revision 2025-03-26 and no known client sends
		// them; checking each element would need one reply per element in an
		// array. Refusing the whole batch is fail-closed and simple.
		return nil, invalid(jsonrpc2.CodeInvalidRequest, "JSON-RPC batches are not relayed; send one message per line")
	case line[0] != '{':
		return nil, invalid(jsonrpc2.CodeParseError, "message is not a JSON object")
	}
	sh := scanShape(line)
	if sh.depth > MaxDepth {
		return nil, invalid(jsonrpc2.CodeInvalidRequest, "message nests deeper than 64 levels")
	}

	m := &Message{Raw: line}
	var version, method jsontext.Value
	seen := 0
	paramsRead := false
	d := newDecoder(line)
	defer d.release()
	if _, err := d.ReadToken(); err != nil { // '{'
		return nil, decodeError(err)
	}
	for d.PeekKind() != '}' {
		name, err := d.readName("jsonrpc", "id", "method", "params", "result", "error")
		if err != nil {
			return nil, decodeError(err)
		}
		if name == "params" && method.Kind() == '"' && m.Params == nil && d.PeekKind() == '{' {
			// The usual order (method first): check params in this same
			// pass instead of decoding them a second time.
			m.Method = unquote(method)
			if err := m.readParamsInline(d, line); err != nil {
				return nil, err
			}
			paramsRead = true
			seen++
			continue
		}
		var slot *jsontext.Value
		switch name {
		case "jsonrpc":
			slot = &version
		case "id":
			slot = &m.ID
		case "method":
			slot = &method
		case "params":
			slot = &m.Params
		case "result":
			slot = &m.Result
		case "error":
			slot = &m.Error
		default:
			// Catches `Method`, `ID`, `method\u0000` and anything a lenient
			// peer might map onto a known member.
			return nil, invalid(jsonrpc2.CodeInvalidRequest, "unknown member "+quoteName(name)+" in the JSON-RPC envelope")
		}
		v, err := d.ReadValue()
		if err != nil {
			return nil, decodeError(err)
		}
		*slot = v
		seen++
	}
	if _, err := d.ReadToken(); err != nil { // '}'
		return nil, decodeError(err)
	}
	if _, err := d.ReadToken(); err != io.EOF {
		if err == nil {
			err = errTrailing
		}
		return nil, decodeError(err)
	}

	if string(version) != `"2.0"` {
		return nil, invalid(jsonrpc2.CodeInvalidRequest, `jsonrpc must be exactly "2.0"`)
	}
	if m.ID != nil {
		if err := checkID(m.ID, method == nil && m.Error != nil); err != nil {
			return nil, err
		}
	}
	switch {
	case method != nil:
		if m.Result != nil || m.Error != nil {
			return nil, invalid(jsonrpc2.CodeInvalidRequest, "a message cannot have both method and result or error")
		}
		if method.Kind() != '"' {
			return nil, invalid(jsonrpc2.CodeInvalidRequest, "method must be a string")
		}
		m.Method = unquote(method)
		m.Kind = Notification
		if m.ID != nil {
			m.Kind = Request
		}
		if m.Params != nil && !paramsRead {
			if err := m.readParams(); err != nil {
				err.ID = m.ID
				return nil, err
			}
		}
		if (m.Method == "tools/call" || m.Method == "prompts/get") && m.Kind == Request && m.Name == "" {
			return nil, &Error{Code: jsonrpc2.CodeInvalidParams, Reason: "params.name must be a non-empty string", ID: m.ID}
		}
	case m.Result != nil && m.Error != nil:
		return nil, invalid(jsonrpc2.CodeInvalidRequest, "a response cannot have both result and error")
	case m.Result != nil || m.Error != nil:
		if m.ID == nil {
			return nil, invalid(jsonrpc2.CodeInvalidRequest, "a response must have an id")
		}
		if m.Error != nil {
			if err := checkErrorObject(m.Error); err != nil {
				return nil, err
			}
		}
		m.Kind = Response
	default:
		return nil, invalid(jsonrpc2.CodeInvalidRequest, "message is neither a request, a notification nor a response")
	}
	if sh.whitespace {
		// Forward the compact form: a peer that splits lines on a lone CR
		// (Python's text streams) must see the same single message.
		raw := jsontext.Value(bytes.Clone(line))
		if err := raw.Compact(); err != nil {
			return nil, decodeError(err)
		}
		m.Raw = raw
	}
	return m, nil
}

var errTrailing = errors.New("trailing data after the message")

// decodeError turns a decoder error into a refusal that names the problem
// and its byte offset but never quotes the input (the decoder's own messages
// quote member names and characters).
func decodeError(err error) *Error {
	var offset int64 = -1
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		offset = se.ByteOffset
	}
	reason := "not valid JSON"
	switch {
	case err == errTrailing:
		return invalid(jsonrpc2.CodeParseError, "trailing data after the JSON value")
	case errors.Is(err, jsontext.ErrDuplicateName):
		reason = "duplicate member name"
	case strings.Contains(err.Error(), "UTF-8"):
		reason = "invalid UTF-8 or a lone surrogate escape"
	case errors.Is(err, io.ErrUnexpectedEOF):
		reason = "truncated JSON"
	}
	if offset >= 0 {
		reason += " at byte " + itoa(offset)
	}
	return invalid(jsonrpc2.CodeParseError, reason)
}

func itoa(n int64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// Unquote decodes a validated JSON string value ("" if it is not one).
func Unquote(v jsontext.Value) string { return unquote(v) }

// unquote decodes a validated JSON string value.
func unquote(v jsontext.Value) string {
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1])
	}
	b, err := jsontext.AppendUnquote(nil, v)
	if err != nil {
		return ""
	}
	return string(b)
}

// checkErrorObject requires the JSON-RPC error shape {code: integer, message: string, data?}.
func checkErrorObject(v jsontext.Value) *Error {
	bad := invalid(jsonrpc2.CodeInvalidRequest, "error must be an object with an integer code and a string message")
	if v.Kind() != '{' {
		return bad
	}
	var code, msg bool
	err := eachMember(v, func(name string, d *decoder) error {
		switch name {
		case "code":
			val, err := d.ReadValue()
			if err != nil {
				return err
			}
			code = val.Kind() == '0' && isInteger(val)
			return nil
		case "message":
			val, err := d.ReadValue()
			if err != nil {
				return err
			}
			msg = val.Kind() == '"'
			return nil
		}
		return d.SkipValue()
	})
	if err != nil || !code || !msg {
		return bad
	}
	return nil
}

// eachMember calls fn for every member name of the object v, with the decoder
// positioned before the member's value; fn must consume that value.
func eachMember(v jsontext.Value, fn func(name string, d *decoder) error) error {
	d := newDecoder(v)
	defer d.release()
	if _, err := d.ReadToken(); err != nil {
		return err
	}
	for d.PeekKind() != '}' {
		name, err := d.readName(commonNames...)
		if err != nil {
			return err
		}
		if err := fn(name, d); err != nil {
			return err
		}
	}
	_, err := d.ReadToken()
	return err
}

// quoteName writes a member name the caller chose for a refusal's reason:
// at most 64 bytes, as a Go string literal in ASCII, so that `method\u0000`
// reads as "method\x00" and nothing in it is a control or an escape; a
// backtick becomes ', as free_text makes it.
func quoteName(name string) string {
	more := ""
	if len(name) > 64 {
		name, more = name[:64], "..."
	}
	return strings.ReplaceAll(strconv.QuoteToASCII(name), "`", "'") + more
}

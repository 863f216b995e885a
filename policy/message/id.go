package message

import (
	"bytes"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/sourcegraph/jsonrpc2"
)

// maxSafeInteger is the largest integer every peer reads exactly. A
// JavaScript server reads 9007199254740993 as ...992 and answers with that id,
// so a larger id would be matched to the wrong request (or none).
const maxSafeInteger = 1<<53 - 1

// checkID accepts a string or a safe integer. null is allowed only in an
// error response (JSON-RPC's reply to an unreadable request).
func checkID(id jsontext.Value, errorResponse bool) *Error {
	switch kindOf(id) {
	case '"':
		return nil
	case '0':
		if _, ok := safeInteger(id); ok {
			return nil
		}
		if isInteger(id) {
			return invalid(jsonrpc2.CodeInvalidRequest, "id is an integer beyond ±(2^53-1)")
		}
	case 'n':
		if errorResponse {
			return nil
		}
	}
	return invalid(jsonrpc2.CodeInvalidRequest, "id must be a string or an integer")
}

// safeInteger returns the value of a JSON integer (valid number text
// without fraction or exponent) within ±maxSafeInteger; "-0" is refused,
// since peers that read it as 0 and those that keep "-0" would disagree on
// which request a reply answers.
func safeInteger(v jsontext.Value) (int64, bool) {
	digits := v
	if len(v) > 0 && v[0] == '-' {
		digits = v[1:]
	}
	if len(digits) == 0 || len(digits) > 16 || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if n > maxSafeInteger || string(v) == "-0" {
		return 0, false
	}
	if len(digits) != len(v) {
		n = -n
	}
	return n, true
}

// kindOf is v.Kind() for a value with no whitespace before it, as every
// value parsing hands on (validated ids among them): its first byte, with
// '-' and digits as '0'. One byte compared, where Kind skips whitespace
// and reads a table on every call.
func kindOf(v jsontext.Value) jsontext.Kind {
	if len(v) == 0 {
		return 0
	}
	if c := v[0]; c == '-' || c >= '0' && c <= '9' {
		return '0'
	}
	return jsontext.Kind(v[0])
}

// isInteger reports whether a JSON number is written without fraction or exponent.
func isInteger(v jsontext.Value) bool {
	return !bytes.ContainsAny(v, ".eE")
}

// Key is an id as a map key, equal for ids a peer treats as equal:
// strings by their decoded text ("a" and "\u0061" are one id), integers by
// value (checkID admits only canonical integer text, so that is their text
// too). An integer id, the usual kind, makes a key without allocating.
// null and anything else that is not an id make a key that is not Valid:
// it matches no request (a null-id error reply answers none in particular).
type Key struct {
	Str      string // a string id's decoded text
	Num      int64  // an integer id's value
	IsString bool
	Valid    bool
}

// KeyOf returns the key of a validated id.
func KeyOf(id jsontext.Value) Key {
	switch kindOf(id) {
	case '"':
		return Key{Str: unquote(id), IsString: true, Valid: true}
	case '0':
		if n, ok := safeInteger(id); ok {
			return Key{Num: n, Valid: true}
		}
	}
	return Key{}
}

// SniffID reads the id of a message that failed strict parsing, so that the
// refusal can name the request it answers. It returns nil (an id of null in
// the reply) unless the line is an object with exactly one member spelled
// exactly "id", holding a valid string or a safe integer, and no member that
// folds onto "id" ("ID", "Id"): any doubt means null.
func SniffID(line []byte) jsontext.Value { return sniffID(line, false) }

// SniffIDPrefix is SniffID for the first bytes of a line that was too long
// to keep: the first top-level "id" member before the cut is taken, so that
// a request or response over the size limit still gets its error reply
// instead of leaving the caller waiting forever.
func SniffIDPrefix(prefix []byte) jsontext.Value { return sniffID(prefix, true) }

func sniffID(line []byte, truncated bool) jsontext.Value {
	line = trimSpace(line)
	if len(line) == 0 || line[0] != '{' || scanShape(line).depth > MaxDepth {
		return nil
	}
	d := jsontext.NewDecoder(bytes.NewBuffer(line), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if _, err := d.ReadToken(); err != nil {
		return nil
	}
	var id jsontext.Value
	for d.PeekKind() != '}' {
		tok, err := d.ReadToken()
		if err != nil {
			break
		}
		name := tok.String()
		if name != "id" && strings.EqualFold(name, "id") {
			return nil
		}
		v, err := d.ReadValue()
		if err != nil {
			break
		}
		if name == "id" {
			if id != nil {
				return nil // two ids: ambiguous
			}
			if truncated {
				return validID(v)
			}
			id = v
		}
	}
	if _, err := d.ReadToken(); err != nil && !truncated {
		return nil
	}
	return validID(id)
}

func validID(v jsontext.Value) jsontext.Value {
	if v == nil || !v.IsValid() || checkID(v, false) != nil {
		return nil
	}
	return bytes.Clone(v)
}

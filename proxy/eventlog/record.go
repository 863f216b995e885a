package eventlog

import (
	"errors"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/mcpguard/mcpguard/rules/rawjson"
)

// Record is one decision read back from the log. Strings are as written:
// a reader that shows them must still pass them through Clean, since a log
// file is only as trustworthy as whoever could write to it.
type Record struct {
	Time      time.Time
	Level     string
	Server    string
	PID       int
	Event     Kind
	Direction string
	Method    string
	Tool      string
	ID        string
	ErrorCode string
	Field     string
	Rule      string
	Action    Action
	Message   string

	ValueLen      int // -1 when the line has no value_len
	ValueSHA256   string
	ChildPID      int
	Mode          string
	Status        int // -1 when the line has no status
	Duration      time.Duration
	Canonicaliser string
	BytesRemoved  int

	// Suppressed is, on a budget's summary line (see Budget), how many
	// lines of its kind it stands for; 0 on every other line.
	Suppressed int
}

// Weight is how many events r counts for: Suppressed on a summary line,
// else 1.
func (r *Record) Weight() int {
	return max(r.Suppressed, 1)
}

// IsRejection reports whether r is a request refused at ingress: a policy
// rejection, a malformed message, or a limit hit. These are what spikes and
// the stats chart count.
func (r *Record) IsRejection() bool {
	return r.Action == ActionRejected || r.Event == EventRejected || r.Event == EventMalformed
}

// Code is the rejection's error code, or for a rejection that has none (a
// limit hit) its event, so that counts and alerts never show a blank code.
func (r *Record) Code() string {
	if r.ErrorCode == "" {
		return string(r.Event)
	}
	return r.ErrorCode
}

// Errors from Decode. A line that fails is skipped and counted by readers,
// never fatal.
var (
	ErrSyntax  = errors.New("eventlog: not a JSON object")
	ErrForeign = errors.New("eventlog: not an mcpguard event (no time or event)")
)

// maxInterned bounds the strings a Decoder keeps for reuse, so a log full
// of distinct tool names cannot grow it without limit.
const maxInterned = 4096

// A Decoder decodes log lines. It reuses the strings that repeat from line
// to line (server, event, tool, code...) instead of allocating them again:
// `mcpguard stats` reads millions of lines. The zero value is ready to use;
// a Decoder is not safe for concurrent use.
//
// Why a hand-written scanner and not jsontext: stats spends most of its
// time here, and a jsontext.Decoder in its place (names and values read as
// raw values, strings unquoted into one scratch buffer) took far more CPU
// per line. FuzzDecode holds the scanner's verdict to encoding/json's.
type Decoder struct {
	// Summary decodes only what stats counts (time, level, server, event,
	// direction, method, tool, error_code, rule, action); the other fields
	// are checked for syntax and left empty.
	Summary bool

	interned map[string]string
	scratch  []byte
}

// Decode parses one line (without its newline) into r. It accepts one
// JSON object whose members are strings, numbers, booleans, null, or
// nested values (checked and skipped), and requires "time" (RFC 3339) and
// "event"; duplicate members: the last one wins.
func (d *Decoder) Decode(line []byte, r *Record) error {
	*r = Record{ValueLen: -1, Status: -1}
	s := scanner{b: line}
	s.space()
	if !s.byte('{') {
		return ErrSyntax
	}
	s.space()
	var haveTime bool
	if !s.byte('}') {
		for {
			s.space()
			key, ok := s.str(&d.scratch)
			if !ok {
				return ErrSyntax
			}
			s.space()
			if !s.byte(':') {
				return ErrSyntax
			}
			s.space()
			if !d.member(&s, key, r, &haveTime) {
				return ErrSyntax
			}
			s.space()
			if s.byte(',') {
				continue
			}
			if s.byte('}') {
				break
			}
			return ErrSyntax
		}
	}
	s.space()
	if s.i != len(s.b) {
		return ErrSyntax
	}
	if !haveTime || r.Event == "" {
		return ErrForeign
	}
	return nil
}

// member decodes one member's value into r.
func (d *Decoder) member(s *scanner, key []byte, r *Record, haveTime *bool) bool {
	// Keys are compared before the value is read: key may live in
	// d.scratch, which reading a string value reuses.
	switch string(key) {
	case "time":
		v, ok := s.str(&d.scratch)
		if !ok {
			return false
		}
		t, err := time.Parse(time.RFC3339Nano, string(v))
		if err != nil {
			return true // a line with a bad time is foreign, not malformed
		}
		r.Time, *haveTime = t, true
		return true
	case "level":
		return d.intern(s, &r.Level)
	case "server":
		return d.intern(s, &r.Server)
	case "event":
		return d.intern(s, (*string)(&r.Event))
	case "direction":
		return d.intern(s, &r.Direction)
	case "method":
		return d.intern(s, &r.Method)
	case "tool":
		return d.intern(s, &r.Tool)
	case "error_code":
		return d.intern(s, &r.ErrorCode)
	case "rule":
		return d.intern(s, &r.Rule)
	case "action":
		return d.intern(s, (*string)(&r.Action))
	case "suppressed":
		return s.int(&r.Suppressed)
	}
	if d.Summary {
		return s.skip(0)
	}
	switch string(key) {
	case "pid":
		return s.int(&r.PID)
	case "id":
		return d.text(s, &r.ID)
	case "field":
		return d.text(s, &r.Field)
	case "message":
		return d.text(s, &r.Message)
	case "value_len":
		return s.int(&r.ValueLen)
	case "value_sha256":
		return d.text(s, &r.ValueSHA256)
	case "child_pid":
		return s.int(&r.ChildPID)
	case "mode":
		return d.intern(s, &r.Mode)
	case "status":
		return s.int(&r.Status)
	case "duration_ms", "duration":
		// Milliseconds; "duration" is what logs before duration_ms wrote
		// (zerolog's float milliseconds).
		num, ok := s.number()
		if !ok {
			return false
		}
		if ms, err := strconv.ParseFloat(string(num), 64); err == nil {
			r.Duration = time.Duration(ms * float64(time.Millisecond))
		}
		return true
	case "canonicaliser":
		return d.intern(s, &r.Canonicaliser)
	case "bytes_removed":
		return s.int(&r.BytesRemoved)
	}
	return s.skip(0)
}

// intern reads a string value that repeats across lines. A value of
// another JSON type leaves the field empty.
func (d *Decoder) intern(s *scanner, dst *string) bool {
	if !s.peek('"') {
		return s.skip(0)
	}
	v, ok := s.str(&d.scratch)
	if !ok {
		return false
	}
	if str, ok := d.interned[string(v)]; ok { // no allocation
		*dst = str
		return true
	}
	str := string(v)
	if d.interned == nil {
		d.interned = make(map[string]string)
	}
	if len(d.interned) < maxInterned {
		d.interned[str] = str
	}
	*dst = str
	return true
}

// text reads a string value that is usually unique to its line.
func (d *Decoder) text(s *scanner, dst *string) bool {
	if !s.peek('"') {
		return s.skip(0)
	}
	v, ok := s.str(&d.scratch)
	if ok {
		*dst = string(v)
	}
	return ok
}

// scanner reads JSON from b. Its methods report false on a syntax error.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) peek(c byte) bool { return s.i < len(s.b) && s.b[s.i] == c }

func (s *scanner) byte(c byte) bool {
	if s.peek(c) {
		s.i++
		return true
	}
	return false
}

// str reads a string. Without escapes the result aliases the line;
// with them it is decoded into *scratch, or only checked when scratch is
// nil (a skipped value).
func (s *scanner) str(scratch *[]byte) ([]byte, bool) {
	if !s.byte('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], true
		case c == '\\':
			return s.unescape(start, scratch)
		case c < 0x20:
			return nil, false
		}
		s.i++
	}
	return nil, false
}

// unescape finishes a string that has escapes, from its start.
func (s *scanner) unescape(start int, scratch *[]byte) ([]byte, bool) {
	var out []byte
	if scratch != nil {
		out = append((*scratch)[:0], s.b[start:s.i]...)
		defer func() { *scratch = out[:0] }()
	}
	keep := scratch != nil
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return out, true
		case c < 0x20:
			return nil, false
		case c != '\\':
			if keep {
				out = append(out, c)
			}
			s.i++
			continue
		}
		if !keep {
			// Only check the escape: \uXXXX, or one of "\/bfnrt.
			if s.i+1 < len(s.b) && s.b[s.i+1] == 'u' {
				s.i += 2
				if _, ok := s.hex4(); !ok {
					return nil, false
				}
				continue
			}
			if s.i+1 >= len(s.b) {
				return nil, false
			}
			if _, ok := rawjson.Simple(s.b[s.i+1]); !ok {
				return nil, false
			}
			s.i += 2
			continue
		}
		if s.i+1 >= len(s.b) {
			return nil, false
		}
		e := s.b[s.i+1]
		s.i += 2
		if e == 'u' {
			r, n, ok := rawjson.Rune(s.b[s.i-2:])
			if !ok {
				return nil, false
			}
			s.i += n - 2
			out = utf8.AppendRune(out, r) // U+FFFD for a lone surrogate
			continue
		}
		d, ok := rawjson.Simple(e)
		if !ok {
			return nil, false
		}
		out = append(out, d)
	}
	return nil, false
}

// hex4 reads the four hex digits of a \u escape.
func (s *scanner) hex4() (rune, bool) {
	r, ok := rawjson.Hex4(s.b[s.i:])
	if ok {
		s.i += 4
	}
	return r, ok
}

// number reads a JSON number.
func (s *scanner) number() ([]byte, bool) {
	start := s.i
	s.byte('-')
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.byte('0') {
		// no leading zeros
	} else if digits() == 0 {
		return nil, false
	}
	if s.byte('.') && digits() == 0 {
		return nil, false
	}
	if s.byte('e') || s.byte('E') {
		if !s.byte('+') {
			s.byte('-')
		}
		if digits() == 0 {
			return nil, false
		}
	}
	return s.b[start:s.i], true
}

// int reads an integer value; a value of another type leaves *dst alone.
func (s *scanner) int(dst *int) bool {
	if s.i < len(s.b) && (s.b[s.i] == '-' || s.b[s.i] >= '0' && s.b[s.i] <= '9') {
		num, ok := s.number()
		if !ok {
			return false
		}
		if n, err := strconv.Atoi(string(num)); err == nil {
			*dst = n
		}
		return true
	}
	return s.skip(0)
}

// maxDepth bounds nesting in skipped values.
const maxDepth = 64

// skip reads any JSON value.
func (s *scanner) skip(depth int) bool {
	if depth > maxDepth || s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; c {
	case '"':
		_, ok := s.str(nil)
		return ok
	case '{', '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		s.i++
		s.space()
		if s.byte(end) {
			return true
		}
		for {
			s.space()
			if c == '{' {
				if _, ok := s.str(nil); !ok {
					return false
				}
				s.space()
				if !s.byte(':') {
					return false
				}
				s.space()
			}
			if !s.skip(depth + 1) {
				return false
			}
			s.space()
			if s.byte(',') {
				continue
			}
			return s.byte(end)
		}
	case 't':
		return s.word("true")
	case 'f':
		return s.word("false")
	case 'n':
		return s.word("null")
	}
	_, ok := s.number()
	return ok
}

func (s *scanner) word(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

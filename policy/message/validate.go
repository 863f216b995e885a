package message

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/segmentio/asm/ascii"

	"github.com/mcpguard/mcpguard/rules/rawjson"
)

// The validator is the relay's fast path: one pass over a line that checks
// it against exactly the grammar the strict decoder (go-json-experiment,
// default options) enforces — RFC 8259 syntax, valid UTF-8, no lone
// surrogate escapes, no duplicate member names after unescaping — plus the
// MaxDepth limit, and that notes on the way what the envelope parser and
// the egress canonicaliser need: the spans of the envelope's members and of
// params' members, whether there is whitespace between tokens, whether any
// string could hold something the text canonicaliser removes, which names
// of MemberSet its members have.
//
// Why not only jsontext: it is the oracle and remains the slow path, but
// per message it costs several times what this validator does, on every
// message in both directions. The validator only ever says yes to a line the
// strict decoder accepts (FuzzValidate holds the two equal on every input);
// whenever it says no, or meets anything unusual, the line is parsed again
// by the slow path, which explains the refusal.

// span is a member of an object recorded by the validator: where its raw
// name (quotes included) and its raw value lie in the line. Offsets, not
// slices: recording them stores no pointers.
type span struct {
	nameStart, nameEnd, valueStart, valueEnd int
	escapedName                              bool
}

func (s *span) name(line []byte) []byte  { return line[s.nameStart:s.nameEnd] }
func (s *span) value(line []byte) []byte { return line[s.valueStart:s.valueEnd] }

// maxTopMembers and maxParamsMembers bound what the validator records; a
// message with more falls back to the slow path.
const (
	maxTopMembers    = 8
	maxParamsMembers = 16
)

// validation is what one validator pass learns about a line.
type validation struct {
	ok         bool
	whitespace bool // insignificant whitespace between tokens
	// textPlain: every string (names too) is printable ASCII with no
	// escapes other than \" \\ \/ \n \r \t, so no text canonicaliser can
	// change any of them.
	textPlain bool
	// esc is rawjson.ScanEscapes of the line, read on the way.
	esc rawjson.Escapes
	// members are the names of MemberSet that the line's members have.
	members MemberSet

	top                 [maxTopMembers]span
	params              [maxParamsMembers]span
	nTop, nParams       int
	topOver, paramsOver bool
}

// validator is the state of one pass; validators are reused (kept by the
// relay's Message, else pooled) so that the records and the name stack are
// not allocated per message.
type validator struct {
	b     []byte
	res   validation
	depth int

	// Duplicate detection: the names of the small objects being read,
	// innermost last; an object with more members than smallObject
	// switches to a set of seeded name hashes (8 bytes a member, not a copy
	// of every name: a hostile 64 MiB object of tiny members must not cost
	// gigabytes). Two names with one hash, a duplicate or (never, in
	// practice) a collision, send the line to the slow path, which decides
	// exactly.
	names   [][]byte
	named   int // the most names v.names has held in this pass
	serial  int
	hashes  map[uint64]struct{}
	scratch []byte // an escaped name, unescaped
}

var nameSeed = maphash.MakeSeed()

// smallObject is how many members an object may have before its names are
// looked up in a map rather than compared one by one.
const smallObject = 16

// validators are the validators of Parse; ParseInto keeps one in the
// Message it reuses (see Message.v).
var validators = sync.Pool{New: func() any { return new(validator) }}

// validate runs a pooled validator over a trimmed line that starts with
// '{'. The caller reads v.res and then calls v.release.
func validate(line []byte) *validator {
	v := validators.Get().(*validator)
	v.run(line)
	return v
}

// run is one pass of v, reset, over a trimmed line that starts with '{';
// the caller reads v.res and then calls v.reset.
func (v *validator) run(line []byte) {
	v.b, v.depth = line, 0
	v.res.textPlain = true
	i, ok := v.object(0, recordTop)
	if ok {
		v.res.ok = v.space(i) == len(line)
	}
}

// release resets v and returns it to the pool.
func (v *validator) release() {
	v.reset()
	validators.Put(v)
}

// reset drops every reference into the line and what a hostile line made
// v hold, ready for the next pass.
func (v *validator) reset() {
	// Only what this pass used holds references, so only that is cleared:
	// one deep hostile message must not make every later release clear
	// thousands of entries.
	clear(v.names[:v.named])
	if cap(v.names) > 4*smallObject {
		v.names = nil // nor is its stack kept in the pool
	}
	r := &v.res
	r.ok, r.whitespace, r.textPlain, r.esc, r.members = false, false, false, rawjson.Escapes{}, 0
	r.nTop, r.nParams, r.topOver, r.paramsOver = 0, 0, false, false
	v.b, v.depth, v.names, v.named, v.serial, v.hashes = nil, 0, v.names[:0], 0, 0, nil
	if cap(v.scratch) > 4<<10 {
		v.scratch = nil // a hostile name's buffer is not kept in the pool
	}
}

// What an object's members are recorded into.
const (
	recordNone = iota
	recordTop
	recordParams
)

func (v *validator) space(i int) int {
	if i < len(v.b) && v.b[i] > ' ' {
		return i // the usual case, inlined: compact JSON
	}
	return v.spaces(i)
}

func (v *validator) spaces(i int) int {
	for i < len(v.b) {
		switch v.b[i] {
		case ' ', '\t', '\r', '\n':
			v.res.whitespace = true
			i++
		default:
			return i
		}
	}
	return i
}

// value reads the value at i (no leading whitespace) and returns its end.
func (v *validator) value(i int) (int, bool) {
	if i >= len(v.b) {
		return i, false
	}
	switch c := v.b[i]; {
	case c == '{':
		return v.object(i, recordNone)
	case c == '[':
		return v.array(i)
	case c == '"':
		end, _, ok := v.str(i)
		return end, ok
	case c == '-' || (c >= '0' && c <= '9'):
		return v.number(i)
	case c == 't':
		return v.literal(i, "true")
	case c == 'f':
		return v.literal(i, "false")
	case c == 'n':
		return v.literal(i, "null")
	}
	return i, false
}

func (v *validator) literal(i int, lit string) (int, bool) {
	if len(v.b)-i < len(lit) || string(v.b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (v *validator) number(i int) (int, bool) {
	b := v.b
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return i, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return i, false
		}
		i = j
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func (v *validator) enter() bool {
	v.depth++
	return v.depth <= MaxDepth
}

func (v *validator) array(i int) (int, bool) {
	if !v.enter() {
		return i, false
	}
	i = v.space(i + 1)
	if i < len(v.b) && v.b[i] == ']' {
		v.depth--
		return i + 1, true
	}
	for {
		var ok, more bool
		if i, ok = v.value(i); !ok {
			return i, false
		}
		if i, more, ok = v.afterValue(i, ']'); !ok || !more {
			return i, ok
		}
	}
}

// afterValue reads what follows an element or a member: a comma, after
// which more must follow, or the closing bracket.
func (v *validator) afterValue(i int, closer byte) (next int, more, ok bool) {
	i = v.space(i)
	if i >= len(v.b) {
		return i, false, false
	}
	switch v.b[i] {
	case ',':
		return v.space(i + 1), true, true
	case closer:
		v.depth--
		return i + 1, false, true
	}
	return i, false, false
}

func (v *validator) object(i int, record int) (int, bool) {
	if !v.enter() {
		return i, false
	}
	v.serial++
	first := len(v.names)
	end, ok := v.members(i, record, first, v.serial)
	v.named = max(v.named, len(v.names))
	v.names = v.names[:first] // this object's names are done with
	return end, ok
}

// members reads the members of the object at i, whose names go on
// v.names from first.
func (v *validator) members(i, record, first, serial int) (int, bool) {
	i = v.space(i + 1)
	if i < len(v.b) && v.b[i] == '}' {
		v.depth--
		return i + 1, true
	}
	for members := 0; ; members++ {
		if i >= len(v.b) || v.b[i] != '"' {
			return i, false
		}
		nameStart := i
		end, escaped, ok := v.str(i)
		if !ok {
			return end, false
		}
		name := v.b[nameStart:end]
		if !v.newName(name, escaped, first, serial, members) {
			return nameStart, false
		}
		i = v.space(end)
		if i >= len(v.b) || v.b[i] != ':' {
			return i, false
		}
		i = v.space(i + 1)
		valueStart := i
		inner := recordNone
		if record == recordTop && !escaped && string(name) == `"params"` {
			inner = recordParams
		}
		if inner == recordParams && i < len(v.b) && v.b[i] == '{' {
			i, ok = v.object(i, recordParams)
		} else {
			i, ok = v.value(i)
		}
		if !ok {
			return i, false
		}
		if record != recordNone {
			v.note(record, nameStart, end, valueStart, i, escaped)
		}
		var more bool
		if i, more, ok = v.afterValue(i, '}'); !ok || !more {
			return i, ok
		}
	}
}

// note records a member of the envelope or of params. It writes the span
// in place: a 40-byte span built and then copied was stored in two
// overlapping halves that the next load could not forward, a stall the
// profile of the relay showed on every member recorded.
func (v *validator) note(record, nameStart, nameEnd, valueStart, valueEnd int, escaped bool) {
	r := &v.res
	var s *span
	switch record {
	case recordTop:
		if r.nTop == maxTopMembers {
			r.topOver = true
			return
		}
		s = &r.top[r.nTop]
		r.nTop++
	case recordParams:
		if r.nParams == maxParamsMembers {
			r.paramsOver = true
			return
		}
		s = &r.params[r.nParams]
		r.nParams++
	default:
		return
	}
	s.nameStart, s.nameEnd, s.valueStart, s.valueEnd, s.escapedName = nameStart, nameEnd, valueStart, valueEnd, escaped
}

// newName adds the name (raw, quoted) of the object's next member, the
// object's names so far being v.names[first:] (members of them, or a
// hash set past smallObject), and reports false if the object already has
// a member of that name once unescaped.
func (v *validator) newName(raw []byte, escaped bool, first, serial, members int) bool {
	key := raw[1 : len(raw)-1]
	if escaped {
		var err error
		if v.scratch, err = jsontext.AppendUnquote(v.scratch[:0], raw); err != nil {
			return false
		}
		key = v.scratch
	}
	v.res.members |= memberOf(key)
	if members < smallObject {
		for _, prev := range v.names[first:] {
			if bytes.Equal(prev, key) {
				return false
			}
		}
		if escaped {
			key = bytes.Clone(key)
		}
		v.names = append(v.names, key)
		return true
	}
	if members == smallObject {
		if v.hashes == nil {
			v.hashes = make(map[uint64]struct{})
		}
		for _, prev := range v.names[first:] {
			v.hashes[nameHash(prev, serial)] = struct{}{}
		}
	}
	h := nameHash(key, serial)
	if _, seen := v.hashes[h]; seen {
		return false
	}
	v.hashes[h] = struct{}{}
	return true
}

// nameHash is a member name's hash, mixed with its object's serial number.
func nameHash(name []byte, serial int) uint64 {
	return maphash.Bytes(nameSeed, name) ^ uint64(serial)*0x9E3779B97F4A7C15
}

const (
	lows  = 0x0101010101010101
	highs = 0x8080808080808080
)

// stringSpecials returns, for 8 bytes of a string body, a word whose
// lowest set high bit marks the first byte a string scan must look at: a
// control (below 0x20), a quote, a backslash, DEL or a non-ASCII byte. Zero
// means all eight are plain. (SWAR: borrows and carries only run upwards
// from a byte that is itself special, so the lowest mark is exact; marks
// above it may be false.)
func stringSpecials(b []byte) uint64 {
	w := binary.LittleEndian.Uint64(b)
	return ((w - 0x2020202020202020) | w | (w + lows) |
		((w ^ 0x2222222222222222) - lows) | ((w ^ 0x5C5C5C5C5C5C5C5C) - lows)) & highs
}

// vectorWindow is how much of a string vectorScan takes in one step;
// vectorAfter is how far into a string the byte-wise scan goes first.
// Names, ids and short values never leave the 8-byte scan; a string of a
// few words more costs about as much either way, and from there on the
// vector code costs less the longer the string.
const (
	vectorWindow = 256
	vectorAfter  = 32
)

// vectorScan goes on with a string body from i in windows of vectorWindow
// bytes, with vector instructions: ascii.ValidPrint checks that a window
// holds only printable ASCII (no control, DEL or UTF-8 byte, so none of
// those checks remain), then bytes.IndexByte jumps from backslash to
// backslash, checking each simple escape, until the closing quote. It
// returns the string's end (closed), or where the byte-wise scan must go
// on: at a \u or malformed escape, at the line's end, at a window holding
// a byte that is not printable ASCII, or (dense) at an escape less than 24
// bytes after the last, where a call per escape costs more than it saves
// (JSON written as text). Text of 80-byte lines scans about twice as fast,
// base64 four times; escape-dense text within a few percent of the 8-byte
// scan (BenchmarkValidate*).
func (v *validator) vectorScan(i int) (next int, escaped, closed, dense bool) {
	b := v.b
	for i < len(b) {
		win := b[i:min(len(b), i+vectorWindow)]
		if !ascii.ValidPrint(win) {
			return i, escaped, false, false
		}
		q := bytes.IndexByte(win, '"')
		pos, afterEscape := 0, false
		for {
			k := bytes.IndexByte(win[pos:], '\\')
			if k >= 0 {
				k += pos
			}
			if q >= 0 && (k < 0 || q < k) {
				return i + q + 1, escaped, true, false
			}
			if k < 0 {
				pos = len(win) // neither quote nor backslash in the rest
				break
			}
			if k+1 == len(win) {
				pos = k // the escape straddles the window: the next one starts at it
				break
			}
			if afterEscape && k-pos < 24 {
				return i + k, escaped, false, true // dense escapes: faster 8 bytes at a time
			}
			known, plain := simpleEscape(win[k+1])
			if !known { // \u and malformed escapes: the byte-wise scan decides
				return i + k, escaped, false, false
			}
			v.res.textPlain = v.res.textPlain && plain
			v.noteEscape(i + k)
			escaped, afterEscape = true, true
			if pos = k + 2; q >= 0 && q < pos { // that was \": find the next quote
				if q = bytes.IndexByte(win[pos:], '"'); q >= 0 {
					q += pos
				}
			}
		}
		if pos == 0 { // a lone backslash at the line's end
			return i, escaped, false, false
		}
		i += pos
	}
	return i, escaped, false, false
}

// noteEscape records in v.res.esc what the two-byte escape at i hides
// (see rawjson.Escapes): \/ a slash, \\ before rawjson.EscapeText the
// text of an escape.
func (v *validator) noteEscape(i int) {
	switch v.b[i+1] {
	case '/':
		v.res.esc.Slash = true
	case '\\':
		if i+2 < len(v.b) && rawjson.EscapeText(v.b[i+2]) {
			v.res.esc.Wide = true
		}
	}
}

// simpleEscape reports whether \c is a two-byte JSON escape, and whether
// it leaves text plain (\b and \f are controls a canonicaliser removes).
func simpleEscape(c byte) (known, plain bool) {
	switch c {
	case '"', '\\', '/', 'n', 'r', 't':
		return true, true
	case 'b', 'f':
		return true, false
	}
	return false, false
}

// str reads the string at i (b[i] == '"') and returns its end, whether it
// holds escapes, and whether it is valid. Past vectorAfter bytes it hands
// the rest to vectorScan; where that gives way, the 8-byte scan goes on for
// a window (four after dense escapes) before handing back, so no string
// costs much more than its 8-byte scan: a window wasted at most per window
// scanned (BenchmarkValidateHostileText).
func (v *validator) str(i int) (end int, escaped, ok bool) {
	b := v.b
	i++
	vectorFrom := i + vectorAfter
	for {
		if i >= vectorFrom {
			next, esc, closed, dense := v.vectorScan(i)
			escaped = escaped || esc
			if closed {
				return next, escaped, true
			}
			i, vectorFrom = next, next+vectorWindow
			if dense {
				vectorFrom += 3 * vectorWindow
			}
		}
		lead := min(len(b), vectorFrom)
		for i+8 <= lead {
			if sp := stringSpecials(b[i:]); sp != 0 {
				i += bits.TrailingZeros64(sp) >> 3
				lead = 0 // found a byte to look at
				break
			}
			i += 8
		}
		if lead > 0 && i+8 <= len(b) {
			vectorFrom = i // nothing to look at up to vectorFrom: hand on
			continue
		}
		if i >= len(b) {
			return i, escaped, false
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, escaped, true
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return i, escaped, false
			}
			if known, plain := simpleEscape(b[i+1]); known {
				v.res.textPlain = v.res.textPlain && plain
				v.noteEscape(i)
				i += 2
				continue
			}
			switch b[i+1] {
			case 'u':
				v.res.textPlain = false
				r, n, ok := rawjson.Rune(b[i:])
				if !ok {
					return i, escaped, false
				}
				if utf16.IsSurrogate(r) { // a lone surrogate
					return i + 6, escaped, false
				}
				if r < utf8.RuneSelf {
					v.res.esc.ASCII = true
				} else {
					v.res.esc.Wide = true
				}
				i += n
			default:
				return i, escaped, false
			}
		case c < 0x20:
			return i, escaped, false
		case c < utf8.RuneSelf:
			v.res.textPlain = v.res.textPlain && c != 0x7F
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return i, escaped, false
			}
			v.res.textPlain = false
			i += size
		}
	}
}

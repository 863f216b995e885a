// Package rawjson reads JSON text without decoding it whole: where a
// string starts and ends around an offset, and what its escapes spell.
// The egress fast paths use it to look at a message's raw bytes, and
// every JSON reader of mcpguard (the validator, the log reader, the
// egress scans) decodes \u escapes and surrogate pairs with Rune.
package rawjson

import (
	"bytes"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// EvenBackslashes reports whether an even number of backslashes comes
// right before s[i] (so s[i] is not escaped).
func EvenBackslashes(s string, i int) bool {
	n := 0
	for i > 0 && s[i-1] == '\\' {
		n++
		i--
	}
	return n%2 == 0
}

// Unescape decodes the JSON string escapes in s, leniently: a broken
// or cut escape is kept as it is.
func Unescape(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b = append(b, c)
			continue
		}
		if e := s[i+1]; e == 'u' {
			r, n, ok := Rune(s[i:])
			if !ok {
				b = append(b, c)
				continue
			}
			i += n - 2
			b = utf8.AppendRune(b, r) // U+FFFD for a lone surrogate
		} else if d, ok := Simple(e); ok {
			b = append(b, d)
		} else {
			b = append(b, c)
			continue
		}
		i++
	}
	return string(b)
}

// Simple returns the byte a JSON escape other than \u stands for, given
// the letter after the backslash (`n` for \n), and whether the letter
// makes one of JSON's eight such escapes. It is the one table of them
// for the JSON readers.
func Simple(letter byte) (byte, bool) {
	switch letter {
	case '"', '\\', '/':
		return letter, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

// Rune reads the \u escape that s starts with: the code point its four
// hex digits spell, joined with the \u escape right after it when the two
// are a surrogate pair, and the number of bytes read (6, or 12 for a
// pair). A lone surrogate is returned as it is, in 6 bytes: a strict
// reader refuses it (utf16.IsSurrogate(r)), a lenient one writes U+FFFD.
// ok is false when s does not start with `\u` and four hex digits. It is
// the one surrogate-pair decoder of the JSON readers.
func Rune[T ~string | ~[]byte](s T) (r rune, n int, ok bool) {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return 0, 0, false
	}
	if r, ok = Hex4(s[2:6]); !ok {
		return 0, 0, false
	}
	if !utf16.IsSurrogate(r) || len(s) < 12 || s[6] != '\\' || s[7] != 'u' {
		return r, 6, true
	}
	if lo, ok := Hex4(s[8:12]); ok {
		if p := utf16.DecodeRune(r, lo); p != utf8.RuneError {
			return p, 12, true
		}
	}
	return r, 6, true
}

// Hex4 reads the four hex digits a \u escape spells at the start of s.
func Hex4[T ~string | ~[]byte](s T) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for i := 0; i < 4; i++ {
		c := s[i]
		if !IsHex(c) {
			return 0, false
		}
		r = r<<4 | rune(Unhex(c))
	}
	return r, true
}

// IsHex reports whether c is a hex digit.
func IsHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// Unhex is the value of the hex digit c (IsHex(c) must hold).
func Unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// StringAround returns the bounds [lo, hi) of the body of the JSON string
// of s that holds offset at: the nearest quotes that are not escaped,
// looked for within [min, max). open says a side reached its limit
// without a quote.
func StringAround(s string, at, from, to int) (lo, hi int, openLo, openHi bool) {
	lo, hi, openLo, openHi = from, to, true, true
	for i := at - 1; i >= from; i-- {
		if s[i] == '"' && EvenBackslashes(s, i) {
			lo, openLo = i+1, false
			break
		}
	}
	for i := at; i < to; i++ {
		if s[i] == '"' && EvenBackslashes(s, i) {
			hi, openHi = i, false
			break
		}
	}
	return lo, hi, openLo && lo > 0, openHi && hi < len(s)
}

// Escapes says which escapes of a JSON text hide what its raw bytes seem
// to say: ASCII, a \u escape of an ASCII character (\u0000 to \u007F,
// as EachASCIIEscape finds them), which may spell markup or a keyword;
// Slash, a \/, which hides a slash; Wide, a \u escape of a character
// beyond ASCII or an escaped backslash that starts the text of an escape
// (EscapeText), which a secrets reading decodes.
type Escapes struct{ ASCII, Slash, Wide bool }

// EscapeText reports whether c, after an escaped backslash, makes the
// decoded text hold the text of an escape that a secrets reading undoes:
// \u, \U, \x, \n, \r, \t, \', \/, or \ before another escape (\"
// is written \\\" in JSON). A credential's quote or line end may be
// written so in a JSON document inside a string.
func EscapeText(c byte) bool { return strings.IndexByte(`uUxnrt'/\`, c) >= 0 }

// ScanEscapes finds the Escapes of s in one pass over its backslashes,
// paired from the start as a JSON reader pairs them.
func ScanEscapes(s []byte) (e Escapes) {
	for i := 0; ; i += 2 {
		j := bytes.IndexByte(s[i:], '\\')
		if j < 0 {
			return e
		}
		i += j
		if i+1 >= len(s) {
			return e
		}
		switch s[i+1] {
		case 'u':
			if i+5 < len(s) && s[i+2] == '0' && s[i+3] == '0' && s[i+4] <= '7' {
				e.ASCII = true
			} else {
				e.Wide = true
			}
		case '/':
			e.Slash = true
		case '\\':
			if i+2 < len(s) && EscapeText(s[i+2]) {
				e.Wide = true
			}
		}
		if e.ASCII && e.Slash && e.Wide {
			return e
		}
	}
}

// EachASCIIEscape calls fn with the bounds of the body of each JSON string
// of s that holds a \u escape of an ASCII character (which may spell
// markup or a keyword that the raw bytes do not show), each string once;
// fn returns false to stop.
func EachASCIIEscape(s string, fn func(lo, hi int) bool) {
	for i := 0; ; {
		j := strings.Index(s[i:], `\u00`)
		if j < 0 {
			return
		}
		i += j
		if !EvenBackslashes(s, i) || i+5 >= len(s) || s[i+4] > '7' {
			i += 2
			continue
		}
		lo, hi, _, _ := StringAround(s, i, 0, len(s))
		if !fn(lo, hi) {
			return
		}
		i = max(hi, i+2)
	}
}

// MayHoldName reports whether the JSON text raw may hold the ASCII member
// name: written out, or with any of its letters spelled as a \u escape
// (inputRequest\u0073). It never says no where the name is present; an
// escaped ASCII letter is rare in real output, so it seldom says yes
// where it is not. esc are the escapes of raw (or of a text it is part
// of): without a \u escape of an ASCII character, only the name written
// out is looked for.
func MayHoldName(raw []byte, name string, esc Escapes) bool {
	if bytes.Contains(raw, []byte(name)) {
		return true
	}
	if !esc.ASCII {
		return false
	}
	for rest := raw; ; {
		i := bytes.Index(rest, []byte(`\u00`))
		if i < 0 || i+6 > len(rest) {
			return false
		}
		if r, ok := Hex4(rest[i+2 : i+6]); ok && r < 0x80 && strings.ContainsRune(name, r) {
			return true
		}
		rest = rest[i+4:]
	}
}

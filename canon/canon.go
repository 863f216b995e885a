// Package canon owns the egress canonicalisers: the rewrites a string from
// an untrusted MCP server goes through before an AI agent reads it.
//
// Tool output is the next prompt injection. A server (or whatever it
// relays: a web page, an issue, a log) can hide instructions from the
// person watching with ANSI escapes that colour text invisible or move the
// cursor over it, plant OSC 8 hyperlinks and OSC 52 clipboard writes in a
// terminal, smuggle text in Unicode tag characters that models read and
// people do not see, and reorder what is shown with bidi overrides
// (Trojan Source, CVE-2021-42574). The canonicalisers remove exactly that
// and keep everything else, so ordinary output is byte-identical.
//
// Every canonicaliser is idempotent — c(c(x)) == c(x) — and always returns
// valid UTF-8 (each invalid byte becomes U+FFFD; path maps it to '?').
package canon

import (
	"fmt"
	"unicode/utf8"
)

// Kind names a canonicaliser in policies and logs.
type Kind string

const (
	KindText     Kind = "text"
	KindFreeText Kind = "free_text"
	KindPath     Kind = "path"
)

// ParseKind reads a canonicaliser name from a policy.
func ParseKind(s string) (Kind, error) {
	switch k := Kind(s); k {
	case KindText, KindFreeText, KindPath:
		return k, nil
	}
	return "", fmt.Errorf("unknown canonicaliser %q (want text, free_text or path)", s)
}

// DefaultMaxBytes caps free_text when a rule sets no max_bytes.
const DefaultMaxBytes = 1024

// MaxPathBytes caps path.
const MaxPathBytes = 256

// Text removes what a terminal or renderer acts on but a reader does not
// see: ANSI/VT escape sequences of every kind (CSI; OSC, including OSC 8
// hyperlinks and OSC 52 clipboard writes; DCS, APC, PM and SOS strings;
// two-byte ESC sequences; and the 8-bit C1 forms of all of them), C0 and
// C1 controls other than tab, LF and CR, Unicode tag characters
// (U+E0000–U+E007F) and bidi embedding, override and isolate controls
// (U+202A–U+202E, U+2066–U+2069). Everything else is kept: tabs, newlines,
// CRLF, backticks, emoji with ZWJ sequences, variation selectors, CJK,
// right-to-left scripts and their LRM/RLM marks. A sequence that is never
// terminated is removed to the end of the string (fail closed).
//
// It returns s itself, without allocating, when nothing changes.
func Text(s string) string {
	i := firstUnclean(s)
	if i == len(s) {
		return s
	}
	return string(clean(make([]byte, 0, len(s)), s, i, false))
}

// AppendText appends Text(src) to dst and reports whether it differs from src.
func AppendText(dst, src []byte) ([]byte, bool) {
	s := bytesToString(src)
	i := firstUnclean(s)
	if i == len(s) {
		return append(dst, src...), false
	}
	return clean(dst, s, i, false), true
}

// NeedsText reports whether Text would change src. It is the fast path
// that lets clean output through without a copy.
func NeedsText(src []byte) bool {
	s := bytesToString(src)
	return firstUnclean(s) != len(s)
}

// FreeText is for fields that must be one line of plain prose: escape
// sequences, tag characters and bidi controls are removed as by Text, then
// every remaining control character (NUL, CR, LF, tab, other C0, DEL, C1)
// becomes a space and every backtick becomes `'` (so the text cannot open
// a code span or a shell substitution where it is shown), and the result
// is cut to maxBytes (<= 0 means DefaultMaxBytes) on a UTF-8 boundary.
func FreeText(s string, maxBytes int) string {
	out, changed := AppendFreeText(nil, []byte(s), maxBytes)
	if !changed {
		return s
	}
	return string(out)
}

// AppendFreeText appends FreeText(src) to dst and reports whether it
// differs from src.
func AppendFreeText(dst, src []byte, maxBytes int) ([]byte, bool) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	start := len(dst)
	s := bytesToString(src)
	i := firstUncleanFree(s)
	if i == len(s) && len(s) <= maxBytes {
		return append(dst, src...), false
	}
	dst = clean(dst, s, i, true)
	out := dst[start:]
	if len(out) > maxBytes {
		cut := maxBytes
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		dst = dst[:start+cut]
	}
	return dst, true
}

// Path keeps only characters that are safe in a displayed path: every
// character outside [A-Za-z0-9._/-] becomes one '?' (one per character,
// not per byte, so a non-ASCII name keeps its length in characters; each
// invalid byte is one '?'), and the result is cut to 256 bytes.
func Path(s string) string {
	out, changed := AppendPath(nil, []byte(s))
	if !changed {
		return s
	}
	return string(out)
}

// AppendPath appends Path(src) to dst and reports whether it differs from src.
func AppendPath(dst, src []byte) ([]byte, bool) {
	start := len(dst)
	changed := false
	for i := 0; i < len(src); {
		if len(dst)-start == MaxPathBytes {
			return dst, true
		}
		c := src[i]
		if pathByte[c] {
			dst = append(dst, c)
			i++
			continue
		}
		changed = true
		dst = append(dst, '?')
		if c < utf8.RuneSelf {
			i++
			continue
		}
		_, n := utf8.DecodeRune(src[i:])
		i += n
	}
	return dst, changed
}

var pathByte = func() (t [256]bool) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "._/-" {
		t[c] = true
	}
	return t
}()

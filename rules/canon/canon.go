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
// Invisible code points are judged by context, because the same ones that
// carry ASCII smuggling (variation selectors after plain letters encoding
// bytes, zero-width runs between ASCII letters, tag characters, Hangul
// fillers) are what emoji sequences and many scripts need. Text keeps an
// invisible code point only where Unicode defines a use for it: ZWJ inside
// emoji ZWJ sequences and, with ZWNJ, between letters of the scripts that
// join or form conjuncts; a variation selector right after a base that has
// that standardized or emoji variation sequence; an ideographic variation
// selector after a CJK ideograph; tag characters as the three RGI
// subdivision flags; direction marks where they can change the display.
// Everything else invisible is removed, and U+2028/2029 become newlines.
// The decisions are deterministic, depend only on the neighbouring code
// points, and never keep two invisible code points side by side outside
// an emoji sequence. The data comes from the standard unicode package
// (scripts, categories) and from tables.go (which code points are
// invisible, variation sequences, emoji properties, joining scripts),
// which gen_tables.go generates from the Unicode Character Database files
// it names (go generate; Debian's unicode-data package ships them). The
// ingress check control_chars, Display and the description linter read
// the same table and judgement, so "invisible" has one definition.
//
// Every canonicaliser is idempotent — c(c(x)) == c(x) — and always returns
// valid UTF-8 (each invalid byte becomes U+FFFD; path maps it to '?').
// The functions hold no state: what a rewrite removed, for a log line, is
// len(src)-len(out) (negative when U+FFFD replacements outgrow removals).
package canon

import (
	"fmt"
	"math"
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

// noLimit is the cap Text and AppendText pass to clean.
const noLimit = math.MaxInt - 1

// Text removes what a terminal or renderer acts on but a reader does not
// see: ANSI/VT escape sequences of every kind (CSI; OSC, including OSC 8
// hyperlinks and OSC 52 clipboard writes; DCS, APC, PM and SOS strings;
// two-byte ESC sequences such as ESC c and charset designations such as
// ESC ( B; and the 8-bit C1 forms of all of them), C0 and C1 controls
// other than tab, LF, CR and FF (so NUL, BEL, BS, VT, a stray ESC, DEL and
// U+0080–U+009F, NEL included), Unicode tag characters (U+E0000–U+E007F)
// and bidi embedding, override and isolate controls (U+202A–U+202E,
// U+2066–U+2069; Trojan Source, CVE-2021-42574). A control string that is
// never terminated is removed to the end of s (fail closed); every
// sequence is removed in one pass, so the cost stays linear. Invisible
// code points are kept or removed by context (see judge): tag characters
// survive only as an RGI subdivision flag, variation selectors only after
// a base that takes them, joiners only in emoji sequences and the scripts
// that use them, soft hyphens only inside a word, U+FEFF only as the byte
// order mark at the start, U+2028/2029 become "\n", and word joiners,
// invisible operators, deprecated format characters and interlinear
// annotation characters are removed. Only what hides or smuggles text
// goes; a character that hides nothing where it stands (form feed, a
// soft hyphen in a word, a byte order mark) is kept.
//
// Everything else is kept byte-identical: tabs, newlines, CRLF, form feeds,
// backticks, emoji sequences (families, professions, skin tones, keycaps,
// flags), CJK with ideographic variation selectors, Indic conjuncts,
// Persian with ZWNJ, right-to-left scripts and their LRM/RLM/ALM marks.
// Each byte that is not part of valid UTF-8 becomes U+FFFD, so the result
// is always valid UTF-8.
//
// It returns s itself, without allocating, when nothing changes.
func Text(s string) string {
	i := firstUnclean(s)
	if i == len(s) {
		return s
	}
	return bytesToString(clean(make([]byte, 0, len(s)), s, i, modeText, noLimit)) // a fresh buffer, never written again
}

// AppendText appends Text(src) to dst and reports whether it differs from src.
func AppendText(dst, src []byte) (out []byte, changed bool) {
	s := bytesToString(src)
	i := firstUnclean(s)
	if i == len(s) {
		return append(dst, src...), false
	}
	return clean(dst, s, i, modeText, noLimit), true
}

// NeedsText reports whether Text would change src. It is the fast path
// that lets clean output through without a copy: plain ASCII is checked
// a word at a time.
func NeedsText(src []byte) bool {
	s := bytesToString(src)
	return firstUnclean(s) != len(s)
}

// FreeText is for fields that must be one line of plain prose. Escape
// sequences (and a stray ESC), bidi controls and invisible code points
// are dealt with as by Text (U+2028/2029 become a space); every other control character (NUL, CR, LF, tab,
// other C0, DEL, C1 such as NEL) becomes a space and every backtick
// becomes ' (so the text cannot open a code span or a shell substitution
// where it is shown); invalid bytes become U+FFFD. The result is then cut
// to maxBytes (<= 0 means DefaultMaxBytes) at a code point boundary, so it
// stays valid UTF-8, and judged again (a joiner or part of a flag that
// the cut left dangling goes), so FreeText of it is itself.
//
// It returns s itself, without allocating, when nothing changes.
func FreeText(s string, maxBytes int) string {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	i := firstUncleanFree(overCap(s, maxBytes))
	if i == len(s) && len(s) <= maxBytes {
		return s
	}
	return bytesToString(freeText(make([]byte, 0, min(len(s), maxBytes+utf8.UTFMax)), s, i, maxBytes))
}

// overCap is the part of s worth scanning under a cap of n bytes: all of
// it, or its first n+1 bytes and the few after them that an invisible
// code point within the cap is judged by (past the cap s changes anyway;
// the scan only finds where the rewrite starts).
func overCap(s string, n int) string {
	if len(s) > n+1+lookahead {
		return s[:n+1+lookahead]
	}
	return s
}

// lookahead bounds how far past a code point judge reads: the next code
// point, or an RGI tag sequence.
const lookahead = 32

// freeText appends the rewrite of s (clean from index from) cut to max
// bytes. Rewriting stops soon after the cap, so a huge input costs its
// scan and no more.
func freeText(dst []byte, s string, from, max int) []byte {
	start := len(dst)
	dst = clean(dst, s, from, modeFree, max)
	if out := dst[start:]; len(out) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		// The cut may leave a joiner or part of a flag's tag sequence
		// at the end, judged before the cut by what followed it: judge
		// the cut text again, so that FreeText of the result is itself.
		t := string(out[:cut])
		dst = clean(dst[:start], t, firstUncleanFree(t), modeFree, max)
	}
	return dst
}

// Path keeps only characters that are safe in a displayed path: every
// character outside [A-Za-z0-9._/-] becomes one '?' (one per code point,
// not per byte, so a non-ASCII name keeps its length in characters; each
// invalid byte is one '?'), and the result is cut to MaxPathBytes. The
// result is ASCII. Escape sequences are not parsed: ESC [ 3 1 m becomes
// ??31m, which shows that something was there.
//
// It returns s itself, without allocating, when nothing changes.
func Path(s string) string {
	i := firstUncleanPath(overCap(s, MaxPathBytes))
	if i == len(s) && len(s) <= MaxPathBytes {
		return s
	}
	return bytesToString(path(make([]byte, 0, min(len(s), MaxPathBytes)), s, i))
}

func path(dst []byte, s string, from int) []byte {
	start := len(dst)
	from = min(from, MaxPathBytes)
	dst = append(dst, s[:from]...)
	for i := from; i < len(s) && len(dst)-start < MaxPathBytes; {
		c := s[i]
		if pathByte[c] {
			dst = append(dst, c)
			i++
			continue
		}
		dst = append(dst, '?')
		if c < utf8.RuneSelf {
			i++
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		i += n
	}
	return dst
}

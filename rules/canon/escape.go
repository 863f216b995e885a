package canon

import "unicode/utf8"

// This file holds the slow path: rewriting a string from the first byte a
// scanner flagged. Escape sequences are parsed after ECMA-48 and the
// VT500-series state machine, but only far enough to know where they end;
// since Text removes every ESC and every C1 control, nothing it keeps can
// start a sequence, however a terminal parses the rest.

const (
	esc = 0x1B
	bel = 0x07
)

// mode selects what clean does with the controls it does not drop.
type mode uint8

const (
	modeText mode = iota // drop them
	modeFree             // a space for each, ' for each backtick
)

// clean appends s to dst with escape sequences, forbidden code points and
// invalid bytes dealt with; s[:from] is known to need nothing. It stops
// once it has appended more than limit bytes (the caller cuts), so a
// capped rewrite of a huge string costs what the cap costs.
func clean(dst []byte, s string, from int, m mode, limit int) []byte {
	start := len(dst)
	dst = append(dst, s[:min(from, limit+1)]...)
	b := stringBytes(s)
	for i := from; i < len(b) && len(dst)-start <= limit; {
		c := b[i]
		// Past a sequence, copy the run that needs nothing in one append.
		if c >= 0x20 && c < 0x7F && c != '`' {
			if k := runLen(s[i:], m); k > 0 {
				k = min(k, limit+1-(len(dst)-start))
				dst = append(dst, s[i:i+k]...)
				i += k
				continue
			}
		}
		if c < utf8.RuneSelf {
			switch {
			case c == esc:
				i = skipEscape(b, i+1) // a stray ESC goes with its sequence
				continue
			case c == '\t' || c == '\n' || c == '\r' || c == '\f':
				if m == modeFree {
					c = ' '
				}
			case c < 0x20 || c == 0x7F:
				i++
				if m == modeFree {
					dst = append(dst, ' ')
				}
				continue
			case c == '`' && m == modeFree:
				c = '\''
			}
			dst = append(dst, c)
			i++
			continue
		}
		size, cl := classify(b, i)
		switch {
		case cl == kept:
			dst = append(dst, s[i:i+size]...)
			i += size
		case cl == judged:
			n, v := judge(b, i, size, prevRune(dst[start:]))
			switch v {
			case keep:
				dst = append(dst, s[i:i+n]...)
			case newline:
				if m == modeFree {
					dst = append(dst, ' ')
				} else {
					dst = append(dst, '\n')
				}
			}
			i += n
		case size == 1: // an invalid byte
			dst = append(dst, "\uFFFD"...)
			i++
		case c == 0xC2: // C1 control
			c1 := b[i+1]
			i = skipC1(b, c1, i+2)
			if m == modeFree && !introducesSequence(c1) {
				dst = append(dst, ' ')
			}
		default: // bidi control
			i += size
		}
	}
	return dst
}

// runLen is the length of the prefix of s that the mode keeps as it is.
func runLen(s string, m mode) int {
	if m == modeFree {
		return firstUncleanFree(s)
	}
	return firstUnclean(s)
}

// introducesSequence reports whether the C1 control whose second UTF-8
// byte is c1 (U+0080 + c1 - 0x80) starts a sequence: CSI, OSC, DCS, SOS,
// PM, APC. Their bodies go with them.
func introducesSequence(c1 byte) bool {
	switch c1 {
	case 0x9B, 0x9D, 0x90, 0x98, 0x9E, 0x9F:
		return true
	}
	return false
}

// skipEscape returns the index after the escape sequence whose ESC was at
// i-1. A stray ESC (at the end, or before a byte that cannot follow it)
// goes alone; the byte after it is then read as usual.
func skipEscape(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch c := b[i]; {
	case c == '[': // CSI
		return skipCSI(b, i+1)
	case c == ']', c == 'P', c == 'X', c == '^', c == '_': // OSC, DCS, SOS, PM, APC
		return skipString(b, i+1)
	case c >= 0x20 && c <= 0x2F: // intermediates, then a final byte: ESC ( B, ESC # 8
		for i < len(b) && b[i] >= 0x20 && b[i] <= 0x2F {
			i++
		}
		if i < len(b) && b[i] >= 0x30 && b[i] <= 0x7E {
			i++
		}
		return i
	case c >= 0x30 && c <= 0x7E: // two-byte sequences: ESC 7, ESC c, ESC =, ESC M
		return i + 1
	}
	return i
}

// skipC1 returns the index after the 8-bit sequence introduced by the C1
// control whose second UTF-8 byte is c1, its body starting at i.
func skipC1(b []byte, c1 byte, i int) int {
	switch c1 {
	case 0x9B: // CSI
		return skipCSI(b, i)
	case 0x9D, 0x90, 0x98, 0x9E, 0x9F: // OSC, DCS, SOS, PM, APC
		return skipString(b, i)
	}
	return i
}

// skipCSI skips parameter bytes (0x30–0x3F), intermediate bytes
// (0x20–0x2F) and the final byte (0x40–0x7E). Any other byte ends the
// sequence without being consumed, and is then read as usual.
func skipCSI(b []byte, i int) int {
	for i < len(b) && b[i] >= 0x30 && b[i] <= 0x3F {
		i++
	}
	for i < len(b) && b[i] >= 0x20 && b[i] <= 0x2F {
		i++
	}
	if i < len(b) && b[i] >= 0x40 && b[i] <= 0x7E {
		i++
	}
	return i
}

// skipString skips a control string (OSC, DCS, SOS, PM, APC) through its
// terminator: BEL, ST (ESC \) or the 8-bit ST (U+009C). BEL ends only OSC
// in xterm but every string in st and others; ending them all there keeps
// the text that follows, which is safe because it cannot hold an ESC once
// Text is done. Unterminated, the string runs to the end of s (fail
// closed): a terminal would swallow the rest as well.
func skipString(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case bel:
			return i + 1
		case esc:
			if i+1 < len(b) && b[i+1] == '\\' {
				return i + 2
			}
		case 0xC2:
			if i+1 < len(b) && b[i+1] == 0x9C {
				return i + 2
			}
		}
		i++
	}
	return i
}

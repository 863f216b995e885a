package canon

import (
	"unicode/utf8"
	"unsafe"
)

func bytesToString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

const (
	esc = 0x1B
	bel = 0x07
)

// removed reports whether Text removes the code point r outright (outside
// any escape sequence).
func removed(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\t' && r != '\n' && r != '\r'
	case r < 0x7F:
		return false
	case r <= 0x9F: // DEL and C1
		return true
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069: // bidi embeddings, overrides, isolates
		return true
	case r >= 0xE0000 && r <= 0xE007F: // tag characters
		return true
	}
	return false
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plain8 reports whether the 8 bytes at s[i:] need nothing from Text:
// each is printable ASCII, tab, LF or CR. SWAR with exact per-byte masks
// (no carries cross byte lanes), so runs of ordinary multi-line output are
// skipped a word at a time.
func plain8(s string, i int) bool {
	w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
	const low7 = 0x7F7F7F7F7F7F7F7F
	l := w & low7
	high := w | (l + ones)                   // bit 7: byte >= 0x80, or byte is 0x7F
	ctl := ^(l + 0x6060606060606060) & highs // bit 7: byte < 0x20 (for bytes < 0x80)
	ctl &^= isByte(w, '\t') | isByte(w, '\n') | isByte(w, '\r')
	return (high&highs)|ctl == 0
}

// isByte sets bit 7 of each lane of w that equals c, exactly.
func isByte(w uint64, c byte) uint64 {
	const low7 = 0x7F7F7F7F7F7F7F7F
	x := w ^ (uint64(c) * ones)
	return ^(((x & low7) + low7) | x) & highs
}

// firstUnclean returns the index of the first byte that Text must act on,
// or len(s).
func firstUnclean(s string) int {
	for i := 0; i < len(s); {
		for i+8 <= len(s) && plain8(s, i) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7F {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || removed(r) {
			return i
		}
		i += n
	}
	return len(s)
}

// firstUncleanFree is firstUnclean for FreeText: tab, LF, CR and backtick
// must change too.
func firstUncleanFree(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '`' || c >= 0x7F {
			if c >= utf8.RuneSelf {
				j := firstUnclean(s[i:])
				k := firstUncleanFreeASCII(s[i:])
				return i + min(j, k)
			}
			return i
		}
	}
	return len(s)
}

func firstUncleanFreeASCII(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\t' || c == '\n' || c == '\r' || c == '`' {
			return i
		}
	}
	return len(s)
}

// clean appends s to dst with escape sequences, forbidden code points and
// invalid bytes dealt with; s[:from] is known clean. In free mode the lone
// controls that survive become spaces and backticks become '.
func clean(dst []byte, s string, from int, free bool) []byte {
	dst = append(dst, s[:from]...) // for FreeText, also free of tab/LF/CR/backtick
	for i := from; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == esc:
				i = skipEscape(s, i+1)
				continue
			case c == '\t' || c == '\n' || c == '\r':
				if free {
					c = ' '
				}
			case c < 0x20 || c == 0x7F:
				i++
				if free {
					dst = append(dst, ' ')
				}
				continue
			case c == '`' && free:
				c = '\''
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			dst = utf8.AppendRune(dst, utf8.RuneError)
			i++
		case r >= 0x80 && r <= 0x9F:
			i = skipC1(s, r, i+n)
			if free && !introducesSequence(r) {
				dst = append(dst, ' ')
			}
		case removed(r):
			i += n
		default:
			dst = append(dst, s[i:i+n]...)
			i += n
		}
	}
	return dst
}

// introducesSequence reports whether an 8-bit C1 code starts a sequence
// (its body is removed with it) rather than standing alone.
func introducesSequence(r rune) bool {
	switch r {
	case 0x9B, 0x9D, 0x90, 0x98, 0x9E, 0x9F:
		return true
	}
	return false
}

// skipEscape returns the index after the escape sequence whose ESC was at
// i-1. An unterminated string sequence runs to the end of s.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch c := s[i]; {
	case c == '[': // CSI
		return skipCSI(s, i+1)
	case c == ']', c == 'P', c == 'X', c == '^', c == '_': // OSC, DCS, SOS, PM, APC
		return skipString(s, i+1)
	case c >= 0x20 && c <= 0x2F: // intermediates, then a final byte (ESC ( B)
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2F {
			i++
		}
		if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7E {
			i++
		}
		return i
	case c >= 0x30 && c <= 0x7E: // two-byte sequences: ESC 7, ESC c, ESC =
		return i + 1
	}
	return i // a lone ESC: only it goes
}

// skipC1 returns the index after the 8-bit sequence introduced by C1 code r
// (already consumed up to i).
func skipC1(s string, r rune, i int) int {
	switch r {
	case 0x9B: // CSI
		return skipCSI(s, i)
	case 0x9D, 0x90, 0x98, 0x9E, 0x9F: // OSC, DCS, SOS, PM, APC
		return skipString(s, i)
	}
	return i
}

// skipCSI skips parameter bytes (0x30–0x3F), intermediate bytes
// (0x20–0x2F) and the final byte (0x40–0x7E). A byte outside those ends
// the sequence without being consumed.
func skipCSI(s string, i int) int {
	for i < len(s) && s[i] >= 0x30 && s[i] <= 0x3F {
		i++
	}
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2F {
		i++
	}
	if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7E {
		i++
	}
	return i
}

// skipString skips a control string (OSC, DCS, SOS, PM, APC) through its
// terminator: BEL, ST (ESC \) or the 8-bit ST (U+009C). Unterminated, it
// runs to the end: a terminal would swallow the rest too.
func skipString(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case bel:
			return i + 1
		case esc:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		case 0xC2:
			if i+1 < len(s) && s[i+1] == 0x9C {
				return i + 2
			}
		}
		i++
	}
	return i
}

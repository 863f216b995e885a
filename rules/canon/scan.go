package canon

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// This file holds the scanners that find the first byte a canonicaliser
// must act on. They carry the fast path: most strings a server sends need
// nothing, and the proxy asks about every one of them.

func bytesToString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// stringBytes views s as bytes for word loads. The slice is only read.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
	low7  = 0x7F7F7F7F7F7F7F7F
)

// suspect8 sets bit 7 of every lane of w that holds a byte >= 0x80, DEL
// (0x7F) or a C0 control (< 0x20). Lanes are summed from their low seven
// bits only, so no carry crosses into the next lane and the mask is exact.
func suspect8(w uint64) uint64 {
	l := w & low7
	return (w | (l + ones) | ^(l + 0x6060606060606060)) & highs
}

// isByte sets bit 7 of each lane of w that equals c, exactly.
func isByte(w uint64, c byte) uint64 {
	x := w ^ (uint64(c) * ones)
	return ^(((x & low7) + low7) | x) & highs
}

// dirtyFree8 reports the lanes of w that FreeText must look at: every
// control, DEL, non-ASCII and the backtick.
func dirtyFree8(w uint64) uint64 { return suspect8(w) | isByte(w, '`') }

// firstUnclean returns the index of the first byte that Text must act on
// (a control other than tab/LF/CR/FF, DEL, an invalid UTF-8 byte, the start
// of a code point Text removes, or of an invisible one that its context
// does not allow), or len(s).
//
// Plain ASCII is skipped a word at a time; tab, LF, CR and FF are exempted
// only in the words that hold a suspect byte, about one word in five of
// ordinary text. A flagged word jumps straight to its first suspect byte;
// from there code points are checked one by one (a table-free decode that
// looks closer only at the lead bytes that can start a code point Text
// removes or judges) until the next ASCII byte, where the word scan
// resumes.
func firstUnclean(s string) int {
	b := stringBytes(s)
	n := len(b)
	i := 0
	for i < n {
		for i+8 <= n {
			w := binary.LittleEndian.Uint64(b[i:])
			if m := suspect8(w); m != 0 {
				if m &^= isByte(w, '\t') | isByte(w, '\n') | isByte(w, '\r') | isByte(w, '\f'); m != 0 {
					i += bits.TrailingZeros64(m) >> 3
					break
				}
			}
			i += 8
		}
		for i < n {
			c := b[i]
			if c >= 0x80 {
				size, cl := classify(b, i)
				switch cl {
				case removed:
					return i
				case judged:
					k, v := judge(b, i, size, prevRune(b[:i]))
					if v != keep {
						return i
					}
					size = k
				}
				i += size
				continue
			}
			if c < 0x20 && !layout(c) || c == 0x7F {
				return i
			}
			i++
			if i+8 <= n {
				break // back to words
			}
		}
	}
	return n
}

// class is what classify found.
type class uint8

const (
	kept    class = iota // valid UTF-8 that Text keeps wherever it stands
	removed              // an invalid byte, a C1 control, a bidi control
	judged               // an invisible code point or U+2028/2029: see judge
)

// classify looks at the non-ASCII code point starting at b[i] and returns
// its length and class: removed for an invalid byte (size 1), a C1
// control (U+0080–U+009F) or a bidi control (U+202A–U+202E,
// U+2066–U+2069); judged for an invisible code point or U+2028/2029; kept
// otherwise. Only a few lead bytes (contextLead) can start a code point
// that is not kept, so the others are only validated.
func classify(b []byte, i int) (size int, cl class) {
	c := b[i]
	switch {
	case c < 0xC2: // a continuation byte, or an overlong 2-byte lead
		return 1, removed
	case c < 0xE0:
		if i+1 >= len(b) || b[i+1]&0xC0 != 0x80 {
			return 1, removed
		}
		if c == 0xC2 && b[i+1] < 0xA0 { // C1 control
			return 2, removed
		}
		if contextLead[c] && judgedBMP(rune(c&0x1F)<<6|rune(b[i+1]&0x3F)) {
			return 2, judged
		}
		return 2, kept
	case c < 0xF0:
		if i+2 >= len(b) {
			return 1, removed
		}
		c1, c2 := b[i+1], b[i+2]
		lo, hi := byte(0x80), byte(0xBF)
		switch c {
		case 0xE0:
			lo = 0xA0 // overlong
		case 0xED:
			hi = 0x9F // surrogates
		}
		if c1 < lo || c1 > hi || c2&0xC0 != 0x80 {
			return 1, removed
		}
		if c == 0xE2 && (c1 == 0x80 && c2 >= 0xAA && c2 <= 0xAE || c1 == 0x81 && c2 >= 0xA6 && c2 <= 0xA9) {
			return 3, removed // bidi embedding, override or isolate
		}
		if contextLead[c] && judgedBMP(rune(c&0x0F)<<12|rune(c1&0x3F)<<6|rune(c2&0x3F)) {
			return 3, judged
		}
		return 3, kept
	case c < 0xF5:
		if i+3 >= len(b) {
			return 1, removed
		}
		c1, c2, c3 := b[i+1], b[i+2], b[i+3]
		lo, hi := byte(0x80), byte(0xBF)
		switch c {
		case 0xF0:
			lo = 0x90 // overlong
		case 0xF4:
			hi = 0x8F // beyond U+10FFFF
		}
		if c1 < lo || c1 > hi || c2&0xC0 != 0x80 || c3&0xC0 != 0x80 {
			return 1, removed
		}
		if contextLead[c] && Invisible(rune(c&0x07)<<18|rune(c1&0x3F)<<12|rune(c2&0x3F)<<6|rune(c3&0x3F)) {
			return 4, judged
		}
		return 4, kept
	}
	return 1, removed
}

// firstUncleanFree returns the index of the first byte FreeText must act
// on: what Text acts on, plus tab, LF, CR and the backtick. It scans like
// firstUnclean.
func firstUncleanFree(s string) int {
	b := stringBytes(s)
	n := len(b)
	i := 0
	for i < n {
		for i+8 <= n {
			if m := dirtyFree8(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		for i < n {
			c := b[i]
			if c >= 0x80 {
				size, cl := classify(b, i)
				switch cl {
				case removed:
					return i
				case judged:
					k, v := judge(b, i, size, prevRune(b[:i]))
					if v != keep {
						return i
					}
					size = k
				}
				i += size
				continue
			}
			if c < 0x20 || c == 0x7F || c == '`' {
				return i
			}
			i++
			if i+8 <= n {
				break
			}
		}
	}
	return n
}

// firstUncleanPath returns the index of the first byte Path changes: one
// outside [A-Za-z0-9._/-], except '?', which stands for itself.
func firstUncleanPath(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !pathByte[c] && c != '?' {
			return i
		}
	}
	return len(s)
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

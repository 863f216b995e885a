package canon

import (
	"unicode"
	"unicode/utf8"
)

// This file holds slow reference canonicalisers written straight from the
// contract, code point by code point with no fast path, for the
// differential tests and fuzz targets to hold the real ones against.

// dropped reports a code point Text removes wherever it stands.
func dropped(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\t' && r != '\n' && r != '\r' && r != '\f'
	case r >= 0x7F && r <= 0x9F: // DEL, C1
		return true
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069: // bidi controls
		return true
	}
	return false
}

// refScript is the name of r's script, by a walk over unicode.Scripts.
func refScript(r rune) string {
	if r < 0 {
		return ""
	}
	for name, t := range unicode.Scripts {
		if unicode.Is(t, r) {
			return name
		}
	}
	return ""
}

func refIn(names []string, s string) bool {
	for _, n := range names {
		if n == s && s != "" {
			return true
		}
	}
	return false
}

func refLM(r rune) bool {
	return r >= 0 && (unicode.IsLetter(r) || unicode.IsMark(r)) && !derivedInvisible(r)
}

// refStable: Text keeps r as it is wherever it stands, or r is the end.
func refStable(r rune) bool {
	if r < 0 {
		return true
	}
	return !dropped(r) && !derivedInvisible(r) && r != 0x2028 && r != 0x2029
}

// refJudge is the contract of judge over code points: rs[i] is invisible
// or U+2028/2029, prev the code point last kept (-1 at the start). It
// returns how many code points the decision covers and the verdict.
func refJudge(rs []rune, i int, prev rune) (int, verdict) {
	r := rs[i]
	next := rune(-1)
	if i+1 < len(rs) {
		next = rs[i+1]
	}
	joinsIn := func(scripts []string) bool {
		if !refLM(prev) || !refIn(scripts, refScript(prev)) {
			return false
		}
		if refLM(next) {
			return refScript(next) == refScript(prev)
		}
		return refStable(next)
	}
	switch {
	case r == 0x2028 || r == 0x2029:
		return 1, newline
	case r >= 0xE0000 && r <= 0xE007F:
		if prev == 0x1F3F4 {
			for _, seq := range rgiTagSequences {
				tags := []rune(seq)[1:]
				if len(rs)-i >= len(tags) && string(rs[i:i+len(tags)]) == string(tags) {
					return len(tags), keep
				}
			}
		}
		return 1, drop
	case r >= 0xE0100 && r <= 0xE01EF:
		return 1, keepIf(prev >= 0 && unicode.Is(unicode.Unified_Ideograph, prev))
	case unicode.Is(unicode.Variation_Selector, r):
		for _, vb := range variationBases {
			if vb.base == prev {
				bit, _ := selectorBit(r)
				return 1, keepIf(vb.selectors&(1<<bit) != 0)
			}
		}
		return 1, drop
	case r == 0x200D:
		emojiPrev := prev == 0xFE0F || prev == 0xE007F || prev >= 0 && (unicode.Is(extendedPictographic, prev) || unicode.Is(emojiModifier, prev))
		if emojiPrev && next >= 0 && unicode.Is(extendedPictographic, next) {
			return 1, keep
		}
		return 1, keepIf(joinsIn(joiningScripts))
	case r == 0x200C:
		return 1, keepIf(joinsIn(joiningScripts))
	case r == 0x200B:
		return 1, keepIf(joinsIn(spacelessScripts))
	case r == 0x200E || r == 0x200F || r == 0x061C:
		if prev >= 0 && derivedInvisible(prev) || !refStable(next) {
			return 1, drop
		}
		return 1, keepIf(!(refLM(prev) && refLM(next) && refScript(prev) == refScript(next)))
	case r == 0x034F:
		return 1, keepIf(refLM(prev) && refLM(next) && unicode.IsMark(next))
	case r == 0x00AD: // inside a word
		return 1, keepIf(refLM(prev) && refLM(next) && unicode.IsLetter(next) && (unicode.IsMark(prev) || refScript(prev) == refScript(next)))
	case r == 0xFEFF: // the byte order mark
		return 1, keepIf(prev < 0 && refStable(next))
	}
	if s := refScript(r); s != "" && s != "Common" && s != "Inherited" {
		if prev >= 0 && derivedInvisible(prev) || !refStable(next) {
			return 1, drop
		}
		return 1, keepIf(refLM(prev) && refScript(prev) == s || refLM(next) && refScript(next) == s)
	}
	return 1, drop
}

// refCanon is Text (free=false) or FreeText without its cap (free=true),
// as a VT500-style state machine over code points. Ranging over a string
// yields U+FFFD for each invalid byte, which is the contract.
func refCanon(s string, free bool) string {
	const (
		ground = iota
		escape
		escInter
		csiParam
		csiInter
		ctlString
		ctlStringEsc
	)
	state := ground
	rs := []rune(s)
	var out []rune
	for i := 0; i < len(rs); {
		r := rs[i]
		switch state {
		case ground:
			i++
			switch {
			case r == 0x1B:
				state = escape
			case r == 0x9B:
				state = csiParam
			case r == 0x9D || r == 0x90 || r == 0x98 || r == 0x9E || r == 0x9F:
				state = ctlString
			case r == '\t' || r == '\n' || r == '\r' || r == '\f':
				if free {
					r = ' '
				}
				out = append(out, r)
			case r < 0x20 || r >= 0x7F && r <= 0x9F:
				if free {
					out = append(out, ' ')
				}
			case dropped(r):
			case r == 0x2028 || r == 0x2029 || derivedInvisible(r):
				prev := rune(-1)
				if len(out) > 0 {
					prev = out[len(out)-1]
				}
				n, v := refJudge(rs, i-1, prev)
				switch v {
				case keep:
					out = append(out, rs[i-1:i-1+n]...)
				case newline:
					if free {
						out = append(out, ' ')
					} else {
						out = append(out, '\n')
					}
				}
				i += n - 1
			case r == '`' && free:
				out = append(out, '\'')
			default:
				out = append(out, r)
			}
		case escape:
			state = ground
			switch {
			case r == '[':
				state = csiParam
				i++
			case r == ']' || r == 'P' || r == 'X' || r == '^' || r == '_':
				state = ctlString
				i++
			case r >= 0x20 && r <= 0x2F:
				state = escInter
				i++
			case r >= 0x30 && r <= 0x7E:
				i++
			}
		case escInter:
			switch {
			case r >= 0x20 && r <= 0x2F:
				i++
			case r >= 0x30 && r <= 0x7E:
				state = ground
				i++
			default:
				state = ground
			}
		case csiParam:
			switch {
			case r >= 0x30 && r <= 0x3F:
				i++
			case r >= 0x20 && r <= 0x2F:
				state = csiInter
				i++
			case r >= 0x40 && r <= 0x7E:
				state = ground
				i++
			default:
				state = ground
			}
		case csiInter:
			switch {
			case r >= 0x20 && r <= 0x2F:
				i++
			case r >= 0x40 && r <= 0x7E:
				state = ground
				i++
			default:
				state = ground
			}
		case ctlString:
			i++
			switch r {
			case 0x07, 0x9C:
				state = ground
			case 0x1B:
				state = ctlStringEsc
			}
		case ctlStringEsc:
			state = ctlString
			if r == '\\' {
				state = ground
				i++
			}
		}
	}
	return string(out)
}

func refText(s string) string { return refCanon(s, false) }

func refFreeText(s string, max int) string {
	if max <= 0 {
		max = DefaultMaxBytes
	}
	out := refCanon(s, true)
	if len(out) <= max {
		return out
	}
	for len(out) > max {
		_, n := utf8.DecodeLastRuneInString(out)
		out = out[:len(out)-n]
	}
	return refCanon(out, true) // what the cut left dangling
}

func refPath(s string) string {
	var out []byte
	for _, r := range s {
		if r < utf8.RuneSelf && pathByte[r] {
			out = append(out, byte(r))
		} else {
			out = append(out, '?')
		}
	}
	return string(out[:min(len(out), MaxPathBytes)])
}

// derivedInvisible is Invisible derived from the standard unicode package
// as the Unicode Character Database derives Default_Ignorable_Code_Point
// (Other_Default_Ignorable_Code_Point, Cf and Variation_Selector, less
// White_Space, the prepended concatenation marks and the Egyptian
// hieroglyph format controls), plus the interlinear annotation characters.
func derivedInvisible(r rune) bool {
	if r >= 0xFFF9 && r <= 0xFFFB {
		return true
	}
	if !unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector) {
		return false
	}
	return !unicode.In(r, unicode.White_Space, unicode.Prepended_Concatenation_Mark, unicode.Egyptian_Hieroglyphs)
}

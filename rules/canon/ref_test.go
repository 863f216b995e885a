package canon

import "unicode/utf8"

// This file holds slow reference canonicalisers written straight from the
// contract, code point by code point with no fast path, for the
// differential tests and fuzz targets to hold the real ones against.

// dropped reports a code point Text removes wherever it stands.
func dropped(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\t' && r != '\n' && r != '\r'
	case r >= 0x7F && r <= 0x9F: // DEL, C1
		return true
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069: // bidi controls
		return true
	case r >= 0xE0000 && r <= 0xE007F: // tags
		return true
	}
	return false
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
			case r == '\t' || r == '\n' || r == '\r':
				if free {
					r = ' '
				}
				out = append(out, r)
			case r < 0x20 || r >= 0x7F && r <= 0x9F:
				if free {
					out = append(out, ' ')
				}
			case dropped(r):
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
	for len(out) > max {
		_, n := utf8.DecodeLastRuneInString(out)
		out = out[:len(out)-n]
	}
	return out
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

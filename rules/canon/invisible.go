package canon

import "unicode"

// Invisible reports whether r is a default-ignorable code point
// (Unicode's Default_Ignorable_Code_Point: format controls, joiners,
// variation selectors, tag characters, Hangul fillers and the like) or an
// interlinear annotation character (U+FFF9–U+FFFB): a code point a
// renderer shows as nothing. It is derived from the standard unicode
// package's tables as the Unicode Character Database derives the property:
// Other_Default_Ignorable_Code_Point, Cf and Variation_Selector, less
// White_Space, the prepended concatenation marks and the Egyptian
// hieroglyph format controls.
func Invisible(r rune) bool {
	if r < 0xAD {
		return false
	}
	if r >= 0xFFF9 && r <= 0xFFFB {
		return true
	}
	if !unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector) {
		return false
	}
	return !unicode.In(r, unicode.White_Space, unicode.Prepended_Concatenation_Mark, unicode.Egyptian_Hieroglyphs)
}

// Visible is the name a reader sees in s: Text(s) with every invisible
// code point removed. Egress rules and tool names are matched on it, so a
// server cannot dodge a rule or a deny with a name that differs from the
// one the client reads only by something nobody sees (file\u200b for file).
// It returns s itself when s is plain.
func Visible(s string) string {
	t := Text(s)
	for i, r := range t {
		if r >= 0xAD && Invisible(r) {
			b := make([]byte, 0, len(t))
			b = append(b, t[:i]...)
			for _, r := range t[i:] {
				if !Invisible(r) {
					b = append(b, string(r)...)
				}
			}
			return string(b)
		}
	}
	return t
}

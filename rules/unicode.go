package rules

import "unicode"

// Character classes shared by the checks. They err on the side of
// rejection: a rune that some tool, terminal or normaliser might read as
// something else is treated as that something else.

// isDashLike reports whether r is a dash or minus sign that a tool, a
// terminal or a copy-paste normaliser may turn into '-': every dash
// punctuation character (Pd: U+2010..U+2015, U+FE58, U+FE63, U+FF0D, ...) and
// the minus signs, which are math symbols.
func isDashLike(r rune) bool {
	switch r {
	case '-':
		return true
	case 0x2212, 0x207B, 0x208B, 0x2796, 0x02D7, 0x2043, 0x2E3A, 0x2E3B:
		return true
	}
	return r >= 0x80 && unicode.Is(unicode.Pd, r)
}

// compatASCII maps the compatibility forms of ASCII characters that NFKC
// would fold into ASCII: fullwidth forms (U+FF01..U+FF5E) and the small form
// variants of punctuation. It is a cheap subset of NFKC; it returns r
// unchanged when r has no ASCII form here.
func compatASCII(r rune) rune {
	switch {
	case r >= 0xFF01 && r <= 0xFF5E:
		return r - 0xFF01 + '!'
	case r == 0x3000: // ideographic space
		return ' '
	}
	switch r {
	case 0xFE50:
		return ','
	case 0xFE52, 0x2024: // small full stop, one dot leader
		return '.'
	case 0xFE54, 0x037E, 0xFE14: // small semicolon, Greek question mark, vertical semicolon
		return ';'
	case 0x1FEF: // Greek varia
		return '`'
	case 0xFE55:
		return ':'
	case 0xFE56:
		return '?'
	case 0xFE57:
		return '!'
	case 0xFE59:
		return '('
	case 0xFE5A:
		return ')'
	case 0xFE5F:
		return '#'
	case 0xFE60:
		return '&'
	case 0xFE61:
		return '*'
	case 0xFE62:
		return '+'
	case 0xFE64:
		return '<'
	case 0xFE65:
		return '>'
	case 0xFE66:
		return '='
	case 0xFE68:
		return '\\'
	case 0xFE69:
		return '$'
	case 0xFE6A:
		return '%'
	case 0xFE6B:
		return '@'
	case 0x2215, 0x2044: // division slash, fraction slash: not NFKC, but look like '/'
		return '/'
	}
	return r
}

// isArgSeparator reports whether a server that splits a string into words
// (a shell, Python's str.split, Go's strings.Fields) may split at r. Python
// also splits at the information separators U+001C..U+001F.
func isArgSeparator(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1C && r <= 0x1F)
}

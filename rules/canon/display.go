package canon

import (
	"unicode"
	"unicode/utf8"
)

// Display makes a string from a peer fit to show on one line of a terminal,
// a log or a YAML comment, so that neither the agent nor the server can
// write into an operator's screen or a file through it:
//
//   - C0 and C1 controls and DEL (ESC and CSI among them: the ANSI escapes
//     that recolour, hide or rewrite text) become a space, as in FreeText;
//   - a backtick becomes ', as in FreeText (it opens code spans and shell
//     substitutions where a line is pasted);
//   - bytes that are not valid UTF-8, invisible format characters (bidi
//     embeddings, overrides and isolates, marks, zero-width characters,
//     Unicode tags U+E0000–U+E007F) and line and paragraph separators
//     become '?', so a reader sees that something was there;
//   - the result is capped at maxBytes on a UTF-8 boundary.
//
// Everything else, printable text in any script, is kept. Display is
// idempotent: every replacement is a printable ASCII byte.
func Display(s string, maxBytes int) string {
	if displayClean(s) && len(s) <= maxBytes {
		return s // the common case: no allocation
	}
	out := make([]byte, 0, min(len(s), maxBytes))
	for i := 0; i < len(s); {
		c := s[i]
		var rep []byte
		size := 1
		switch {
		case c == '`':
			rep = []byte{'\''}
		case c < 0x20 || c == 0x7f:
			rep = []byte{' '}
		case c < utf8.RuneSelf:
			rep = []byte{c}
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			size = n
			switch {
			case r == utf8.RuneError && n == 1:
				rep = []byte{'?'}
			case r >= 0x80 && r <= 0x9f:
				rep = []byte{' '}
			case hiddenOnDisplay(r):
				rep = []byte{'?'}
			default:
				rep = []byte(s[i : i+n])
			}
		}
		if len(out)+len(rep) > maxBytes {
			break
		}
		out = append(out, rep...)
		i += size
	}
	return string(out)
}

// displayClean reports whether s is printable ASCII without backticks.
func displayClean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '`' {
			return false
		}
	}
	return true
}

// hiddenOnDisplay reports whether r changes how the text around it is
// shown or is not shown itself: format characters (Cf: bidi controls,
// zero-width characters, tags, the BOM) and line and paragraph separators.
func hiddenOnDisplay(r rune) bool {
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r) ||
		(r >= 0xE0000 && r <= 0xE007F)
}

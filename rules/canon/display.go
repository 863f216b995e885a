package canon

import "unicode/utf8"

// Display makes a string from a peer fit to show on one line of a terminal,
// a log or a YAML comment, so that neither the agent nor the server can
// write into an operator's screen or a file through it:
//
//   - C0 and C1 controls and DEL (ESC and CSI among them: the ANSI escapes
//     that recolour, hide or rewrite text) become a space, as in FreeText;
//   - a backtick becomes ', as in FreeText (it opens code spans and shell
//     substitutions where a line is pasted);
//   - bytes that are not valid UTF-8, bidi embedding, override and isolate
//     controls, line and paragraph separators, and every invisible code
//     point that Text would remove where it stands (zero-width characters
//     between ASCII letters, tag characters, stray variation selectors:
//     judged as Text judges them) become '?', so a reader sees that
//     something was there;
//   - the result is capped at maxBytes on a UTF-8 boundary, never inside
//     an emoji tag sequence, and a joiner the cap leaves at the end is
//     judged again.
//
// Everything else, printable text in any script with the joiners and
// selectors its spelling needs, is kept. Display is idempotent: every
// replacement is a printable ASCII byte.
func Display(s string, maxBytes int) string {
	if displayClean(s) && len(s) <= maxBytes {
		return s // the common case: no allocation
	}
	out := display(make([]byte, 0, min(len(s), maxBytes)), s, maxBytes)
	if t := bytesToString(out); len(t) > 0 && !displayStable(t) {
		// A joiner kept for what followed it, now cut off.
		out = display(make([]byte, 0, len(t)), t, maxBytes)
	}
	return string(out)
}

func display(out []byte, s string, maxBytes int) []byte {
	b := stringBytes(s)
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
			n, cl := classify(b, i)
			size = n
			switch {
			case cl == kept:
				rep = b[i : i+n]
			case cl == judged:
				if k, v := judge(b, i, n, prevRune(out)); v == keep {
					size, rep = k, b[i:i+k]
					break
				}
				rep = []byte{'?'}
			case n == 2 && c == 0xC2: // a C1 control
				rep = []byte{' '}
			default: // an invalid byte, a bidi control
				rep = []byte{'?'}
			}
		}
		if len(out)+len(rep) > maxBytes {
			break
		}
		out = append(out, rep...)
		i += size
	}
	return out
}

// displayStable reports whether the last code point of s, an output of
// display, would be kept again: a joiner is judged by what follows it.
func displayStable(s string) bool {
	b := stringBytes(s)
	r, n := utf8.DecodeLastRune(b)
	if r < utf8.RuneSelf || !contextual(r) {
		return true
	}
	_, v := judge(b, len(b)-n, n, prevRune(b[:len(b)-n]))
	return v == keep
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

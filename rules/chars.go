package rules

import (
	"unicode/utf8"
)

// ShellMetachars rejects values that could start a second command, a
// substitution or a redirection if the server passes them through a shell
// (exec("tool " + arg), subprocess with shell=True): ` $ ; | & < >, line
// breaks (LF, CR, NEL U+0085, LINE SEPARATOR U+2028, PARAGRAPH SEPARATOR
// U+2029) and NUL. It stops command injection (CWE-78) including the forms
// that an NFKC normaliser on the way turns back into ASCII: the fullwidth
// forms (U+FF40 ｀, U+FF04 ＄, U+FF1B ；, U+FF5C ｜, U+FF06 ＆, U+FF1C ＜,
// U+FF1E ＞), the small form variants (U+FE54 ﹔, U+FE69 ﹩, U+FE60 ﹠,
// U+FE64 ﹤, U+FE65 ﹥), GREEK QUESTION MARK U+037E and PRESENTATION FORM FOR
// VERTICAL SEMICOLON U+FE14, which NFKC maps to ';', and GREEK VARIA U+1FEF,
// which NFKC maps to '`': every character whose NFKC form holds a
// metacharacter (TestShellMetacharsCoversNFKC holds the list to
// golang.org/x/text's tables).
// A value that is not valid UTF-8 is rejected (an overlong encoding such as
// C0 BB is ';' to a lenient decoder).
//
// It is not a quoting scheme: quotes, spaces and glob characters pass, so a
// server that builds a shell command from words still needs its own quoting;
// dangerous_flags looks at each word.
type ShellMetachars struct{}

// NewShellMetachars returns the shell metacharacter check.
func NewShellMetachars() *ShellMetachars { return &ShellMetachars{} }

const shellRemediation = "Remove shell metacharacters (` $ ; | & < > and line breaks, also their fullwidth forms) from the value."

var asciiShellMeta = [utf8.RuneSelf]bool{
	'`': true, '$': true, ';': true, '|': true, '&': true, '<': true, '>': true,
	'\n': true, '\r': true, 0: true,
}

// Check rejects value if it holds a shell metacharacter or is not UTF-8.
func (*ShellMetachars) Check(value string) *Finding {
	for i := 0; i < len(value); {
		c := value[i]
		if c < utf8.RuneSelf {
			if asciiShellMeta[c] {
				return shellFinding()
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(value[i:])
		if r == utf8.RuneError && size == 1 {
			return reject(CodeShellMetachar, "value is not valid UTF-8; a lenient decoder may read a shell metacharacter in it", shellRemediation)
		}
		if isWideShellMeta(r) {
			return shellFinding()
		}
		i += size
	}
	return nil
}

func shellFinding() *Finding {
	return reject(CodeShellMetachar,
		"value contains a shell metacharacter or line break, which could run commands if the server passes it through a shell; not allowed from MCP input",
		shellRemediation)
}

// isWideShellMeta reports whether the non-ASCII rune r is a line break or
// folds (NFKC) to an ASCII shell metacharacter.
func isWideShellMeta(r rune) bool {
	switch r {
	case 0x0085, 0x2028, 0x2029:
		return true
	}
	a := compatASCII(r)
	return a < utf8.RuneSelf && asciiShellMeta[a]
}

// ControlChars rejects values holding characters that are invisible or that
// change how the text around them is displayed or parsed. It stops
// terminal-escape injection (ESC [ ... into logs and the user's terminal),
// log forging with line breaks, Trojan Source reordering (bidi embeddings,
// overrides, isolates and marks, CVE-2021-42574), homoglyph-free look-alikes
// built with zero-width characters, and ASCII smuggled invisibly to the model
// in Unicode tag characters. It rejects:
//
//   - C0 controls U+0000..U+001F, TAB, CR and LF included, and DEL U+007F;
//   - C1 controls U+0080..U+009F (NEL U+0085, CSI U+009B, ...);
//   - every format character (general category Cf): bidi controls
//     U+202A..U+202E, U+2066..U+2069, U+200E, U+200F, U+061C, zero-width
//     U+200B..U+200D, U+2060..U+2064, BOM U+FEFF, soft hyphen U+00AD, U+180E,
//     and the tag characters U+E0000..U+E007F (assigned or not);
//   - invisible characters outside Cf: COMBINING GRAPHEME JOINER U+034F, the
//     Hangul fillers and the Khmer inherent vowels;
//   - LINE SEPARATOR U+2028 and PARAGRAPH SEPARATOR U+2029;
//   - bytes that are not valid UTF-8.
//
// Variation selectors and private-use characters pass (emoji need the
// former). ZERO WIDTH NON-JOINER U+200C and ZERO WIDTH JOINER U+200D pass
// only between two letters of one joining script (Persian names need ZWNJ;
// see joinerInWord); elsewhere they are rejected, so emoji ZWJ sequences
// (family, profession emoji) are rejected: that is intended, this check is
// for identifiers, paths and arguments, not for free text.
type ControlChars struct{}

// NewControlChars returns the control and invisible character check.
func NewControlChars() *ControlChars { return &ControlChars{} }

const controlRemediation = "Remove control, bidi, zero-width and other invisible characters from the value."

// Check rejects value if it holds a forbidden character or is not UTF-8.
func (*ControlChars) Check(value string) *Finding {
	for i := 0; i < len(value); {
		if i += printableRun(value[i:]); i == len(value) {
			break
		}
		c := value[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7F {
				return controlFinding()
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(value[i:])
		if r == utf8.RuneError && size == 1 {
			return reject(CodeControlChars, "value is not valid UTF-8", controlRemediation)
		}
		if isForbiddenControl(r) && !((r == 0x200C || r == 0x200D) && joinerInWord(value, i, size)) {
			return controlFinding()
		}
		i += size
	}
	return nil
}

func controlFinding() *Finding {
	return reject(CodeControlChars,
		"value contains a control, bidi, zero-width or other invisible character; not allowed from MCP input",
		controlRemediation)
}

// isForbiddenControl reports whether the rune r is rejected by ControlChars.
func isForbiddenControl(r rune) bool {
	switch {
	case r < 0x20 || r >= 0x7F && r <= 0x9F:
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF, r >= 0x180B && r <= 0x180D, r == 0x180F:
		return false // variation selectors: emoji presentation and CJK variants
	}
	return isInvisible(r)
}

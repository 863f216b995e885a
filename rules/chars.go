package rules

import (
	"unicode/utf8"

	"github.com/mcpguard/mcpguard/rules/canon"
	"github.com/mcpguard/mcpguard/rules/codes"
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
			return reject(codes.ShellMetachar, "value is not valid UTF-8; a lenient decoder may read a shell metacharacter in it", shellRemediation)
		}
		if isWideShellMeta(r) {
			return shellFinding()
		}
		i += size
	}
	return nil
}

func shellFinding() *Finding {
	return reject(codes.ShellMetachar,
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
// overrides and isolates, CVE-2021-42574), homoglyph-free look-alikes
// built with zero-width characters, and ASCII smuggled invisibly to the
// model in Unicode tag characters or variation selectors. It rejects:
//
//   - every C0 control U+0000..U+001F, TAB, LF, CR and FF included, and
//     DEL U+007F: a value is one line (log forging, argument splitting);
//   - bytes that are not valid UTF-8;
//   - SOFT HYPHEN U+00AD and U+FEFF wherever they stand: text keeps them
//     where they hide nothing from a reader (a hyphenation point inside a
//     word, a byte order mark at the start), but in an identifier they
//     are an invisible difference (ad<SHY>min is not admin; IDNA and
//     NFKC_Casefold delete both);
//   - every code point the egress canonicaliser text removes or rewrites
//     where it stands (canon.Text): C1 controls, bidi embedding, override
//     and isolate controls, LINE SEPARATOR U+2028 and PARAGRAPH SEPARATOR
//     U+2029, and each invisible code point (canon.Invisible: zero-width
//     characters, word joiner, BOM, tag characters, Hangul fillers,
//     reserved default-ignorables such as U+2065 and U+E0080) that its
//     neighbours give no use.
//
// So a code point that text removes on the way out is refused on the way
// in, and one that text keeps is accepted but for the layout characters
// above (TAB, LF, CR, FF, SHY, BOM): one definition serves both
// directions. What text keeps, this
// check passes: ZWNJ and ZWJ in the words of the scripts that join or form
// conjuncts (Persian, Devanagari, Javanese...), emoji ZWJ sequences, a
// variation selector after a base that takes it, the tag sequence of an
// RGI subdivision flag, LRM/RLM/ALM where they change the display. Blank
// glyphs (spaces, BRAILLE PATTERN BLANK U+2800) pass: they are seen.
type ControlChars struct{}

// NewControlChars returns the control and invisible character check.
func NewControlChars() *ControlChars { return &ControlChars{} }

const controlRemediation = "Remove control, bidi, zero-width and other invisible characters from the value."

// Check rejects value if it holds a forbidden character or is not UTF-8.
func (*ControlChars) Check(value string) *Finding {
	plain := true // printable ASCII only: nothing text acts on
	for i := 0; i < len(value); {
		if i += printableRun(value[i:]); i == len(value) {
			break
		}
		if value[i] < utf8.RuneSelf { // a C0 control or DEL
			return controlFinding()
		}
		r, size := utf8.DecodeRuneInString(value[i:])
		if r == utf8.RuneError && size == 1 {
			return reject(codes.ControlChars, "value is not valid UTF-8", controlRemediation)
		}
		if r == 0xAD || r == 0xFEFF {
			return controlFinding()
		}
		plain = false
		i += size
	}
	if !plain && canon.Text(value) != value {
		return controlFinding()
	}
	return nil
}

func controlFinding() *Finding {
	return reject(codes.ControlChars,
		"value contains a control, bidi, zero-width or other invisible character; not allowed from MCP input",
		controlRemediation)
}

package rules

import (
	"unicode"
	"unicode/utf8"
)

// joiningScripts are the scripts whose spelling needs ZERO WIDTH NON-JOINER
// U+200C or ZERO WIDTH JOINER U+200D between two letters: Persian, Urdu and
// other Arabic-script languages (ZWNJ in می‌خواهم), Syriac, N'Ko, Mongolian,
// and the Indic scripts (ZWJ and ZWNJ choose conjunct or half forms).
var joiningScripts = []*unicode.RangeTable{
	unicode.Arabic, unicode.Syriac, unicode.Nko, unicode.Mongolian,
	unicode.Devanagari, unicode.Bengali, unicode.Gurmukhi, unicode.Gujarati,
	unicode.Oriya, unicode.Tamil, unicode.Telugu, unicode.Kannada,
	unicode.Malayalam, unicode.Sinhala,
}

// joinerInWord reports whether the joiner at s[i:i+size] stands between two
// letters or marks of one joining script, where it is part of the word's
// spelling and not a hidden separator: the same name without it is spelt
// differently, and it cannot hide text or split a word that a reader sees
// as one. Anywhere else (at an edge, next to ASCII, between scripts) it is
// invisible noise and control_chars rejects it.
func joinerInWord(s string, i, size int) bool {
	before, _ := utf8.DecodeLastRuneInString(s[:i])
	after, _ := utf8.DecodeRuneInString(s[i+size:])
	for _, script := range joiningScripts {
		if inScriptWord(before, script) && inScriptWord(after, script) {
			return true
		}
	}
	return false
}

func inScriptWord(r rune, script *unicode.RangeTable) bool {
	return unicode.Is(script, r) && (unicode.IsLetter(r) || unicode.IsMark(r))
}

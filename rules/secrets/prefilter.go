package secrets

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpguard/mcpguard/rules/lazyregexp"
	"github.com/mcpguard/mcpguard/rules/rawjson"
)

// confirmTail returns, for a confirmed rule (see confirmAfter), the part
// of its regex that starts where its flag does: every match of the rule
// is `curl ... <flag ...>`, and the part from the space before the flag
// on must match at one of the flag's occurrences for the whole to match.
// Running that part anchored at each occurrence rejects a curl command
// line whose -H carries no credential header without running the whole
// regex, which reads every line after the keyword. It panics when the
// generated rule no longer has that shape; the part compiles on its
// first use.
func confirmTail(id, expr string) func() *regexp.Regexp {
	const start = `[ \t\n\r](?:-`
	i := strings.Index(expr, start)
	if i < 0 {
		panic("secrets: confirmed rule " + id + " has no flag part")
	}
	head := expr[:i]
	depth := 0
	for j := 0; j < len(head); j++ {
		switch head[j] {
		case '\\':
			j++
		case '(':
			if !strings.HasPrefix(head[j:], "(?:") {
				panic("secrets: confirmed rule " + id + " has a group or flag before its flag part")
			}
			depth++
		case ')':
			depth--
		case '|':
			if depth == 0 {
				panic("secrets: confirmed rule " + id + " has an alternation before its flag part")
			}
		}
	}
	if depth != 0 {
		panic("secrets: confirmed rule " + id + " splits a group at its flag part")
	}
	tail := `^(?:` + expr[i:] + `)`
	return lazyregexp.New(tail)
}

// tailMatches reports whether r's confirm tail matches w at some
// occurrence of one of its confirm strings.
func (r *rule) tailMatches(w string) bool {
	for p := 0; ; p++ {
		k := indexAny(w[p:], r.confirm)
		if k < 0 {
			return false
		}
		p += k
		if r.tail().MatchString(w[p:]) {
			return true
		}
	}
}

// requiredWord is a word every match of a rule holds close after its
// keyword, compared in ASCII case folding: between the keyword and the
// word come at most chars characters of class (ASCII bytes, any case; a
// character outside ASCII that (?i) folds into the class is listed in
// foldRunes).
type requiredWord struct {
	word      string
	chars     int
	class     [256]bool
	foldRunes []rune
}

// requireAfter lists, for anchored rules whose regex is costly to fail,
// a word the match must hold near its start: a PEM header names a
// private key right after -----BEGIN and at most 100 characters of
// [ A-Z0-9_-] (-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY), so -----BEGIN
// PUBLIC KEY----- and certificates are passed at once. Under (?i), the
// class holds the long s (ſ) and the Kelvin sign (K) too.
var requireAfter = map[string]requiredWord{
	"private-key": {word: "private", chars: 100, class: asciiClass(" -_", "az", "09"), foldRunes: []rune{'\u017F', '\u212A'}},
}

func asciiClass(singles string, ranges ...string) (t [256]bool) {
	for i := 0; i < len(singles); i++ {
		t[singles[i]] = true
	}
	for _, r := range ranges {
		for c := r[0]; c <= r[1]; c++ {
			t[c] = true
			t[lowerByte[c]] = true
			if c >= 'a' && c <= 'z' {
				t[c-'a'+'A'] = true
			}
		}
	}
	return t
}

// checkRequired panics unless the regex holds req.word literally, every
// letter of the word folds only to ASCII (so an ASCII case-folded search
// finds every text the regex's (?i) matches), and the class with its
// fold runes is what the regex's class between keyword and word matches.
func checkRequired(id, expr string, req requiredWord) {
	if !strings.Contains(strings.ToLower(expr), req.word) {
		panic("secrets: rule " + id + " no longer holds " + req.word)
	}
	for _, c := range req.word {
		for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
			if f >= utf8.RuneSelf {
				panic("secrets: " + req.word + " folds to a non-ASCII letter")
			}
		}
	}
	if !strings.Contains(expr, "-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY") || !strings.HasPrefix(expr, "(?i)") {
		panic("secrets: rule " + id + " no longer has the header requireAfter describes")
	}
}

// hasWordNear reports whether req.word (lower case) starts in s after the
// keyword of n bytes at at and at most req.chars characters of its
// class, ASCII case-insensitively. A fold rune counts as a class
// character whether it is written in UTF-8 or as a JSON \u escape, so the
// check holds on raw JSON too (a \u00XX escape of an ASCII character is
// searched decoded by the caller).
func hasWordNear(s string, at, n int, req requiredWord) bool {
	i := at + n
	for chars := 0; ; chars++ {
		if len(s)-i >= len(req.word) && equalFoldLower(s[i:i+len(req.word)], req.word) {
			return true
		}
		if chars == req.chars || i >= len(s) {
			return false
		}
		if req.class[s[i]] {
			i++
			continue
		}
		w := foldRuneWidth(s[i:], req.foldRunes)
		if w == 0 {
			return false
		}
		i += w
	}
}

// foldRuneWidth returns the length of the fold rune s starts with, in
// UTF-8 or as a \u escape (any case of hex), or 0.
func foldRuneWidth(s string, runes []rune) int {
	if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
		if r, ok := rawjson.Hex4(s[2:6]); ok && slices.Contains(runes, r) {
			return 6
		}
		return 0
	}
	r, w := utf8.DecodeRuneInString(s)
	if r != utf8.RuneError && slices.Contains(runes, r) {
		return w
	}
	return 0
}

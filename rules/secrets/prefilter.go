package secrets

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// confirmTail returns, for a confirmed rule (see confirmAfter), the part
// of its regex that starts where its flag does: every match of the rule
// is `curl ... <flag ...>`, and the part from the space before the flag
// on must match at one of the flag's occurrences for the whole to match.
// Running that part anchored at each occurrence rejects a curl command
// line whose -H carries no credential header without running the whole
// regex, which reads every line after the keyword. It panics when the
// generated rule no longer has that shape.
func confirmTail(id, expr string) *regexp.Regexp {
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
	return regexp.MustCompile(`^(?:` + expr[i:] + `)`)
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
		if r.tail.MatchString(w[p:]) {
			return true
		}
	}
}

// requiredWord is a word every match of a rule holds close after its
// keyword, compared in ASCII case folding: within is how far past the
// keyword's start it may begin.
type requiredWord struct {
	word   string
	within int
}

// requireAfter lists, for anchored rules whose regex is costly to fail,
// a word the match must hold near its start: a PEM header names a
// private key within its first line (-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE
// KEY), so -----BEGIN PUBLIC KEY----- and certificates are passed at
// once. within counts every character of the {0,100} class as three
// bytes: under (?i), K matches the Kelvin sign.
var requireAfter = map[string]requiredWord{
	"private-key": {word: "private", within: len("-----BEGIN") + 3*100},
}

// checkRequired panics unless the regex holds req.word literally and
// every letter of it folds only to ASCII, so that an ASCII case-folded
// search finds every text the regex's (?i) matches.
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
}

// hasWordNear reports whether req.word (lower case) starts in
// s[at:at+req.within], ASCII case-insensitively.
func hasWordNear(s string, at int, req requiredWord) bool {
	end := min(len(s), at+req.within+len(req.word))
	w := s[at:end]
	for i := 0; i+len(req.word) <= len(w); i++ {
		if lowerByte[w[i]] == req.word[0] && equalFoldLower(w[i:i+len(req.word)], req.word) {
			return true
		}
	}
	return false
}

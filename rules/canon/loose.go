package canon

import (
	"strings"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/mcpguard/mcpguard/rules/skeleton"
)

// Fold is a name as a server that matches names loosely may read it:
// the text canonicaliser's reading, spaces trimmed, NFKC, case folded
// (SEND_EMAIL, "send_email " and ｓｅｎｄ_ｅｍａｉｌ are send_email).
func Fold(name string) string {
	return cases.Fold().String(read(name)) // a Caser is not safe to share
}

// read is a name as the text canonicaliser reads it, spaces trimmed, NFKC.
func read(name string) string {
	return norm.NFKC.String(strings.TrimSpace(Visible(Text(name))))
}

// Loose is the name as Fold reads it, case folded under the Unicode TS
// #39 confusable skeleton (skeleton.Folded: a Cyrillic е reads as e, a
// Cyrillic Н as H): two names with the same Loose may reach the same
// item. A withheld send_email must not be callable as SEND_EMAIL,
// Send_Email, "send_email " or send_еmail, and a poisoned tool renamed
// with a look-alike letter is not a new tool.
func Loose(name string) string {
	return skeleton.Folded(strings.TrimSpace(Visible(Text(name)))) // Folded reads NFKC
}

// LooseGlob is Loose for a path.Match pattern: each literal run reads as
// Loose reads a name, and the metacharacters (*, ?, [classes], \
// escapes) stay as written, so Loose(name) matches LooseGlob(pattern)
// when name is a look-alike of a name the pattern matches: a deny of
// git_* catches gіt_push with a Cyrillic і. Classes are kept as written
// (case folded); a bad pattern stays bad.
func LooseGlob(pattern string) string {
	p := read(pattern)
	var b, run strings.Builder
	flush := func() {
		for _, r := range skeleton.Folded(run.String()) {
			if strings.ContainsRune(`*?[\`, r) {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		run.Reset()
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*', '?':
			flush()
			b.WriteByte(c)
		case '\\':
			if i+1 < len(p) {
				i++
			}
			run.WriteByte(p[i])
		case '[':
			flush()
			j := i + 1
			if j < len(p) && p[j] == '^' {
				j++
			}
			for first := true; j < len(p) && (p[j] != ']' || first); j++ {
				if p[j] == '\\' {
					j++
				}
				first = false
			}
			b.WriteString(cases.Fold().String(p[i:min(j+1, len(p))]))
			i = j
		default:
			run.WriteByte(c)
		}
	}
	flush()
	return b.String()
}

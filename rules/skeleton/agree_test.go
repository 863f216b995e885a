package skeleton

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// TestFoldedAgreesWithLatin pins one definition of a look-alike for the
// two readers of the table, Latin (the lint of tool definitions) and
// Folded (deny, ask and labels matching of tool names): for every entry
// of confusables.txt whose prototype is ASCII, in both cases, a name
// with the look-alike that Latin reads as an ASCII name has that name's
// Folded; and every code point that Folded reads as one ASCII character
// Latin reads as that character too. Diacritics are where the two differ
// by design: Latin drops them from text, a name keeps them (sénd_email
// is not send_email), so code points with a combining mark in their NFKD
// are left out.
func TestFoldedAgreesWithLatin(t *testing.T) {
	t.Parallel()
	n := 0
	for _, m := range confusables {
		if m.r < utf8.RuneSelf || !printableASCII(m.proto) {
			continue
		}
		for _, r := range []rune{m.r, unicode.ToUpper(m.r), unicode.ToLower(m.r)} {
			if hasMark(r) {
				continue
			}
			name := "x" + string(r) + "_y"
			latin := Latin(name)
			if !printableASCII(latin) {
				continue
			}
			n++
			if Folded(name) != Folded(latin) {
				t.Errorf("%U %q (from %U): Latin reads %q, Folded %q, not %q", r, r, m.r, latin, Folded(name), Folded(latin))
			}
		}
	}
	if n < 1800 {
		t.Fatalf("%d entries with an ASCII prototype", n)
	}
	for r := rune(utf8.RuneSelf); r <= unicode.MaxRune; r += sweepStep {
		if !utf8.ValidRune(r) || hasMark(r) {
			continue
		}
		f := Folded(string(r))
		if len(f) != 1 || !printableASCII(f) {
			continue // β reads ß, which case folds to ss: not one look-alike
		}
		if l := Latin(string(r)); !printableASCII(l) || Folded(l) != f {
			t.Errorf("%U %q: Folded reads %q, Latin %q", r, r, f, l)
		}
	}
}

func hasMark(r rune) bool {
	return strings.ContainsFunc(norm.NFKD.String(string(r)), func(c rune) bool { return unicode.Is(unicode.Mn, c) })
}

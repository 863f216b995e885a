package skeleton

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// TestFoldedAgreesWithLatin pins one definition of a look-alike for the
// two readers of the table: for every entry of confusables.txt whose
// prototype is ASCII, a name with the look-alike reads under Folded (deny,
// ask and labels matching of tool names) as the name with the prototype,
// as it does under Latin (the lint of tool definitions); and every code
// point that Folded reads as printable ASCII is one that Latin reads as
// that ASCII too. Diacritics are where the two differ by design: Latin
// drops them from text, a name keeps them (sénd_email is not send_email),
// so code points with a combining mark in their NFKD are left out.
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
	for r := rune(utf8.RuneSelf); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) || hasMark(r) {
			continue
		}
		f := Folded(string(r))
		if !printableASCII(f) {
			continue
		}
		if l := Folded(Latin(string(r))); l != f {
			t.Errorf("%U %q: Folded reads %q, Latin %q", r, r, f, l)
		}
	}
}

func hasMark(r rune) bool {
	return strings.ContainsFunc(norm.NFKD.String(string(r)), func(c rune) bool { return unicode.Is(unicode.Mn, c) })
}

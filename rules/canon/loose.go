package canon

import (
	"strings"

	"github.com/mtibben/confusables"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Fold is a name as a server that matches names loosely may read it:
// the text canonicaliser's reading, spaces trimmed, NFKC, case folded
// (SEND_EMAIL, "send_email " and ｓｅｎｄ_ｅｍａｉｌ are send_email).
func Fold(name string) string {
	s := strings.TrimSpace(Visible(Text(name)))
	return cases.Fold().String(norm.NFKC.String(s)) // a Caser is not safe to share
}

// Loose is Fold and then the Unicode TS #39 confusable skeleton (a
// Cyrillic е reads as e): two names with the same Loose may reach the
// same item. A withheld send_email must not be callable as SEND_EMAIL,
// Send_Email, "send_email " or send_еmail, and a poisoned tool renamed
// with a look-alike letter is not a new tool.
func Loose(name string) string {
	return cases.Fold().String(confusables.Skeleton(Fold(name)))
}

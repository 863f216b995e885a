package canon

import (
	"strings"

	"github.com/mtibben/confusables"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

var folder = cases.Fold()

// Loose is the name a server that matches names loosely may resolve
// a call to: the text canonicaliser's reading, spaces trimmed, NFKC,
// case folded, and the Unicode TS #39 confusable skeleton (a Cyrillic е
// reads as e). Two names with the same Loose may reach the same item:
// a withheld send_email must not be callable as SEND_EMAIL, Send_Email,
// "send_email " or send_еmail, and a poisoned tool renamed with a
// look-alike letter is not a new tool.
func Loose(name string) string {
	s := strings.TrimSpace(Visible(Text(name)))
	s = folder.String(norm.NFKC.String(s))
	return folder.String(confusables.Skeleton(s))
}

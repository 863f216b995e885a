// LEAD'S TEMPORARY STUB so that the policy engine builds before the real package lands.
// Whoever writes the real package canon: DELETE THIS FILE (git rm canon/zz_lead_stub.go) in your first commit.

package canon

import (
	"fmt"
	"strings"
)

type Kind string

const (
	KindText     Kind = "text"
	KindFreeText Kind = "free_text"
	KindPath     Kind = "path"
)

func ParseKind(s string) (Kind, error) {
	switch Kind(s) {
	case KindText, KindFreeText, KindPath:
		return Kind(s), nil
	}
	return "", fmt.Errorf("unknown canonicaliser %q", s)
}

func bad(r rune) bool {
	return (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || (r >= 0x7f && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || (r >= 0xe0000 && r <= 0xe007f)
}

func Text(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && !(s[j] >= 0x40 && s[j] <= 0x7e) {
				j++
			}
			i = j
			continue
		}
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == ']' {
			j := i + 2
			for j < len(s) && s[j] != 7 {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	out := strings.Map(func(r rune) rune {
		if bad(r) {
			return -1
		}
		return r
	}, b.String())
	return out
}
func NeedsText(b []byte) bool { return Text(string(b)) != string(b) }
func FreeText(s string, max int) string {
	s = Text(s)
	s = strings.Map(func(r rune) rune {
		if r < 0x20 {
			return ' '
		}
		if r == '`' {
			return '\''
		}
		return r
	}, s)
	if len(s) > max {
		s = s[:max]
	}
	return s
}
func Path(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 128 && (r == '.' || r == '_' || r == '/' || r == '-' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')) {
			return r
		}
		return '?'
	}, s)
}

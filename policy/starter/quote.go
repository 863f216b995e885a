package starter

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/mcpguard/mcpguard/rules/canon"
	"github.com/mcpguard/mcpguard/rules/lazyregexp"
)

// plainScalar is text YAML reads as the same string without quotes.
var plainScalar = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_./-]*$`)

// yamlWords are plain scalars YAML 1.1 readers turn into booleans or null.
var yamlWords = set("true", "false", "yes", "no", "on", "off", "y", "n", "null")

// quote writes s as a YAML scalar that reads back as exactly s: plain when
// that is unambiguous, else double-quoted with everything outside
// printable ASCII escaped, so no server-chosen byte can end a line or a
// flow collection.
func quote(s string) string {
	if plainScalar().MatchString(s) && !yamlWords[strings.ToLower(s)] {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			fmt.Fprintf(&b, `\U%08X`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// sanitize makes server text fit for a one-line comment: canon.Display
// (controls become spaces, invisible and format characters '?', backticks
// '), runs of spaces collapsed, cut at max runes.
func sanitize(s string, max int) string {
	s = canon.Display(s, len(s))
	var b strings.Builder
	n := 0
	space := false
	for _, r := range s {
		if r == ' ' || !unicode.IsPrint(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			n++
			space = false
		}
		if n >= max {
			b.WriteString("...")
			break
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

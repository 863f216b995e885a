package policy

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

func utf8Valid(s string) bool { return utf8.ValidString(s) }

func appendEscaped(b []byte, r rune) []byte {
	if r >= 0x10000 {
		hi, lo := utf16.EncodeRune(r)
		return fmt.Appendf(b, `\u%04x\u%04X`, hi, lo)
	}
	return fmt.Appendf(b, `\u%04x`, r)
}

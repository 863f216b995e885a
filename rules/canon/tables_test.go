package canon

import (
	"testing"
	"unicode"
)

// The generated tables must describe the same Unicode as the standard
// unicode package, whose scripts and categories judge reads beside them:
// when Go moves to a new Unicode version, run go generate with that
// version's UCD.
func TestTablesMatchUnicodeVersion(t *testing.T) {
	if ucdVersion != unicode.Version {
		t.Fatalf("tables.go is from UCD %s, the unicode package is %s: regenerate (go generate ./rules/canon)", ucdVersion, unicode.Version)
	}
}

// Invisible, read from DerivedCoreProperties.txt, must be the property the
// unicode package's own tables derive, for every code point.
func TestInvisibleIsDerivedDefaultIgnorable(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if got, want := Invisible(r), derivedInvisible(r); got != want {
			t.Errorf("Invisible(%U) = %v, want %v", r, got, want)
		}
	}
	for _, r := range []rune{0x2065, 0xFFF0, 0xFFF8, 0xE0080, 0xE00FF, 0xE0FFF} {
		if !Invisible(r) {
			t.Errorf("reserved default-ignorable %U is not invisible", r)
		}
	}
	for _, r := range []rune{' ', 0x3000, 0x2800, 0x1D159, 0x0600, 0x13430} {
		if Invisible(r) {
			t.Errorf("%U has a glyph and must not be invisible", r)
		}
	}
}

package rawjson

import (
	"strconv"
	"testing"
)

// TestHex4 holds Hex4 to strconv over every four-byte string of hex
// digits and a few that are not.
func TestHex4(t *testing.T) {
	const digits = "0123456789abcdefABCDEFgG/:@`"
	for _, a := range digits {
		for _, b := range digits {
			for _, c := range digits {
				for _, d := range digits {
					s := string([]rune{a, b, c, d})
					want, err := strconv.ParseUint(s, 16, 32)
					got, ok := Hex4(s)
					if ok != (err == nil) || ok && got != rune(want) {
						t.Fatalf("Hex4(%q) = %d, %v; strconv: %d, %v", s, got, ok, want, err)
					}
					if gotb, okb := Hex4([]byte(s)); gotb != got || okb != ok {
						t.Fatalf("Hex4 of bytes and string differ on %q", s)
					}
				}
			}
		}
	}
	if _, ok := Hex4("abc"); ok {
		t.Error("Hex4 read past a short input")
	}
}

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:         "plain",
		`a\"b\\c\/d`:    `a"b\c/d`,
		`\b\f\n\r\t`:    "\b\f\n\r\t",
		`\u00e9\u6771`:  "é東",
		`\ud83d\ude00`:  "😀",
		`cut \u00`:      `cut \u00`,
		`bad \q escape`: `bad \q escape`,
		`trailing \`:    `trailing \`,
	} {
		if got := Unescape(in); got != want {
			t.Errorf("Unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

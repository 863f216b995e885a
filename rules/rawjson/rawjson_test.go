package rawjson

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/go-json-experiment/json/jsontext"
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

func TestRune(t *testing.T) {
	for _, tc := range []struct {
		in string
		r  rune
		n  int
		ok bool
	}{
		{`\u0041`, 'A', 6, true},
		{`\u00e9rest`, 'é', 6, true},
		{`\ud83d\ude00`, '😀', 12, true},
		{`\uD83D\uDE00x`, '😀', 12, true},
		{`\ud83d`, 0xD83D, 6, true},        // lone high: the caller decides
		{`\ude00\ud83d`, 0xDE00, 6, true},  // low then high: no pair
		{`\ud83d\u0041`, 0xD83D, 6, true},  // high then a letter
		{`\ud83d\ud83d`, 0xD83D, 6, true},  // two highs
		{`\ud83d\uzzzz`, 0xD83D, 6, true},  // broken second escape: read on its own
		{`\ud83d\\ude00`, 0xD83D, 6, true}, // an escaped backslash, not an escape
		{`\u00`, 0, 0, false},
		{`\uzzzz`, 0, 0, false},
	} {
		r, n, ok := Rune(tc.in)
		if r != tc.r || n != tc.n || ok != tc.ok {
			t.Errorf("Rune(%q) = %U, %d, %v; want %U, %d, %v", tc.in, r, n, ok, tc.r, tc.n, tc.ok)
		}
		if rb, nb, okb := Rune([]byte(tc.in)); rb != r || nb != n || okb != ok {
			t.Errorf("Rune of bytes and string differ on %q", tc.in)
		}
	}
}

// FuzzRune holds Rune to a strict JSON decoder: a code point it reads is
// the one the decoder reads from the same escapes, and a lone surrogate it
// returns is one the strict decoder refuses.
func FuzzRune(f *testing.F) {
	for _, s := range []string{`\u0041`, `\ud83d\ude00`, `\ud83d`, `\ud83d\u0041`, `\ude00\ud83d`, `\uD800\uDFFF`, `\u00`, `\uzzzz`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, n, ok := Rune(s)
		if !ok {
			return
		}
		got, err := jsontext.AppendUnquote(nil, `"`+s[:n]+`"`)
		if utf16.IsSurrogate(r) {
			if err == nil {
				t.Fatalf("Rune(%q) = lone %U, but the strict decoder reads %q", s, r, got)
			}
			return
		}
		if err != nil || string(got) != string(r) {
			t.Fatalf("Rune(%q) = %U in %d bytes; strict decoder: %q, %v", s, r, n, got, err)
		}
	})
}

// TestMayHoldName: a name spelled out or with escaped letters, and not
// one that an escape of another character or a broken escape would be.
func TestMayHoldName(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"icons":[]}`:        true,
		`{"icon\u0073":[]}`:   true,
		`{"\u0069cons":[]}`:   true,
		`{"caf\u00e9":"x"}`:   false,
		`{"a":"\u00"}`:        false,
		`{"text":"plain"}`:    false,
		`{"x":"\u006"}`:       false,
		`{"i\u0063ons":[1]}`:  true,
		`{"uri":"\u2028"}`:    true,
		`{"other":"\u2028i"}`: false,
	} {
		esc := ScanEscapes([]byte(raw))
		if got := MayHoldName([]byte(raw), "icons", esc) || strings.Contains(raw, "uri") && MayHoldName([]byte(raw), "uri", esc); got != want {
			t.Errorf("%s: %v, want %v", raw, got, want)
		}
	}
}

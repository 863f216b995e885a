package codepoints

import (
	"slices"
	"testing"
	"unicode"
)

// TestSample: the sample is ordered, skips only surrogates, leaves no
// gap wider than Stride, and holds every code point of the short
// stretches the judges single out (joiners and marks, reserved
// default-ignorables, reserved tags, interlinear annotation).
func TestSample(t *testing.T) {
	cps := Sample()
	if cps[0] != 0 || cps[len(cps)-1] != unicode.MaxRune {
		t.Errorf("from %U to %U", cps[0], cps[len(cps)-1])
	}
	for i := 1; i < len(cps); i++ {
		prev, r := cps[i-1], cps[i]
		if prev == 0xD7FF && r == 0xE000 {
			continue
		}
		if r <= prev || r-prev > Stride {
			t.Fatalf("%U after %U", r, prev)
		}
	}
	for _, rg := range [][2]rune{{0xAD, 0xAD}, {0x34F, 0x34F}, {0x61C, 0x61C}, {0x180B, 0x180F}, {0x200B, 0x200F},
		{0x2028, 0x202E}, {0x2060, 0x206F}, {0x3164, 0x3164}, {0xFE00, 0xFE0F}, {0xFEFF, 0xFEFF}, {0xFFF0, 0xFFFB},
		{0xE0000, 0xE01EF}} {
		for r := rg[0]; r <= rg[1]; r++ {
			if _, found := slices.BinarySearch(cps, r); !found {
				t.Errorf("%U is not tried", r)
			}
		}
	}
}

// Package codepoints is for the tests that hold two judges of text
// (control_chars and text, Display and Text) to one verdict for every code
// point: it gives them the code points that stand for all the others.
package codepoints

import (
	"slices"
	"unicode"

	"github.com/mcpguard/mcpguard/rules/canon"
)

// Run is the longest stretch of code points with the same properties that
// Sample tries whole; a longer one is tried at both ends and every
// Stride code points between.
const (
	Run    = 256
	Stride = 61
)

// Sample returns, in order, the code points (surrogates excluded) that
// stand for all of them: the Unicode properties canon's judges can read of
// a code point (script, general category, every binary property of the
// unicode package, canon.Invisible and canon.Suspect, and the UTF-8 length
// and lead byte of its encoding) split the code space into stretches on
// which they are all constant. Every code point of a stretch shorter than
// Run is returned, so single code points a judge names (ZWJ, LRM, the tag
// range) are all tried; of a longer stretch (unassigned planes, private
// use, ideographs, Hangul syllables) both ends and every Stride code
// points between. A judge that treats one code point of a long uniform
// stretch apart from its neighbours, and from every property above, can
// pass untried.
func Sample() []rune {
	cuts := []rune{0, 0x80, 0x800, 0xD800, 0xE000, 0x10000, unicode.MaxRune + 1}
	for r := rune(0x80); r < 0x800; r += 0x40 {
		cuts = append(cuts, r)
	}
	for r := rune(0x800); r < 0x10000; r += 0x1000 {
		cuts = append(cuts, r)
	}
	for r := rune(0x10000); r <= unicode.MaxRune; r += 0x40000 {
		cuts = append(cuts, r)
	}
	for _, tables := range []map[string]*unicode.RangeTable{unicode.Scripts, unicode.Categories, unicode.Properties} {
		for _, t := range tables {
			for _, rg := range t.R16 {
				cuts = addRange(cuts, rune(rg.Lo), rune(rg.Hi), rune(rg.Stride))
			}
			for _, rg := range t.R32 {
				cuts = addRange(cuts, rune(rg.Lo), rune(rg.Hi), rune(rg.Stride))
			}
		}
	}
	inv, sus := false, false
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if i, s := canon.Invisible(r), canon.Suspect(r); i != inv || s != sus {
			cuts = append(cuts, r)
			inv, sus = i, s
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	var out []rune
	for i := 0; i+1 < len(cuts); i++ {
		lo, hi := cuts[i], cuts[i+1]-1
		if lo >= 0xD800 && hi <= 0xDFFF {
			continue
		}
		if hi-lo < Run {
			for r := lo; r <= hi; r++ {
				out = append(out, r)
			}
			continue
		}
		for r := lo; r < hi; r += Stride {
			out = append(out, r)
		}
		out = append(out, hi)
	}
	return out
}

// addRange adds the cuts of lo..hi by stride: the range's ends, or each
// code point of it and the one after, when the stride skips some.
func addRange(cuts []rune, lo, hi, stride rune) []rune {
	if stride == 1 {
		return append(cuts, lo, hi+1)
	}
	for r := lo; r <= hi; r += stride {
		cuts = append(cuts, r, r+1)
	}
	return cuts
}

package canon

import (
	"sort"
	"sync"
	"unicode"
	"unicode/utf8"
)

//go:generate go run gen_tables.go

// This file holds how Text judges invisible code points: by the code
// points around them, so that every legitimate use survives byte-identical
// and a hidden payload does not.

// Invisible reports whether r is invisible: a default-ignorable code point
// (Unicode's Default_Ignorable_Code_Point: format controls, joiners, bidi
// controls, variation selectors, tag characters, Hangul fillers, Khmer
// inherent vowels and the like, assigned or reserved) or an interlinear
// annotation character (U+FFF9–U+FFFB): a code point a renderer shows as
// nothing. It is the one definition of "invisible" in mcpguard: Text
// judges these code points by context (judge), and the ingress check
// control_chars, Display and the description linter read the same table,
// generated from the Unicode Character Database (tables.go) for
// unicode.Version.
//
// Blank-looking code points that Unicode gives a glyph (spaces, BRAILLE
// PATTERN BLANK U+2800) are not invisible: like a space, they show that
// something is there.
func Invisible(r rune) bool {
	if r < 0x10000 {
		return r >= 0 && invisibleBMP[r>>6]&(1<<(r&63)) != 0
	}
	for _, rg := range invisibleSupplementary {
		if r >= rg.lo && r <= rg.hi {
			return true
		}
	}
	return false
}

// Visible is the name a reader sees in s: Text(s) with every invisible
// code point removed. Egress rules and tool names are matched on it, so a
// server cannot dodge a rule or a deny with a name that differs from the
// one the client reads only by something nobody sees (file\u200b for file).
// It returns s itself when s is plain.
func Visible(s string) string {
	t := Text(s)
	for i, r := range t {
		if r >= 0xAD && Invisible(r) {
			b := make([]byte, 0, len(t))
			b = append(b, t[:i]...)
			for _, r := range t[i:] {
				if !Invisible(r) {
					b = utf8.AppendRune(b, r)
				}
			}
			return string(b)
		}
	}
	return t
}

type runeRange struct{ lo, hi rune }

var (
	invisibleBMP           [1 << 10]uint64
	judgedBits             [1 << 10]uint64 // invisibleBMP, U+2028 and U+2029
	invisibleSupplementary []runeRange
	// contextLead marks the lead bytes that can start a code point
	// Text judges in context (an invisible one, U+2028, U+2029).
	contextLead [256]bool
)

func init() {
	mark := func(r rune) {
		var buf [utf8.UTFMax]byte
		utf8.EncodeRune(buf[:], r)
		contextLead[buf[0]] = true
		if r < 0x10000 {
			invisibleBMP[r>>6] |= 1 << (r & 63)
			return
		}
		if n := len(invisibleSupplementary); n > 0 && invisibleSupplementary[n-1].hi == r-1 {
			invisibleSupplementary[n-1].hi = r
			return
		}
		invisibleSupplementary = append(invisibleSupplementary, runeRange{r, r})
	}
	for _, rg := range invisibleTable.R16 {
		for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
			mark(r)
		}
	}
	for _, rg := range invisibleTable.R32 {
		for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
			mark(r)
		}
	}
	contextLead[0xE2] = true // U+2028, U+2029
	judgedBits = invisibleBMP
	judgedBits[0x2028>>6] |= 1<<(0x2028&63) | 1<<(0x2029&63)
}

// layout reports whether the C0 control c is one Text keeps: tab, LF, CR
// and FORM FEED (a page break in source files: every terminal moves down
// a line on it, no renderer hides text with it).
func layout(c byte) bool { return c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// Suspect reports whether Text may remove or rewrite r, depending on
// where it stands: a C0 control other than tab, LF, CR and FF, DEL, a C1
// control, or an invisible code point (bidi controls and tags included),
// or U+2028/2029. A string without one is left as it is, escape sequences
// aside (they start with ESC or a C1 control).
func Suspect(r rune) bool {
	switch {
	case r < 0x20:
		return !layout(byte(r))
	case r >= 0x7F && r <= 0x9F:
		return true
	}
	return contextual(r)
}

// judgedBMP is contextual for r < 0x10000.
func judgedBMP(r rune) bool { return judgedBits[r>>6]&(1<<(r&63)) != 0 }

// contextual reports whether Text judges r by its neighbours.
func contextual(r rune) bool { return r == 0x2028 || r == 0x2029 || Invisible(r) }

// Scripts, for judging joiners and marks by the letters around them: every
// range of unicode.Scripts in one sorted slice, searched in O(log n).
type scriptRange struct {
	lo, hi rune
	script uint8
}

// scriptTable is what judge reads of scripts: the ranges, and the
// indexes and sets of the scripts it names.
type scriptTable struct {
	ranges             []scriptRange
	common, inherited  uint8
	joining, spaceless [4]uint64 // joiningScripts, spacelessScripts
}

// scripts is built on first use: only a code point judged in context
// needs it, and most texts have none, so a process that never sees one
// does not pay for it at start.
var scripts = sync.OnceValue(func() *scriptTable {
	names := make([]string, 0, len(unicode.Scripts))
	for name := range unicode.Scripts {
		names = append(names, name)
	}
	sort.Strings(names)
	t := &scriptTable{}
	index := make(map[string]uint8, len(names))
	for i, name := range names {
		id := uint8(i + 1) // 0: no script
		index[name] = id
		rt := unicode.Scripts[name]
		for _, rg := range rt.R16 {
			if rg.Stride == 1 {
				t.ranges = append(t.ranges, scriptRange{rune(rg.Lo), rune(rg.Hi), id})
				continue
			}
			for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
				t.ranges = append(t.ranges, scriptRange{r, r, id})
			}
		}
		for _, rg := range rt.R32 {
			if rg.Stride == 1 {
				t.ranges = append(t.ranges, scriptRange{rune(rg.Lo), rune(rg.Hi), id})
				continue
			}
			for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
				t.ranges = append(t.ranges, scriptRange{r, r, id})
			}
		}
	}
	sort.Slice(t.ranges, func(i, j int) bool { return t.ranges[i].lo < t.ranges[j].lo })
	set := func(names []string) (set [4]uint64) {
		for _, n := range names {
			id, ok := index[n]
			if !ok {
				panic("canon: unknown script " + n + " in the generated tables")
			}
			set[id>>6] |= 1 << (id & 63)
		}
		return set
	}
	t.common, t.inherited = index["Common"], index["Inherited"]
	t.joining, t.spaceless = set(joiningScripts), set(spacelessScripts)
	return t
})

// scriptOf returns the index of r's script, 0 for none.
func scriptOf(r rune) uint8 {
	ranges := scripts().ranges
	i := sort.Search(len(ranges), func(i int) bool { return ranges[i].hi >= r })
	if i < len(ranges) && ranges[i].lo <= r {
		return ranges[i].script
	}
	return 0
}

func inSet(set *[4]uint64, id uint8) bool { return id != 0 && set[id>>6]&(1<<(id&63)) != 0 }

// verdict is what Text does with a code point judged in context.
type verdict uint8

const (
	keep verdict = iota
	drop
	newline // U+2028, U+2029
)

const (
	noRune = -1 // the start or the end of the text

	zwsp = 0x200B
	zwnj = 0x200C
	zwj  = 0x200D
	lrm  = 0x200E
	rlm  = 0x200F
	alm  = 0x061C
	cgj  = 0x034F
	shy  = 0x00AD
	bom  = 0xFEFF
	vs16 = 0xFE0F
	// waving black flag, the base of the RGI subdivision flags
	blackFlag = 0x1F3F4
	cancelTag = 0xE007F
)

// judge decides the contextual code point r that starts at b[i] (size
// bytes): prev is the code point Text last kept before it (noRune at the
// start), the next is read from b. It returns how many bytes the decision
// covers (a whole RGI tag sequence is kept at once).
//
// The rules keep exactly the uses Unicode defines and nothing beside them,
// so that no two invisible code points stand together except inside an
// emoji sequence:
//   - ZWJ inside an emoji ZWJ sequence (after an Extended_Pictographic,
//     a skin tone, VS16 or a flag's cancel tag, before an
//     Extended_Pictographic); ZWJ and ZWNJ after a letter or mark of a
//     script they act on (joiningScripts), before a letter or mark of
//     the same script or before what ends a word (between two scripts a
//     joiner changes nothing a reader sees); U+200B likewise in the
//     scripts written without spaces (spacelessScripts);
//   - a variation selector right after a base that takes it
//     (variationBases); an ideographic one (U+E0100–U+E01EF) right after a
//     unified ideograph;
//   - tag characters only as the tag sequence of an RGI subdivision flag,
//     right after the black flag;
//   - LRM, RLM and ALM unless between two letters of one script, where
//     they change nothing;
//   - CGJ between a letter or mark and a mark;
//   - an invisible letter of a script (Hangul fillers, Khmer inherent
//     vowels, the Mongolian vowel separator) next to a visible letter or
//     mark of its script;
//   - SOFT HYPHEN inside a word: after a letter or mark, before a letter
//     of the same script (a hyphenation point; it hides nothing: the
//     reader sees the word whole, and the linter and the secret scanner
//     read words without it);
//   - U+FEFF at the start of the text, where it is a byte order mark;
//   - U+2028 and U+2029 become a newline; every other invisible code point
//     (word joiner, U+FEFF inside text, invisible operators, deprecated
//     format characters, interlinear annotation, ...) is removed.
//
// A rule that looks at the next code point keeps only before one that
// Text keeps as it is, so judging again after a rewrite gives the same
// answer (idempotence).
func judge(b []byte, i, size int, prev rune) (int, verdict) {
	r, _ := utf8.DecodeRune(b[i:])
	switch {
	case r == 0x2028 || r == 0x2029:
		return size, newline
	case r >= 0xE0000 && r <= 0xE007F:
		if prev == blackFlag {
			if n := rgiTagSpec(b[i:]); n > 0 {
				return n, keep
			}
		}
		return size, drop
	case r >= 0xE0100 && r <= 0xE01EF:
		return size, keepIf(prev >= 0 && unicode.Is(unicode.Unified_Ideograph, prev))
	}
	if bit, ok := selectorBit(r); ok {
		return size, keepIf(takesSelector(prev, bit))
	}
	next := nextRune(b, i+size)
	switch r {
	case zwj:
		if emojiJoins(prev) && next >= 0 && unicode.Is(extendedPictographic, next) {
			return size, keep
		}
		return size, keepIf(joins(prev, next, &scripts().joining))
	case zwnj:
		return size, keepIf(joins(prev, next, &scripts().joining))
	case zwsp:
		return size, keepIf(joins(prev, next, &scripts().spaceless))
	case lrm, rlm, alm:
		if prev >= 0 && Invisible(prev) || !stable(next) {
			return size, drop
		}
		return size, keepIf(!(visibleLetterOrMark(prev) && visibleLetterOrMark(next) && scriptOf(prev) == scriptOf(next)))
	case cgj:
		return size, keepIf(visibleLetterOrMark(prev) && visibleLetterOrMark(next) && unicode.IsMark(next))
	case shy:
		return size, keepIf(inWord(prev, next))
	case bom:
		return size, keepIf(prev == noRune && stable(next))
	}
	if s := scriptOf(r); s != 0 && s != scripts().common && s != scripts().inherited {
		if prev >= 0 && Invisible(prev) || !stable(next) {
			return size, drop
		}
		return size, keepIf(visibleLetterOrMark(prev) && scriptOf(prev) == s || visibleLetterOrMark(next) && scriptOf(next) == s)
	}
	return size, drop
}

func keepIf(ok bool) verdict {
	if ok {
		return keep
	}
	return drop
}

// nextRune is the code point at b[j]: noRune at the end, U+FFFD for an
// invalid byte (which is what Text writes for it).
func nextRune(b []byte, j int) rune {
	if j >= len(b) {
		return noRune
	}
	r, _ := utf8.DecodeRune(b[j:])
	return r
}

// stable reports whether Text keeps r as it is wherever it stands (or r is
// the end of the text): not a control, not invisible, not U+2028/2029.
func stable(r rune) bool {
	switch {
	case r == noRune:
		return true
	case r < 0x20:
		return layout(byte(r))
	case r >= 0x7F && r <= 0x9F:
		return false
	}
	return !contextual(r)
}

// inWord: prev and next are letters of one word, next a letter of prev's
// script (or of the letter a mark prev sits on).
func inWord(prev, next rune) bool {
	if !visibleLetterOrMark(prev) || !visibleLetterOrMark(next) || !unicode.IsLetter(next) {
		return false
	}
	return unicode.IsMark(prev) || scriptOf(prev) == scriptOf(next)
}

func visibleLetterOrMark(r rune) bool {
	return r >= 0 && (unicode.IsLetter(r) || unicode.IsMark(r)) && !Invisible(r)
}

// joins: a joiner after a letter or mark of a script in set, before a
// letter or mark of the same script or before a code point that is not a
// letter and that Text keeps (a space, punctuation, the end).
func joins(prev, next rune, set *[4]uint64) bool {
	if !visibleLetterOrMark(prev) || !inSet(set, scriptOf(prev)) {
		return false
	}
	if visibleLetterOrMark(next) {
		return scriptOf(next) == scriptOf(prev)
	}
	return next == noRune || stable(next) && !unicode.IsLetter(next) && !unicode.IsMark(next)
}

func emojiJoins(prev rune) bool {
	return prev == vs16 || prev == cancelTag || prev >= 0 && (unicode.Is(extendedPictographic, prev) || unicode.Is(emojiModifier, prev))
}

// selectorBit is the bit of a variation selector in variationBase.selectors.
func selectorBit(r rune) (uint, bool) {
	switch {
	case r >= 0xFE00 && r <= 0xFE0F:
		return uint(r - 0xFE00), true
	case r >= 0x180B && r <= 0x180D:
		return uint(16 + r - 0x180B), true
	case r == 0x180F:
		return 19, true
	}
	return 0, false
}

func takesSelector(base rune, bit uint) bool {
	i := sort.Search(len(variationBases), func(i int) bool { return variationBases[i].base >= base })
	return i < len(variationBases) && variationBases[i].base == base && variationBases[i].selectors&(1<<bit) != 0
}

// rgiTagSpec returns the length of the RGI tag sequence (tag characters
// through the cancel tag) that b starts with, or 0.
func rgiTagSpec(b []byte) int {
	for _, seq := range rgiTagSequences {
		spec := seq[len(string(rune(blackFlag))):]
		if len(b) >= len(spec) && string(b[:len(spec)]) == spec {
			return len(spec)
		}
	}
	return 0
}

// prevRune is the code point that ends b, or noRune.
func prevRune(b []byte) rune {
	if len(b) == 0 {
		return noRune
	}
	r, _ := utf8.DecodeLastRune(b)
	return r
}

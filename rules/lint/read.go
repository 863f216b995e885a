package lint

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/mcpguard/mcpguard/rules/canon"
	"github.com/mcpguard/mcpguard/rules/skeleton"
)

// A reading is what a model reads in a definition, as the patterns match
// it: every string of the definition in order, each one normalised, with
// the text its markup hides and its encoded payloads decoded appended, so
// that a directive split across fields, or behind a disguise, is seen.
//
// Disguises undone (each one is a published way to pass a filter that
// matches bytes):
//   - escapes, controls, tag characters, bidi controls and every invisible
//     code point (canon.Visible): ig\u200bnore reads ignore;
//   - compatibility forms (NFKC): fullwidth, mathematical and circled
//     letters, ligatures;
//   - look-alike letters (skeleton.Latin, Unicode's confusables):
//     Cyrillic "Іgnоrе" reads ignore;
//   - every space and blank look-alike (NBSP, U+3000, U+2800 braille
//     blank, U+3164 ...) and every line break read as one space, so padding
//     neither hides nor splits;
//   - combining marks stuffed into words, diacritics (Latin reading only);
//   - markup: markdown emphasis and links, HTML tags, entities and
//     comments, link titles, reference definitions ([//]: # (...)),
//     footnotes, hidden HTML elements (markup.go);
//   - base64 (short or in chunks), hex, \x, %xx and \u escapes (decode.go).
type reading struct {
	latin, native strings.Builder
	segs          []segment
	scripts       uint8 // the native scripts the text has letters of
}

// segment is one string's share of both texts.
type segment struct {
	field               string
	ctx                 Context
	decoded             bool // a payload decoded from the field's text
	latinEnd, nativeEnd int
}

// maxReadBytes bounds the text one reading holds; past it, strings are
// still checked for hidden text and size, not read.
const maxReadBytes = 1 << 20

// add reads s, the string at field, into the reading.
func (r *reading) add(field, s string, ctx Context) {
	if r.latin.Len() > maxReadBytes {
		return
	}
	visible := canon.Visible(s)
	text := visible
	if hidden := markupText(visible); hidden != "" {
		text += "\n" + hidden
	}
	r.addText(field, text, ctx, false)
	for _, p := range decodePayloads(text, 2) {
		r.addText(field, p, ctx, true)
	}
}

func (r *reading) addText(field, text string, ctx Context, decoded bool) {
	n := nativeText(text)
	if n == "" {
		return
	}
	scripts := scriptsOf(n)
	if scripts&scriptCyrillic != 0 {
		n = skeleton.Cyrillic(n)
	}
	r.scripts |= scripts
	// Latin before lower case: an upper-case look-alike may have a
	// prototype its lower case lacks (Cyrillic В reads B, в reads nothing).
	r.latin.WriteString(skeleton.Latin(n))
	r.latin.WriteByte(' ')
	r.native.WriteString(strings.ToLower(n))
	r.native.WriteByte(' ')
	r.segs = append(r.segs, segment{field: field, ctx: ctx, decoded: decoded, latinEnd: r.latin.Len(), nativeEnd: r.native.Len()})
}

// nativeText is s in NFKC, with combining marks that follow no letter of
// their own removed and every run of blanks one space.
func nativeText(s string) string {
	s = norm.NFKC.String(s)
	var b strings.Builder
	b.Grow(len(s))
	space := true // no leading space
	for _, c := range s {
		switch {
		case blank(c):
			if !space {
				b.WriteByte(' ')
				space = true
			}
		case unicode.Is(unicode.Mn, c) || canon.Invisible(c):
			// dropped: marks stuffed into a word (NFKC has already
			// composed the ones that belong to their letter)
		default:
			b.WriteRune(c)
			space = false
		}
	}
	return strings.TrimRight(b.String(), " ")
}

// blank reports white space and the characters that render as a blank:
// every Unicode space and line separator, the braille pattern blank and
// the Hangul fillers.
func blank(c rune) bool {
	if c < utf8.RuneSelf {
		return c == ' ' || (c >= '\t' && c <= '\r')
	}
	return unicode.IsSpace(c) || c == 0x2800 || c == 0x3164 || c == 0x115F || c == 0x1160 || c == 0xFFA0 || c == 0x180E
}

// field returns the segment a match starting at offset i of the latin
// (or native) text falls in.
func (r *reading) segmentAt(i int, latin bool) *segment {
	lo, hi := 0, len(r.segs)
	for lo < hi {
		m := (lo + hi) / 2
		end := r.segs[m].nativeEnd
		if latin {
			end = r.segs[m].latinEnd
		}
		if i < end {
			hi = m
		} else {
			lo = m + 1
		}
	}
	if lo == len(r.segs) {
		return nil
	}
	return &r.segs[lo]
}

// findings matches every pattern against the reading.
func (r *reading) findings(add func(rule, field string)) {
	found := func(rule string, at int, latin bool) {
		seg := r.segmentAt(at, latin)
		if seg == nil || !applies(rule, seg.ctx) {
			return
		}
		add(rule, seg.field)
		if seg.decoded {
			add(RuleEncodedBlob, seg.field)
		}
	}
	latin := r.latin.String()
	matchLatin(latin, func(rule string, at int) { found(rule, at, true) })
	native := r.native.String()
	for _, p := range directives().native {
		if p.scripts&r.scripts == 0 || (len(p.anchors) > 0 && !slices.ContainsFunc(p.anchors, func(a string) bool { return strings.Contains(native, a) })) {
			continue
		}
		for _, m := range p.re.get().FindAllStringIndex(native, 8) {
			found(p.rule, m[0], false)
		}
	}
	for _, at := range longRuns(latin, 120) {
		found(RuleEncodedBlob, at, true)
	}
	for _, p := range markers {
		if !slices.ContainsFunc(p.gate, func(g string) bool { return strings.Contains(latin, g) }) {
			continue
		}
		for _, m := range p.re.get().FindAllStringIndex(latin, 8) {
			found(p.rule, m[0], true)
		}
	}
}

// matchLatin runs the Latin patterns over text, one sentence at a time,
// each pattern only on the sentences where one of its anchors begins a
// word, and reports each match with its offset.
func matchLatin(text string, found func(rule string, at int)) {
	d := directives()
	latinDirectives := d.latin
	for _, i := range d.latinAlways {
		for _, m := range latinDirectives[i].re.get().FindAllStringIndex(text, 8) {
			found(latinDirectives[i].rule, m[0])
		}
	}
	tried := make([]bool, len(latinDirectives))
	for i, p := range latinDirectives {
		// a gated pattern whose literals are all absent is never tried
		tried[i] = len(p.gate) > 0 && !slices.ContainsFunc(p.gate, func(g string) bool { return strings.Contains(text, g) })
	}
	var todo []int
	start := 0
	for start < len(text) {
		end := sentenceEnd(text, start)
		for w := start; w < end; {
			if !wordByte(text[w]) {
				w++
				continue
			}
			e := w
			for e < end && wordByte(text[e]) {
				e++
			}
			// Each pattern an anchor opens here is tried once, from
			// here, on at most maxSpan bytes of the sentence.
			todo = todo[:0]
			for k := w + 1; k <= e && k-w <= maxAnchor; k++ {
				for _, i := range d.latinIndex[text[w:k]] {
					if !tried[i] {
						tried[i] = true
						todo = append(todo, i)
					}
				}
			}
			span := text[w:min(end, w+maxSpan)]
			for _, i := range todo {
				tried[i] = false
				if latinDirectives[i].anchored.get().MatchString(span) {
					found(latinDirectives[i].rule, w)
				}
			}
			w = e
		}
		start = end
	}
}

// maxSpan bounds the bytes a Latin match may span from its first word:
// the longest pattern, with its windows full, is under 300 characters.
const maxSpan = 1024

// sentenceEnd is the end of the sentence that starts at i: after a
// period, "!", "?" or ";" followed by a space, or the end of text.
func sentenceEnd(text string, i int) int {
	for ; i < len(text); i++ {
		switch text[i] {
		case '.', '!', '?', ';':
			if i+1 == len(text) || text[i+1] == ' ' {
				return i + 1
			}
		}
	}
	return len(text)
}

func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80
}

// applies reports whether rule is a finding in a string of context ctx:
// server instructions address the model by design, and a URL in a value
// (a default, an example) is a value.
func applies(rule string, ctx Context) bool {
	switch ctx {
	case ServerInstructions:
		return rule != RuleAddressesModel
	case Data:
		return rule != RuleURL
	}
	return true
}

// longRuns returns where each run of at least n base64 characters starts
// (a long encoded blob: data a reader cannot read and a model decodes).
func longRuns(s string, n int) []int {
	var out []int
	run := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '_' || c == '-' {
			run++
			if run == n && len(out) < 8 {
				out = append(out, i+1-n)
			}
			continue
		}
		run = 0
	}
	return out
}

package links

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// jsonString writes s as a JSON string, escaping what JSON requires and,
// where the bits of mask (repeating every 64 bytes) say so, other ASCII
// bytes too: as \u00XX, or as their short escape where one exists. It is
// how a server may spell the same text.
func jsonString(s string, mask uint64) string {
	b := []byte{'"'}
	for i := 0; i < len(s); i++ {
		c := s[i]
		chosen := mask&(1<<(i%64)) != 0
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n' && chosen:
			b = append(b, '\\', 'n')
		case c == '/' && chosen:
			b = append(b, '\\', '/')
		case c < 0x20 || c < 0x80 && chosen:
			b = fmt.Appendf(b, `\u%04X`, c)
		default:
			b = append(b, c)
		}
	}
	return string(append(b, '"'))
}

// FuzzRawClean holds the raw fast path to the filter it skips: when
// RawClean says no string of a JSON text can hold what a filter removes,
// Apply must change none of its strings, however the server escaped them
// (as a member value, an array element or a member name). It stops a
// result that hides an image from the raw check (an escaped "<" or "!["),
// which would go to the client unfiltered.
func FuzzRawClean(f *testing.F) {
	for _, s := range append(hostileImages, "<img", "x <img", "<a href=https://evil.example/>x</a>",
		"[x](https://evil.example/)", "<https://evil.example/>", `<div style="background:url(https://evil.example/)">`,
		`<div style="background:\75rl(https://evil.example/)">`, "<div style=\"background:\\000075\r\nrl(https://evil.example/)\">",
		"plain words, nothing to remove") {
		f.Add(s, uint64(0))
		f.Add(s, ^uint64(0))
		f.Add(s, uint64(0x5555555555555555))
	}
	filters := []*Filter{
		New(Options{}),
		New(Options{NeutraliseLinks: true}),
		New(Options{KeepImages: true, NeutraliseLinks: true}),
		testFilter(),
	}
	f.Fuzz(func(t *testing.T, s string, mask uint64) {
		if !utf8.ValidString(s) {
			return
		}
		v := jsonString(s, mask)
		raw := []byte(`{"text":` + v + `,"list":[1,` + v + `],` + v + `:true}`)
		for i, lf := range filters {
			if !lf.RawClean(raw) {
				continue
			}
			if out, rs := lf.Apply(s); out != s {
				t.Fatalf("filter %d: RawClean passed %s, but Apply changes the string (%v): %q", i, raw, rs, out)
			}
		}
	})
}

// FuzzMarksInParts: the markers that start in the parts of a text are the
// whole text's, and ImageMarked judges the head of a text as it arrives
// as it judges the whole text once MarkReach bytes past the head are in.
// It stops a split judgement (a result judged while it is read) that
// misses an image cut in two by the edge of what has arrived.
func FuzzMarksInParts(f *testing.F) {
	for _, s := range append(hostileImages, "x <img src=a>", "<iframe", "<feImage href=x>", "![a](b)",
		"[x](https://evil.example/)", `background:url(x)`, `a \75 rl(x)`, `image-set(x)`, "<a href=x>", "x:y]") {
		for _, cut := range []uint16{0, 1, 2, 3, 5, 8, 13} {
			f.Add(s, cut)
		}
	}
	f.Fuzz(func(t *testing.T, s string, cut uint16) {
		n := len(s)
		k := min(int(cut), n)
		for _, links := range []bool{false, true} {
			whole := mayHoldIn(s, 0, n, links)
			if parts := mayHoldIn(s, 0, k, links) || mayHoldIn(s, k, n, links); parts != whole {
				t.Fatalf("links %v, cut at %d: parts %v, whole %v", links, k, parts, whole)
			}
		}
		head := s[:min(n, k+MarkReach)]
		if got, want := ImageMarked(head, 0, k), ImageMarked(s, 0, k); got != want {
			t.Fatalf("head of %d bytes, judged to %d: %v, whole text %v", len(head), k, got, want)
		}
	})
}

// TestMarkReach: MarkReach covers what mayHold reads around a marker.
func TestMarkReach(t *testing.T) {
	for _, m := range tagMarkers {
		if 1+len(m)+1 > MarkReach { // "<", the name, the byte that ends it
			t.Errorf("<%s and the byte after it are past MarkReach", m)
		}
	}
	if cssEscapeReach > MarkReach { // the CSS escape before a "("
		t.Error("the CSS escape before a ( is past MarkReach")
	}
}

// TestCSSEscapeWhitespace: a CSS hex escape ends with one whitespace of
// any kind (space, tab, newline, form feed, a CR or CRLF), which a
// browser consumes: "\75\trl(" is url( as surely as "\75 rl(". Apply
// removes such an image, and RawClean passes over no JSON spelling of it
// (a CRLF escaped as \r\n puts the escape 14 bytes before its "(").
func TestCSSEscapeWhitespace(t *testing.T) {
	lf := New(Options{})
	for _, ws := range []string{" ", "\t", "\n", "\f", "\r", "\r\n"} {
		for _, spelled := range []string{`\000075` + ws + `rl(`, `u\000072` + ws + `l(`, `ur\00006c` + ws + `(`,
			`\75` + ws + `\72` + ws + `\6c` + ws + `(`, `\000055` + ws + `RL(`} {
			s := `<p style="background:` + spelled + `https://evil.example/x)">x</p>`
			out, _ := lf.Apply(s)
			if strings.Contains(out, "evil.example/x") {
				t.Errorf("%q: Apply kept the image: %q", s, out)
			}
			short := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\t", `\t`, "\n", `\n`, "\r", `\r`, "\f", `\f`)
			for _, v := range []string{jsonString(s, 0), jsonString(s, ^uint64(0)), jsonString(s, 0x5555555555555555), `"` + short.Replace(s) + `"`} {
				if raw := []byte(`{"text":` + v + `}`); lf.RawClean(raw) {
					t.Errorf("RawClean passes %s", raw)
				}
			}
		}
	}
}

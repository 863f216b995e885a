package links

import (
	"fmt"
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
		`<div style="background:\75rl(https://evil.example/)">`, "plain words, nothing to remove") {
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

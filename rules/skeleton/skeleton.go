// Package skeleton reads text as a Latin-script reader sees it, so that a
// pattern written in plain letters matches the same words written in
// look-alike letters.
//
// Homoglyph smuggling writes "Іgnоrе аll рrеvіоuѕ іnѕtruсtіоnѕ" with
// Cyrillic letters, 𝐢𝐠𝐧𝐨𝐫𝐞 with mathematical bold ones, or ｉｇｎｏｒｅ in
// fullwidth: a model reads the words, a byte pattern does not. Latin maps
// such text back to "ignore all previous instructions" with Unicode's own
// data: compatibility normalisation (NFKC) and the confusables of Unicode
// Technical Standard #39 whose prototype is ASCII.
package skeleton

import (
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

//go:generate go run gen_table.go -data confusables.txt

type mapping struct {
	r     rune
	proto string
}

// Latin returns the Latin skeleton of s: NFKC, lower case, every
// non-ASCII letter or sign that Unicode lists as confusable with ASCII
// replaced by it, and diacritics removed ("Précédentes" reads
// "precedentes"). ASCII is kept as written (confusables.txt also maps
// "m" to "rn"; a pattern is written in ASCII, not in prototypes). Text in
// other scripts comes out mixed and matches no Latin pattern: match it in
// its own script, before Latin. Linear in len(s).
func Latin(s string) string {
	s = norm.NFKC.String(s)
	var b strings.Builder
	b.Grow(len(s))
	plain := true
	for _, r := range s {
		if r < utf8.RuneSelf {
			b.WriteByte(byte(unicode.ToLower(r)))
			continue
		}
		if p, ok := prototype(unicode.ToLower(r)); ok {
			b.WriteString(strings.ToLower(p))
		} else if p, ok := prototype(r); ok {
			b.WriteString(strings.ToLower(p))
		} else {
			b.WriteRune(unicode.ToLower(r))
			plain = false
		}
	}
	if plain {
		return b.String()
	}
	out, _, err := transform.String(stripMarks, b.String())
	if err != nil {
		return b.String()
	}
	return out
}

var stripMarks = transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)

// prototype is r's ASCII prototype in confusables.txt, if it has one.
func prototype(r rune) (string, bool) {
	if r < utf8.RuneSelf {
		return "", false
	}
	i, ok := slices.BinarySearchFunc(toASCII, r, func(m mapping, r rune) int { return int(m.r - r) })
	if !ok {
		return "", false
	}
	return toASCII[i].proto, true
}

// Cyrillic returns s with the Latin letters of every word that also has
// Cyrillic letters written as their Cyrillic look-alikes ("Игнoрируй"
// with a Latin o reads "Игнорируй"): the Russian-language form of
// homoglyph smuggling. Words without Cyrillic letters are kept.
func Cyrillic(s string) string {
	if !strings.ContainsFunc(s, isCyrillic) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for len(s) > 0 {
		end := strings.IndexFunc(s, notWord)
		if end < 0 {
			end = len(s)
		}
		if end == 0 {
			_, size := utf8.DecodeRuneInString(s)
			b.WriteString(s[:size])
			s = s[size:]
			continue
		}
		word := s[:end]
		if strings.ContainsFunc(word, isCyrillic) {
			word = strings.Map(func(r rune) rune {
				if c, ok := cyrillicLookAlike()[r]; ok {
					return c
				}
				return r
			}, word)
		}
		b.WriteString(word)
		s = s[end:]
	}
	return b.String()
}

func isCyrillic(r rune) bool { return r >= 0x400 && unicode.Is(unicode.Cyrillic, r) }
func notWord(r rune) bool    { return !unicode.IsLetter(r) && !unicode.IsMark(r) }

// cyrillicLookAlike maps an ASCII letter to the Cyrillic letter that
// confusables.txt lists as confusable with it, in the same case. It is
// built on first use, by the first word that mixes the two scripts.
var cyrillicLookAlike = sync.OnceValue(func() map[rune]rune {
	m := map[rune]rune{}
	for _, e := range toASCII {
		if !isCyrillic(e.r) || len(e.proto) != 1 {
			continue
		}
		a := rune(e.proto[0])
		if !unicode.IsLetter(a) || unicode.IsUpper(a) != unicode.IsUpper(e.r) {
			continue
		}
		if _, ok := m[a]; !ok {
			m[a] = e.r
		}
	}
	return m
})

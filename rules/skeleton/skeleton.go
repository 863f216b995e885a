// Package skeleton reads text as a Latin-script reader sees it, so that a
// pattern written in plain letters matches the same words written in
// look-alike letters, and gives the confusable skeleton of Unicode
// Technical Standard #39 that tells two names that look alike. Both read
// one table, generated from Unicode's confusables.txt.
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

	"golang.org/x/text/cases"
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
// (itself or its other case: asciiOf) replaced by it, and diacritics
// removed ("Précédentes" reads "precedentes"). ASCII is kept as written
// (confusables.txt also maps "m" to "rn"; a pattern is written in ASCII,
// not in prototypes). Text in other scripts comes out mixed and matches
// no Latin pattern: match it in its own script, before Latin. Linear in
// len(s).
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
		if p, ok := asciiOf(r); ok {
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

// Skeleton returns the confusable skeleton of s as Unicode Technical
// Standard #39 defines it (NFD, every code point replaced by its
// prototype in confusables.txt, NFD again): two strings with the same
// skeleton look alike ("pаypal" with a Cyrillic а, "rnail" and "mail").
// It stops a look-alike name from passing for another: a tool renamed
// with a Cyrillic letter, a call of a withheld tool under a look-alike
// spelling. ASCII is mapped too (m reads rn, 1 reads l). Linear in
// len(s).
func Skeleton(s string) string {
	return norm.NFD.String(mapRunes(norm.NFD.String(s), confusable))
}

// Folded is Skeleton for names read without regard to case, as a server
// that resolves names loosely reads them: NFKC, every non-ASCII letter
// or sign that Latin reads as ASCII replaced by that ASCII (asciiOf:
// Cyrillic В reads B although its lower case в has no ASCII prototype),
// case folded, Skeleton, case folded again. A name that Latin reads as
// a plain name has that name's Folded: a call of GIT_PUSН with a
// Cyrillic Н is a call of git_push. Linear in len(s).
func Folded(s string) string {
	s = norm.NFKC.String(s)
	if !ascii(s) {
		s = mapRunes(s, asciiOf)
	}
	fold := cases.Fold() // a Caser is not safe to share
	return fold.String(Skeleton(fold.String(s)))
}

// mapRunes is s with every code point that lookup maps replaced.
func mapRunes(s string, lookup func(rune) (string, bool)) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if p, ok := lookup(r); ok {
			b.WriteString(p)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

var stripMarks = transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)

// asciiOf is the ASCII that Latin and Folded read the non-ASCII r as:
// the prototype of its lower case, its own (Cyrillic В reads B although
// its lower case в has none), or its case fold's (ς folds to σ, which
// reads o; Cherokee ꭲ folds to Ꭲ, which reads T).
func asciiOf(r rune) (string, bool) {
	if p, ok := prototype(unicode.ToLower(r)); ok {
		return p, true
	}
	if p, ok := prototype(r); ok {
		return p, true
	}
	if f := foldRune(r); f != r {
		return prototype(f)
	}
	return "", false
}

// foldRune is r's simple case fold: its upper case's lower case (ς, σ
// and Σ fold to σ), except in Cherokee, whose case folding is to upper
// case (Unicode keeps the folds of Unicode 7, before the lower case).
func foldRune(r rune) rune {
	if unicode.SimpleFold(r) == r {
		return r // no other case
	}
	if unicode.Is(unicode.Cherokee, r) {
		return unicode.ToUpper(r)
	}
	return unicode.ToLower(unicode.ToUpper(r))
}

// prototype is the ASCII prototype of the non-ASCII code point r in
// confusables.txt, if it has one.
func prototype(r rune) (string, bool) {
	if r < utf8.RuneSelf {
		return "", false
	}
	p, ok := confusable(r)
	if !ok || !printableASCII(p) {
		return "", false
	}
	return p, true
}

// confusable is r's prototype in confusables.txt, if it has one.
func confusable(r rune) (string, bool) {
	if r < utf8.RuneSelf { // most of a name's letters: a few entries
		for _, m := range confusables[:asciiEntries] {
			if m.r == r {
				return m.proto, true
			}
		}
		return "", false
	}
	i, ok := slices.BinarySearchFunc(confusables, r, func(m mapping, r rune) int { return int(m.r - r) })
	if !ok {
		return "", false
	}
	return confusables[i].proto, true
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
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
	for _, e := range confusables {
		if !isCyrillic(e.r) || len(e.proto) != 1 || !printableASCII(e.proto) {
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

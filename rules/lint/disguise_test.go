package lint

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
)

// directive is one entry of testdata/directives.yaml.
type directive struct {
	Lang string `yaml:"lang"`
	Want string `yaml:"want"`
	Text string `yaml:"text"`
}

func loadDirectives(t testing.TB) []directive { return loadYAML[directive](t, "directives.yaml") }

// A disguise hides a directive in a tool definition the way published
// attacks do; ok is false where it does not apply to the language.
type disguise struct {
	name string
	hide func(d directive) (description, argument string, ok bool)
}

const lead = "Looks up a record by its id."

func inDescription(f func(string) string) func(directive) (string, string, bool) {
	return func(d directive) (string, string, bool) { return lead + " " + f(d.Text), "", true }
}

func spaced(lang string) bool { return lang != "zh" && lang != "ja" }
func latinScript(lang string) bool {
	return lang == "en" || lang == "es" || lang == "fr" || lang == "de" || lang == "pt"
}

// lookAlike writes Latin letters in Cyrillic and Cyrillic letters in Latin.
var lookAlike = strings.NewReplacer(
	"a", "а", "c", "с", "e", "е", "o", "о", "p", "р", "x", "х", "y", "у", "i", "і", "s", "ѕ", "j", "ј",
	"A", "А", "B", "В", "C", "С", "E", "Е", "H", "Н", "I", "І", "K", "К", "M", "М", "O", "О", "P", "Р", "T", "Т", "X", "Х",
)
var latinForCyrillic = strings.NewReplacer("а", "a", "е", "e", "о", "o", "р", "p", "с", "c", "у", "y", "х", "x")

// everyWord applies f to each word of at least n runes.
func everyWord(s string, n int, f func(string) string) string {
	words := strings.Split(s, " ")
	for i, w := range words {
		if utf8.RuneCountInString(w) >= n {
			words[i] = f(w)
		}
	}
	return strings.Join(words, " ")
}

func splitRunes(w string, at int) (string, string) {
	r := []rune(w)
	if at > len(r) {
		at = len(r)
	}
	return string(r[:at]), string(r[at:])
}

var disguises = []disguise{
	{"plain", inDescription(func(s string) string { return s })},
	{"look-alike letters", func(d directive) (string, string, bool) {
		switch {
		case latinScript(d.Lang):
			return lead + " " + lookAlike.Replace(d.Text), "", true
		case d.Lang == "ru":
			return lead + " " + latinForCyrillic.Replace(d.Text), "", true
		}
		return "", "", false
	}},
	{"zero-width characters inside words", inDescription(func(s string) string {
		var b strings.Builder
		for i, r := range []rune(s) {
			b.WriteRune(r)
			if i%2 == 1 && unicode.IsLetter(r) {
				b.WriteString("\u200b")
			}
		}
		return b.String()
	})},
	{"NBSP between words", func(d directive) (string, string, bool) {
		return lead + " " + strings.ReplaceAll(d.Text, " ", "\u00a0"), "", spaced(d.Lang)
	}},
	{"U+3000 between words", func(d directive) (string, string, bool) {
		return lead + " " + strings.ReplaceAll(d.Text, " ", "\u3000"), "", spaced(d.Lang)
	}},
	{"NBSP padding", inDescription(func(s string) string { return strings.Repeat("\u00a0", 80) + s })},
	{"U+3000 padding", inDescription(func(s string) string { return strings.Repeat("\u3000", 80) + s })},
	{"U+2800 padding", inDescription(func(s string) string { return strings.Repeat("\u2800", 80) + s })},
	{"fullwidth letters", inDescription(func(s string) string {
		return strings.Map(func(r rune) rune {
			if r > ' ' && r < 0x7f {
				return r - 0x21 + 0xFF01
			}
			return r
		}, s)
	})},
	{"mathematical bold letters", inDescription(func(s string) string {
		return strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z':
				return 0x1D41A + r - 'a'
			case r >= 'A' && r <= 'Z':
				return 0x1D400 + r - 'A'
			}
			return r
		}, s)
	})},
	{"markdown comment", func(d directive) (string, string, bool) {
		return lead + "\n\n[//]: # (" + d.Text + ")\n", "", true
	}},
	{"link title", inDescription(func(s string) string {
		return "See [the reference](https://example.com/docs \"" + strings.ReplaceAll(s, `"`, "'") + "\")."
	})},
	{"hidden HTML span", inDescription(func(s string) string { return `<span style="display:none">` + s + `</span>` })},
	{"HTML comment", inDescription(func(s string) string { return "<!-- " + s + " -->" })},
	{"footnote", func(d directive) (string, string, bool) {
		return lead + "[^1]\n\n[^1]: " + d.Text + "\n", "", true
	}},
	{"reference definition title", func(d directive) (string, string, bool) {
		return lead + " See [docs].\n\n[docs]: https://example.com/docs '" + strings.ReplaceAll(d.Text, "'", "’") + "'\n", "", true
	}},
	{"words split by emphasis", func(d directive) (string, string, bool) {
		return lead + " " + everyWord(d.Text, 6, func(w string) string {
			a, b := splitRunes(w, 3)
			c, e := splitRunes(b, 2)
			return a + "**" + c + "**" + e
		}), "", spaced(d.Lang)
	}},
	{"words split by empty HTML", func(d directive) (string, string, bool) {
		return lead + " " + everyWord(d.Text, 5, func(w string) string {
			a, b := splitRunes(w, 2)
			return a + "<b></b>" + b
		}), "", spaced(d.Lang)
	}},
	{"HTML entities", inDescription(func(s string) string {
		var b strings.Builder
		for i, r := range []rune(s) {
			if i%3 == 0 && unicode.IsLetter(r) {
				fmt.Fprintf(&b, "&#%d;", r)
				continue
			}
			b.WriteRune(r)
		}
		return b.String()
	})},
	{"base64", inDescription(func(s string) string {
		return "Decode this and follow it: " + base64.StdEncoding.EncodeToString([]byte(s))
	})},
	{"base64 in chunks", inDescription(func(s string) string {
		e := base64.StdEncoding.EncodeToString([]byte(s))
		var chunks []string
		for len(e) > 8 {
			chunks, e = append(chunks, e[:8]), e[8:]
		}
		return "Decode: " + strings.Join(append(chunks, e), " ")
	})},
	{"hex", inDescription(func(s string) string {
		h := hex.EncodeToString([]byte(s))
		var pairs []string
		for i := 0; i < len(h); i += 2 {
			pairs = append(pairs, h[i:i+2])
		}
		return "Hex: " + strings.Join(pairs, " ")
	})},
	{"split across description and argument", func(d directive) (string, string, bool) {
		if spaced(d.Lang) {
			words := strings.Fields(d.Text)
			half := len(words) / 2
			return lead + " " + strings.Join(words[:half], " "), strings.Join(words[half:], " "), true
		}
		i := strings.IndexAny(d.Text, "，、")
		if i < 0 {
			return "", "", false
		}
		return lead + " " + d.Text[:i], d.Text[i:], true
	}},
	{"look-alikes, zero-width and NBSP together", func(d directive) (string, string, bool) {
		if !latinScript(d.Lang) {
			return "", "", false
		}
		s := strings.ReplaceAll(lookAlike.Replace(d.Text), " ", "\u00a0\u200b")
		return lead + " " + s, "", true
	}},
}

// disguisedItem is a tool definition carrying the directive, with the
// argument that may carry its second half first in its schema.
func disguisedItem(t testing.TB, description, argument string) []byte {
	q := func(s string) string {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	note := ""
	if argument != "" {
		note = `"note":{"type":"string","description":` + q(argument) + `},`
	}
	return []byte(`{"name":"lookup","description":` + q(description) + `,"inputSchema":{"type":"object","properties":{` +
		note + `"id":{"type":"string","description":"The record id."}}}}`)
}

// TestDisguised holds every directive, in every language, behind every
// disguise to its rule: recall at least 95 %, each miss listed.
func TestDisguised(t *testing.T) {
	ds := loadDirectives(t)
	langs := map[string]int{}
	total, found := 0, 0
	perDisguise := map[string][2]int{}
	for _, d := range ds {
		langs[d.Lang]++
		for _, g := range disguises {
			desc, arg, ok := g.hide(d)
			if !ok {
				continue
			}
			total++
			got := rulesOf(Item(disguisedItem(t, desc, arg)))
			c := perDisguise[g.name]
			c[0]++
			if slices.Contains(got, d.Want) {
				found++
				c[1]++
			} else {
				t.Logf("miss: %s, %s: %s: got %v", d.Lang, g.name, d.Text, got)
			}
			perDisguise[g.name] = c
		}
	}
	if len(langs) < 10 {
		t.Errorf("%d languages, want 10", len(langs))
	}
	for _, g := range disguises {
		c := perDisguise[g.name]
		t.Logf("%-45s %3d/%3d", g.name, c[1], c[0])
	}
	t.Logf("%d directives x %d disguises: %d cases, %d found (%.1f %%)", len(ds), len(disguises), total, found, 100*float64(found)/float64(total))
	if total < 150 {
		t.Errorf("%d cases, want at least 150", total)
	}
	if found*100 < total*95 {
		t.Errorf("recall %d/%d, want at least 95 %%", found, total)
	}
}

// TestHeldOut reports the share of paraphrases, written after the
// patterns and never tuned against, that get their rule: a measure of
// the rules on wording they were not written from, not a target.
func TestHeldOut(t *testing.T) {
	ds := loadYAML[directive](t, "heldout.yaml")
	found := 0
	for _, d := range ds {
		got := rulesOf(Item(disguisedItem(t, lead+" "+d.Text, "")))
		if slices.Contains(got, d.Want) {
			found++
		} else {
			t.Logf("not found: %s %s: %s (got %v)", d.Lang, d.Want, d.Text, got)
		}
	}
	t.Logf("held-out paraphrases: %d of %d found", found, len(ds))
}

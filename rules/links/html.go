package links

import (
	"strings"

	"golang.org/x/net/html"

	"github.com/mcpguard/mcpguard/rules/rawjson"
)

// loads lists, for each attribute that makes a browser fetch a URL, the
// elements on which it does (the tags of tagMarkers).
var loads = map[string]map[string]bool{
	"src":         set("img", "image", "source", "input", "video", "audio", "embed", "iframe", "frame", "script", "track"),
	"srcset":      set("img", "source", "link"),
	"imagesrcset": set("link"),
	"lowsrc":      set("img"),
	"dynsrc":      set("img"),
	"poster":      set("video"),
	"background":  set("body", "table", "td", "th"),
	"data":        set("object"),
	"href":        set("link", "image", "use", "feimage"),
	"xlink:href":  set("image", "use", "feimage"),
}

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// rawText are the elements whose content HTML reads as raw text up to
// their end tag (x/net/html's list): no tags inside, and for <style> the
// CSS that badCSS reads.
var rawText = set("iframe", "noembed", "noframes", "noscript", "plaintext", "script", "style", "textarea", "title", "xmp")

// longText is the run of text without '<' past which html skips ahead
// rather than let the tokenizer buffer the run whole.
const longText = 64 << 10

// maxToken bounds one tag or comment of HTML: the tokenizer holds a token
// whole in a buffer it doubles, so a string holding a longer one is
// replaced whole (WholeStandIn) rather than read.
const maxToken = 1 << 20

// html finds the tags of s that load from a host not allowed (the whole
// tag is replaced) and, when neutralising, <a> tags whose href is not
// allowed; also CSS url() in <style> elements.
func (f *Filter) html(s string) ([]edit, []Removal) {
	var edits []edit
	var rs []Removal
	ok := eachTag(s, longText, func(z *html.Tokenizer, start, end int, tag string, hasAttr bool) {
		for hasAttr {
			var k, v []byte
			k, v, hasAttr = z.TagAttr()
			key, val := strings.ToLower(string(k)), string(v)
			var kind string
			var t target
			bad := false
			switch {
			case f.images && loads[key][tag]:
				kind = "image"
				t, bad = f.badURLs(key, val)
			case f.images && key == "style":
				kind = "image"
				t, bad = f.badCSS(val)
			case f.links && key == "href" && tag == "a":
				kind = "link"
				t = targetOf(val)
				bad = !f.linkHosts.allows(t)
			}
			if bad {
				with := ImageStandIn(shownHost(t))
				if kind == "link" {
					with = LinkStandIn(shownHost(t))
				}
				edits = append(edits, edit{start, end, with})
				rs = append(rs, Removal{kind, shownHost(t)})
				hasAttr = false // the tag goes whole
			}
		}
	}, func(tag string, start, end int) {
		if tag != "style" || !f.images {
			return
		}
		if t, bad := f.badCSS(s[start:end]); bad {
			edits = append(edits, edit{start, end, ImageStandIn(shownHost(t))})
			rs = append(rs, Removal{"image", shownHost(t)})
		}
	})
	if !ok {
		return []edit{{0, len(s), WholeStandIn}}, []Removal{{Kind: "content", Host: "(several)"}}
	}
	return edits, rs
}

// eachTag calls tag for each start tag of the HTML in s (s[start:end],
// its name in lower case, whether attributes follow: read them with
// z.TagAttr), and raw for the raw text of each rawText element
// (s[start:end]); skip is longText but in tests. A self-closing <style/> starts raw text too: HTML
// ignores the slash on an element that is not void.
//
// The tokenizer holds each token whole in a buffer it doubles, so a
// long text or raw text element cost up to twice its size again. eachTag
// reads raw text itself (see rawEnd) and skips long runs of text,
// starting a new tokenizer after them: the tokenizer is in its data
// state there, so it reads what follows as it would have. It reports
// false when a tag or comment is longer than maxToken: then it stops.
func eachTag(s string, skip int, tag func(z *html.Tokenizer, start, end int, name string, hasAttr bool), raw func(name string, start, end int)) bool {
	at := 0
	var z *html.Tokenizer
	restart := func(from int) {
		at = from
		z = html.NewTokenizer(strings.NewReader(s[from:]))
		z.SetMaxBuf(maxToken)
	}
	restart(0)
	for {
		if lt := strings.IndexByte(s[at:], '<'); lt < 0 {
			return true // text to the end: no tag
		} else if lt > skip {
			restart(at + lt)
		}
		tt := z.Next()
		if tt == html.ErrorToken {
			return z.Err() != html.ErrBufferExceeded
		}
		if len(z.Raw()) >= maxToken {
			return false // cut at the bound: an error only on the next call
		}
		start := at
		at += len(z.Raw())
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		b, hasAttr := z.TagName()
		name := strings.ToLower(string(b))
		tag(z, start, at, name, hasAttr)
		if rawText[name] {
			end := rawEnd(s, at, name)
			raw(name, at, end)
			restart(end)
		}
	}
}

// rawEnd is where the raw text of element tag that starts at from ends:
// at its end tag, "</" and the name in any ASCII case followed by a
// space, '/' or '>', as the tokenizer reads it; the end of s when there
// is none (and for plaintext). A <script>'s escaped forms can make a
// browser read past the first </script>; ending there means the rest is
// read as HTML, never that HTML is skipped.
func rawEnd(s string, from int, tag string) int {
	if tag == "plaintext" {
		return len(s)
	}
	for i := from; ; {
		j := strings.Index(s[i:], "</")
		if j < 0 {
			return len(s)
		}
		k := i + j + 2
		if k+len(tag) >= len(s) {
			return len(s)
		}
		if hasFoldPrefix(s[k:], tag) && strings.IndexByte(" \n\r\t\f/>", s[k+len(tag)]) >= 0 {
			return i + j
		}
		i = k
	}
}

// hasFoldPrefix reports whether s starts with lower (lower-case ASCII) in
// any ASCII case.
func hasFoldPrefix(s, lower string) bool {
	if len(s) < len(lower) {
		return false
	}
	for i := 0; i < len(lower); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// indexFold is strings.Index of lower (lower-case ASCII) in s in any
// ASCII case, as CSS matches its keywords, without a lower-cased copy of
// s. It costs len(s) times at most len(lower).
func indexFold(s, lower string) int {
	first, upper := lower[0], lower[0]
	if 'a' <= first && first <= 'z' {
		upper = first - ('a' - 'A')
	}
	for i := 0; i+len(lower) <= len(s); i++ {
		if (s[i] == first || s[i] == upper) && hasFoldPrefix(s[i:], lower) {
			return i
		}
	}
	return -1
}

// badURLs judges an attribute's URL, or each URL of a srcset.
func (f *Filter) badURLs(key, val string) (target, bool) {
	if key != "srcset" && key != "imagesrcset" {
		t, ok := f.allowsImage(val)
		return t, !ok
	}
	for _, cand := range strings.Split(val, ",") {
		fields := strings.Fields(cand)
		if len(fields) == 0 {
			continue
		}
		if t, ok := f.allowsImage(fields[0]); !ok {
			return t, true
		}
	}
	return target{}, false
}

// badCSS finds a url(...), image-set(...) or @import "..." in CSS text
// whose target is not allowed. CSS escapes (\75 rl) are undone first.
// Each construct is read up to its closing character, or at most up to
// the next construct of its kind (an unclosed url( in a browser ends
// there as a bad URL anyway), so a flood of unclosed url( is read in time
// linear in the text, not once per url( to the end.
func (f *Filter) badCSS(css string) (target, bool) {
	css = unescapeCSS(css)
	if t, bad := f.badCSSCalls(css, "url(", func(arg string) (target, bool) {
		t, ok := f.allowsImage(strings.Trim(strings.TrimSpace(arg), `"'`))
		return t, !ok
	}); bad {
		return t, true
	}
	if t, bad := f.badCSSCalls(css, "image-set(", func(arg string) (target, bool) {
		for _, part := range strings.Split(arg, ",") {
			part = strings.TrimSpace(part)
			if len(part) > 0 && (part[0] == '"' || part[0] == '\'') {
				if close := strings.IndexByte(part[1:], part[0]); close >= 0 {
					if t, ok := f.allowsImage(part[1 : 1+close]); !ok {
						return t, true
					}
				}
			}
		}
		return target{}, false
	}); bad {
		return t, true
	}
	return f.badCSSCalls(css, "@import", func(arg string) (target, bool) {
		rest := strings.TrimLeft(arg, " \t\n\r\f")
		if len(rest) > 0 && (rest[0] == '"' || rest[0] == '\'') {
			if end := strings.IndexByte(rest[1:], rest[0]); end >= 0 {
				t, ok := f.allowsImage(rest[1 : 1+end])
				return t, !ok
			}
		}
		return target{}, false
	})
}

// badCSSCalls judges, with bad, the argument of each occurrence of opener
// (lower case; matched in any ASCII case) in css: the text after it up to
// the first ')' (for an opener ending in '(') or the next occurrence of
// opener, whichever comes first. The next ')' is found once per stretch,
// so the whole reading is linear in len(css).
func (f *Filter) badCSSCalls(css, opener string, bad func(arg string) (target, bool)) (target, bool) {
	closes := strings.HasSuffix(opener, "(")
	closeAt := -1 // index of the next ')' at or after i; len(css) when none
	at := indexFold(css, opener)
	for at >= 0 {
		i := at + len(opener)
		end := len(css)
		at = -1
		if next := indexFold(css[i:], opener); next >= 0 {
			end, at = i+next, i+next
		}
		if closes {
			if closeAt < i {
				closeAt = len(css)
				if c := strings.IndexByte(css[i:], ')'); c >= 0 {
					closeAt = i + c
				}
			}
			end = min(end, closeAt)
		}
		if t, b := bad(css[i:end]); b {
			return t, true
		}
	}
	return target{}, false
}

// unescapeCSS undoes CSS escapes: \ and up to six hex digits (and one
// whitespace after them, which CSS consumes: a space, tab, newline, form
// feed, CR or CRLF; "\75\trl(" is url( in a browser), or \ and any
// other character.
func unescapeCSS(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		j := i + 1
		var r rune
		n := 0
		for j < len(s) && n < 6 && rawjson.IsHex(s[j]) {
			r = r<<4 | rune(rawjson.Unhex(s[j]))
			j++
			n++
		}
		if n == 0 {
			b.WriteByte(s[i+1])
			i++
			continue
		}
		if j < len(s) {
			switch s[j] {
			case '\r':
				if j++; j < len(s) && s[j] == '\n' {
					j++
				}
			case ' ', '\t', '\n', '\f':
				j++
			}
		}
		b.WriteRune(r)
		i = j - 1
	}
	return b.String()
}

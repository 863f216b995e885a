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

// html finds the tags of s that load from a host not allowed (the whole
// tag is replaced) and, when neutralising, <a> tags whose href is not
// allowed; also CSS url() in <style> elements.
func (f *Filter) html(s string) ([]edit, []Removal) {
	var edits []edit
	var rs []Removal
	z := html.NewTokenizer(strings.NewReader(s))
	z.SetMaxBuf(0)
	at := 0
	inStyle := false
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return edits, rs
		}
		raw := len(z.Raw())
		start := at
		at += raw
		switch tt {
		case html.TextToken:
			if inStyle && f.images {
				if t, bad := f.badCSS(string(z.Text())); bad {
					edits = append(edits, edit{start, at, ImageStandIn(shownHost(t))})
					rs = append(rs, Removal{"image", shownHost(t)})
				}
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			tag := strings.ToLower(string(name))
			inStyle = tag == "style" && tt == html.StartTagToken
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
					edits = append(edits, edit{start, at, with})
					rs = append(rs, Removal{kind, shownHost(t)})
					hasAttr = false // the tag goes whole
				}
			}
		case html.EndTagToken:
			inStyle = false
		}
	}
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
	lower := asciiLower(css)
	if t, bad := f.badCSSCalls(css, lower, "url(", func(arg string) (target, bool) {
		t, ok := f.allowsImage(strings.Trim(strings.TrimSpace(arg), `"'`))
		return t, !ok
	}); bad {
		return t, true
	}
	if t, bad := f.badCSSCalls(css, lower, "image-set(", func(arg string) (target, bool) {
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
	return f.badCSSCalls(css, lower, "@import", func(arg string) (target, bool) {
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
// in css (lower is css in lower case): the text after it up to the first
// ')' (for an opener ending in '(') or the next occurrence of opener,
// whichever comes first. The next ')' is found once per stretch, so the
// whole reading is linear in len(css).
func (f *Filter) badCSSCalls(css, lower, opener string, bad func(arg string) (target, bool)) (target, bool) {
	closes := strings.HasSuffix(opener, "(")
	closeAt := -1 // index of the next ')' at or after i; len(css) when none
	at := strings.Index(lower, opener)
	for at >= 0 {
		i := at + len(opener)
		end := len(css)
		at = -1
		if next := strings.Index(lower[i:], opener); next >= 0 {
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

// asciiLower lower-cases the ASCII letters of s, as CSS matches its
// keywords, keeping every index (strings.ToLower can change byte lengths).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// unescapeCSS undoes CSS escapes: \ and up to six hex digits (and one
// space after them), or \ and any other character.
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
		if j < len(s) && s[j] == ' ' {
			j++
		}
		b.WriteRune(r)
		i = j - 1
	}
	return b.String()
}

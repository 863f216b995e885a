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
		t := targetOf(val)
		return t, !f.imageHosts.allows(t)
	}
	for _, cand := range strings.Split(val, ",") {
		fields := strings.Fields(cand)
		if len(fields) == 0 {
			continue
		}
		if t := targetOf(fields[0]); !f.imageHosts.allows(t) {
			return t, true
		}
	}
	return target{}, false
}

// badCSS finds a url(...) (or @import "...") in CSS text whose target is
// not allowed. CSS escapes (\75 rl) are undone first.
func (f *Filter) badCSS(css string) (target, bool) {
	css = unescapeCSS(css)
	lower := strings.ToLower(css)
	for i := 0; ; {
		j := strings.Index(lower[i:], "url(")
		if j < 0 {
			break
		}
		i += j + 4
		end := strings.IndexByte(css[i:], ')')
		if end < 0 {
			end = len(css) - i
		}
		u := strings.Trim(strings.TrimSpace(css[i:i+end]), `"'`)
		if t := targetOf(u); !f.imageHosts.allows(t) {
			return t, true
		}
	}
	for i := 0; ; {
		j := strings.Index(lower[i:], "image-set(")
		if j < 0 {
			break
		}
		i += j + len("image-set(")
		end := strings.IndexByte(css[i:], ')')
		if end < 0 {
			end = len(css) - i
		}
		for _, part := range strings.Split(css[i:i+end], ",") {
			part = strings.TrimSpace(part)
			if len(part) > 0 && (part[0] == '"' || part[0] == '\'') {
				if close := strings.IndexByte(part[1:], part[0]); close >= 0 {
					if t := targetOf(part[1 : 1+close]); !f.imageHosts.allows(t) {
						return t, true
					}
				}
			}
		}
	}
	for i := 0; ; {
		j := strings.Index(lower[i:], "@import")
		if j < 0 {
			return target{}, false
		}
		i += j + 7
		rest := strings.TrimSpace(css[i:])
		if len(rest) > 0 && (rest[0] == '"' || rest[0] == '\'') {
			if end := strings.IndexByte(rest[1:], rest[0]); end >= 0 {
				if t := targetOf(rest[1 : 1+end]); !f.imageHosts.allows(t) {
					return t, true
				}
			}
		}
	}
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

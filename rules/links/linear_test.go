package links

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpguard/mcpguard/rules/cputime"
)

// hostileShapes repeat a fragment that once made a scanner read from each
// occurrence to the end of the text: unclosed CSS url( in a style
// attribute and a <style> element, image-set( and @import, unclosed
// markdown destinations (plain and <angle>), labels, references and code
// spans.
var hostileShapes = map[string]func(n int) string{
	"style attribute url(": func(n int) string { return `<p style="` + strings.Repeat("url(", n/4) + `">x</p>` },
	"style element url(":   func(n int) string { return "<style>" + strings.Repeat("url(", n/4) },
	"image-set(":           func(n int) string { return "<style>" + strings.Repeat("image-set(", n/10) },
	"@import":              func(n int) string { return "<style>" + strings.Repeat(`@import "`, n/9) },
	"![x](":                func(n int) string { return strings.Repeat("![x](", n/5) },
	"![x](<":               func(n int) string { return strings.Repeat("![x](<", n/6) },
	"![x]( spaced":         func(n int) string { return strings.Repeat("![x]( a", n/7) },
	"![":                   func(n int) string { return strings.Repeat("![", n/2) },
	"![x][":                func(n int) string { return strings.Repeat("![x][", n/5) },
	"![`":                  func(n int) string { return strings.Repeat("![`", n/3) },
	"code span image":      func(n int) string { return strings.Repeat("![`](https://evil.example/) ", n/29) },
	"title":                func(n int) string { return strings.Repeat(`![x](a "`, n/8) },
}

// TestApplyLinear: each hostile shape, four times larger, costs well under
// sixteen times the CPU (what a scan per occurrence to the end costs); the
// bound is ten, not four, for the parser's allocation and GC at small sizes.
func TestApplyLinear(t *testing.T) {
	f := New(Options{NeutraliseLinks: true})
	small := 64 << 10
	if testing.Short() {
		small = 16 << 10
	}
	measure := func(s string) time.Duration {
		best := cputime.Best(3, func() { f.Apply(s) })
		return max(best, 5*time.Millisecond) // a floor keeps the ratio of tiny costs meaningful
	}
	for name, shape := range hostileShapes {
		a, b := measure(shape(small)), measure(shape(4*small))
		t.Logf("%s: %v at %d KiB, %v at %d KiB", name, a, small>>10, b, 4*small>>10)
		if b > 10*a {
			t.Errorf("%s: %v at %d KiB but %v at %d KiB: superlinear", name, a, small>>10, b, 4*small>>10)
		}
	}
}

// TestLinkTailWork counts the destination reading of the markdown parser:
// linear for ordinary writing, and the flood of unclosed "![x](" is seen
// as quadratic and refused whole.
func TestLinkTailWork(t *testing.T) {
	ordinary := strings.Repeat("See [the docs](https://example.com/docs) and ![logo](https://img.shields.io/x.svg). ", 2000)
	if w := linkTailWork(ordinary); w > int64(len(ordinary)) {
		t.Errorf("ordinary text: work %d for %d bytes", w, len(ordinary))
	}
	if tooCostly(ordinary) {
		t.Error("ordinary text taken for a flood")
	}
	flood := strings.Repeat("![x](", 1<<16)
	if w, n := linkTailWork(flood), int64(len(flood)); w < n*n/20 {
		t.Errorf("flood: work %d for %d bytes, want ~n²/10", w, n)
	}
	out, rs := New(Options{}).Apply(flood)
	if out != WholeStandIn || len(rs) != 1 || rs[0].Kind != "content" {
		t.Errorf("flood: got %.40q, %v", out, rs)
	}
	angle := strings.Repeat("![x](<", 1<<16)
	if !tooCostly(angle) {
		t.Error("unclosed <angle> destinations not counted")
	}
}

// TestParserNodesBounded: a flood of labels (each a parser node of about a
// kilobyte) is refused whole; a long ordinary document is parsed.
func TestParserNodesBounded(t *testing.T) {
	if flood := strings.Repeat("![x][", 1<<18); !tooCostly(flood) {
		t.Errorf("a %d-byte flood of labels is parsed (%d nodes)", len(flood), parserNodes(flood))
	}
	doc := strings.Repeat("A line of *prose* with a [link](https://example.com/a) and ![logo](https://img.shields.io/x.svg).\n", 1<<13)
	if tooCostly(doc) {
		t.Errorf("an ordinary %d-byte document is refused (%d nodes)", len(doc), parserNodes(doc))
	}
}

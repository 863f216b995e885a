package links

import (
	"html"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// mdParser is built on the first text it reads, not at start.
var mdParser = sync.OnceValue(goldmark.DefaultParser)

// markdown finds, with a CommonMark parser, the images (and, when
// neutralising, links) of s whose destination is not allowed; inline and
// reference-style alike, since the parser resolves references. Each is
// replaced from its "![" (or "[") to its end.
func (f *Filter) markdown(s string) ([]edit, []Removal) {
	src := []byte(s)
	doc := mdParser().Parse(text.NewReader(src))
	var edits []edit
	var rs []Removal
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Image:
			if !f.images {
				break
			}
			t, ok := f.allowsImage(html.UnescapeString(string(n.Destination)))
			if ok {
				break
			}
			bang := imageStart(s, n.Pos())
			if bang < 0 {
				break // no position: the next round's parse or the last resort catches it
			}
			end := linkEnd(s, bang+1)
			if end < 0 {
				end = bang + 2
			}
			edits = append(edits, edit{bang, end, ImageStandIn(shownHost(t))})
			rs = append(rs, Removal{"image", shownHost(t)})
			return ast.WalkSkipChildren, nil
		case *ast.Link:
			if !f.links {
				break
			}
			t := targetOf(html.UnescapeString(string(n.Destination)))
			if f.linkHosts.allows(t) {
				break
			}
			open := n.Pos()
			if open < 0 || open >= len(s) || s[open] != '[' {
				break
			}
			end := linkEnd(s, open)
			close := labelEnd(s, open)
			with := LinkStandIn(shownHost(t))
			if end < 0 || close < 0 {
				end = open + 1
			} else {
				with = s[open+1:close] + " " + with
			}
			edits = append(edits, edit{open, end, with})
			rs = append(rs, Removal{"link", shownHost(t)})
		case *ast.AutoLink:
			if !f.links {
				break
			}
			t := targetOf(string(n.URL(src)))
			if f.linkHosts.allows(t) {
				break
			}
			if start, end, ok := autolinkSpan(s, n, src); ok {
				edits = append(edits, edit{start, end, LinkStandIn(shownHost(t))})
				rs = append(rs, Removal{"link", shownHost(t)})
			}
		}
		return ast.WalkContinue, nil
	})
	return edits, rs
}

// imageStart returns the index of the "!" of "![" that an image node's
// position points at (the "!" or the "[").
func imageStart(s string, pos int) int {
	switch {
	case pos >= 0 && pos+1 < len(s) && s[pos] == '!' && s[pos+1] == '[':
		return pos
	case pos >= 1 && pos < len(s) && s[pos-1] == '!' && s[pos] == '[':
		return pos - 1
	}
	return -1
}

func autolinkSpan(s string, n *ast.AutoLink, _ []byte) (int, int, bool) {
	open := n.Pos()
	if open < 0 || open >= len(s) || s[open] != '<' {
		return 0, 0, false
	}
	end := strings.IndexByte(s[open:], '>')
	if end < 0 {
		return 0, 0, false
	}
	return open, open + end + 1, true
}

// labelEnd returns the index of the "]" that closes the link label opened
// by s[open] == '[': brackets nest, backslash escapes and code spans are
// skipped. -1 when it is not closed.
func labelEnd(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '`':
			n := 1
			for i+n < len(s) && s[i+n] == '`' {
				n++
			}
			if j := closingTicks(s, i+n, n); j >= 0 {
				i = j + n - 1
			} else {
				i += n - 1
			}
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// closingTicks finds a run of exactly n backticks from i.
func closingTicks(s string, i, n int) int {
	for i < len(s) {
		if s[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		if j-i == n {
			return i
		}
		i = j
	}
	return -1
}

// linkEnd returns the index just past the link or image whose label opens
// at s[open] == '[': an inline destination and title in parentheses, a
// [reference], or nothing (a shortcut reference). -1 when the label is
// not closed.
func linkEnd(s string, open int) int {
	close := labelEnd(s, open)
	if close < 0 {
		return -1
	}
	i := close + 1
	if i < len(s) && s[i] == '[' {
		for j := i + 1; j < len(s); j++ {
			switch s[j] {
			case '\\':
				j++
			case ']':
				return j + 1
			}
		}
		return close + 1
	}
	if i >= len(s) || s[i] != '(' {
		return close + 1
	}
	if end := inlineTail(s, i); end > 0 {
		return end
	}
	return close + 1
}

// inlineTail parses "(dest "title")" from s[i] == '(' and returns the index
// past ')', or -1.
func inlineTail(s string, i int) int {
	i++
	i = skipSpace(s, i)
	if i < len(s) && s[i] == '<' {
		for i++; i < len(s) && s[i] != '>'; i++ {
			if s[i] == '\\' {
				i++
			} else if s[i] == '\n' {
				return -1
			}
		}
		i++
	} else {
		depth := 0
	dest:
		for ; i < len(s); i++ {
			switch c := s[i]; {
			case c == '\\':
				i++
			case c == '(':
				depth++
			case c == ')':
				if depth == 0 {
					break dest
				}
				depth--
			case c <= ' ':
				break dest
			}
		}
	}
	i = skipSpace(s, i)
	if i < len(s) && (s[i] == '"' || s[i] == '\'' || s[i] == '(') {
		closeCh := s[i]
		if closeCh == '(' {
			closeCh = ')'
		}
		for i++; i < len(s) && s[i] != closeCh; i++ {
			if s[i] == '\\' {
				i++
			}
		}
		i++
		i = skipSpace(s, i)
	}
	if i < len(s) && s[i] == ')' {
		return i + 1
	}
	return -1
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// linkTailWork is an upper bound of the bytes the CommonMark parser reads
// for the inline link destinations of s: after each "](" (spaces skipped)
// an unquoted destination is read to the next whitespace and an <angle>
// one to the next '>' or line end, whether or not a link results. The
// parser reads each from its own "](", so a run of unclosed "![x](" costs
// it time quadratic in the run; one left-to-right pass here counts that
// cost in linear time and constant memory.
func linkTailWork(s string) int64 {
	type pending struct{ n, starts int64 }
	var await, plain, angle pending
	var work int64
	resolve := func(p *pending, at int) {
		work += p.n*int64(at) - p.starts
		*p = pending{}
	}
	for k := 0; k < len(s); k++ {
		c := s[k]
		switch c {
		case ' ', '\t', '\n', '\v', '\f', '\r':
			resolve(&plain, k)
		default:
			if await.n > 0 {
				if c == '<' {
					angle.n, angle.starts = angle.n+await.n, angle.starts+await.starts
				} else {
					plain.n, plain.starts = plain.n+await.n, plain.starts+await.starts
				}
				await = pending{}
			}
		}
		if c == '>' || c == '\n' || c == '\r' {
			resolve(&angle, k)
		}
		if c == ']' && k+1 < len(s) && s[k+1] == '(' {
			await.n++
			await.starts += int64(k)
		}
	}
	resolve(&await, len(s))
	resolve(&plain, len(s))
	resolve(&angle, len(s))
	return work
}

// parserNodes estimates the nodes the CommonMark parser allocates for s:
// one per '[', emphasis delimiter, backtick and line, each of which costs
// it 250 to 2 200 bytes, so a flood of "![x][" reached thirty times its
// own size in memory (and minutes of GC).
func parserNodes(s string) int64 {
	var n int64
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '*', '_', '`', '\n':
			n++
		}
	}
	return n
}

// tooCostly reports whether parsing s as markdown would read more than a
// fixed multiple of its size (see linkTailWork) or allocate more than about
// twice its size and 48 MiB (see parserNodes): such text is replaced whole
// rather than parsed, which keeps the proxy within its time and memory
// budgets for any input. Ordinary markdown stays far below both: a 1 MiB
// document of short lines and links counts about 25 000 nodes; a
// densely linked one of 800 KiB about 41 000.
func tooCostly(s string) bool {
	n := int64(len(s))
	return parserNodes(s) > n/512+48<<10 || linkTailWork(s) > 16*n+1<<20
}

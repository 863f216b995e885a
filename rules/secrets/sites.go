package secrets

import (
	"cmp"
	"fmt"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// A keyword site is where a rule's keyword stands in its regex: a run of
// one-character parts (literals, small classes, in any group or
// alternative) whose ASCII characters spell the keyword up to case. Every
// match of the regex that follows that path holds a keyword hit there,
// and what the regex requires before and after the site must be there
// too. siteTest is the quick test derived from a rule's sites: a hit
// that fails it for every site is not where any match has its keyword,
// so the rule's regex is not run for it. A text made of one keyword
// repeated (a hostile server's megabyte of "sumo", "linkedin" or
// "nrjs-") never runs the regex, whose lazy name prefixes made each run
// cost milliseconds, and needs no budget.
//
// The test is derived from the parsed regex, so a rule's keyword group
// may be written in any form: (?i:sumo), (?-i:[Ss]umo|SUMO), linked[_-]?in,
// an alternation of services, or the keyword at the start of the value
// (NRJS-…). Its contract: for every match of the rule's regex whose
// site holds the keyword in ASCII, the quick test passes at that hit.
// Under (?i) Go's regexp also reads ſ as s and the Kelvin sign as k; a
// keyword written so is no hit of the keyword index (nor of gitleaks'
// lower-case keyword check), so such a match is out of the index's reach
// with or without the quick test.
type site struct {
	// kw: the keyword; at[j]: the characters the regex admits at its j-th
	// byte (the case it is written in).
	kw string
	at []runeSet
	// before and after: what the regex requires next to the site,
	// read outwards from it; wbBefore, wbAfter: a \b stands right there.
	before, after     sideTest
	wbBefore, wbAfter bool
}

// sideTest is what a regex requires on one side of a site: at most
// maxFill characters of fill (-1: any number), then characters of
// seq[0], seq[1]... in turn (no seq: no requirement).
type sideTest struct {
	fill    runeSet
	maxFill int
	seq     []runeSet
	// class holds, for each ASCII byte, inFill and startsSeq.
	class [utf8.RuneSelf]uint8
	// runStart[k], runEnd[k]: the run of equal sets seq[k] is in.
	runStart, runEnd []int
	// skipFill: no ASCII character is both fill and a start of seq.
	skipFill bool
	// tail: what follows seq when seq ends in a repeat of varying
	// length (glpat-[0-9a-zA-Z_-]{27,300}\.): the rest of the repeat as
	// fill, then what comes after it (forward sides only).
	tail *sideTest
}

// maxTails bounds the tails of tails.
const maxTails = 2

const (
	inFill = 1 << iota
	startsSeq
)

// classOf returns inFill and startsSeq for r.
func (t *sideTest) classOf(r rune) uint8 {
	if r < utf8.RuneSelf {
		return t.class[r]
	}
	var c uint8
	if t.fill.has(r) {
		c |= inFill
	}
	if t.seq[0].has(r) {
		c |= startsSeq
	}
	return c
}

// maxSeq bounds the characters a side test reads after its fill.
const maxSeq = 64

// maxPaths bounds the paths through a regex read for its sites: a regex
// whose keyword stands in more places than that gets no quick test.
const maxPaths = 256

// siteSet is the sites of a rule's keywords: a hit passes when it stands
// as one of them requires. Rules with the same sites (a service's
// several formats) share one siteSet, so a hit of their keyword is
// judged once (quickMemo).
type siteSet struct{ sites []site }

// siteSets interns siteSets by their description.
var siteSets sync.Map

// siteTest returns the sites of a rule whose regex is expr and whose
// keywords are kws, or nil when some path of the regex has none.
func siteTest(expr string, kws []string) *siteSet {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	sites, ok := findSites(re, kws)
	if !ok {
		return nil
	}
	ss, _ := siteSets.LoadOrStore(fmt.Sprint(sites), &siteSet{sites})
	return ss.(*siteSet)
}

// passes reports whether a keyword hit at [at, at+n) of s stands as one
// of the sites requires.
func (ss *siteSet) passes(s string, at, n int, memo *quickMemo) bool {
	for i := range ss.sites {
		if ss.sites[i].passes(s, at, n, memo) {
			return true
		}
	}
	return false
}

// quickMemo remembers a scan's last judgement of a hit by a siteSet.
type quickMemo struct {
	ss    *siteSet
	at, n int
	ok    bool
	// runs: s[from:end] is made of ASCII characters of set (and s[end]
	// is not one, when whole): consecutive hits in one run (a flood of
	// "tk-us-", read through its value class) read it once.
	runs [4]struct {
		set       *runeSet
		from, end int
		whole     bool
	}
	next int
}

// asciiRun returns where the run of ASCII characters of set (no
// backslash) that s has from i ends, or a place at least need bytes on
// where it goes on: a run is read at most need bytes past what memo
// knows of it, so a hit costs O(need) even when runs of many sets
// alternate.
func (m *quickMemo) asciiRun(s string, i, need int, set *runeSet) int {
	slot := -1
	if m != nil {
		for k := range m.runs {
			r := &m.runs[k]
			if r.set != nil && r.from <= i && i <= r.end && (r.set == set || r.set.equal(set)) {
				if r.whole || r.end-i >= need {
					return r.end
				}
				slot = k
				break
			}
		}
	}
	j, from := i, i
	if slot >= 0 {
		j, from = m.runs[slot].end, m.runs[slot].from
	}
	for j < len(s) && j < i+need && s[j] < utf8.RuneSelf && s[j] != '\\' && set.ascii[s[j]] {
		j++
	}
	if m != nil {
		if slot < 0 {
			slot, m.next = m.next, (m.next+1)%len(m.runs)
		}
		r := &m.runs[slot]
		r.set, r.from, r.end = set, from, j
		r.whole = j < i+need
	}
	return j
}

// findSites returns, for every path through re, the first place where a
// keyword stands. A path is a sequence of parts; an alternation, an
// optional part or a class of a few letters met on the way is split into
// one path per choice.
func findSites(re *syntax.Regexp, kws []string) ([]site, bool) {
	type path struct {
		parts []*syntax.Regexp
		from  int
	}
	queue := []path{{flatten(re, nil), 0}}
	var out []site
	for len(queue) > 0 {
		pa := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		found := false
	scan:
		for p := pa.from; p < len(pa.parts); p++ {
			for _, kw := range kws {
				at, split := spells(pa.parts, p, kw)
				if split >= 0 {
					for _, alt := range choices(pa.parts[split]) {
						queue = append(queue, path{slices.Concat(pa.parts[:split], alt, pa.parts[split+1:]), p})
					}
					found = true
					break scan
				}
				if at != nil {
					before := slices.Clone(pa.parts[:p])
					slices.Reverse(before)
					after := pa.parts[p+len(kw):]
					st := site{kw: kw, at: at, before: sideOf(before, true), after: sideOf(after, false),
						wbBefore: boundaryNext(before), wbAfter: boundaryNext(after)}
					for _, side := range []*sideTest{&st.before, &st.after} {
						if side.maxFill < 0 && !disjoint(at, &side.fill) {
							*side = sideTest{} // an unbounded fill the keyword is made of
						}
					}
					out = append(out, st)
					found = true
					break scan
				}
			}
		}
		if !found || len(queue)+len(out) > maxPaths {
			return nil, false
		}
	}
	return out, len(out) > 0
}

// flatten appends to out the parts of re read one after another:
// concatenations and groups opened, literals split into characters.
func flatten(re *syntax.Regexp, out []*syntax.Regexp) []*syntax.Regexp {
	switch re.Op {
	case syntax.OpConcat:
		for _, s := range re.Sub {
			out = flatten(s, out)
		}
	case syntax.OpCapture:
		out = flatten(re.Sub[0], out)
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			out = append(out, &syntax.Regexp{Op: syntax.OpLiteral, Flags: re.Flags, Rune: []rune{r}})
		}
	default:
		out = append(out, re)
	}
	return out
}

// spells reports whether parts from p spell kw: one character part per
// byte, each admitting, of ASCII, that byte in one case or both. It
// returns what each part admits, or the index of the first part met that
// must be split into choices first (-1: none).
func spells(parts []*syntax.Regexp, p int, kw string) ([]runeSet, int) {
	out := make([]runeSet, len(kw))
	for j := range len(kw) {
		if p+j >= len(parts) {
			return nil, -1
		}
		n := parts[p+j]
		if n.Op != syntax.OpLiteral && n.Op != syntax.OpCharClass {
			// A choice is split only where one of its choices may
			// go on spelling kw.
			first := edgeChars(n, false)
			if choices(n) != nil && (nullable(n) || first.has(rune(kw[j])) || first.has(unicode.ToUpper(rune(kw[j])))) {
				return nil, p + j
			}
			return nil, -1
		}
		out[j] = charsOf(n)
		switch ls := lowers(&out[j]); {
		case ls == string(lowerByte[kw[j]]):
		case strings.IndexByte(ls, lowerByte[kw[j]]) >= 0 && choices(n) != nil:
			return nil, p + j
		default:
			return nil, -1
		}
	}
	return out, -1
}

// lowers returns the ASCII characters of a set, lower-cased, each once.
func lowers(rs *runeSet) string {
	var out []byte
	for c := range utf8.RuneSelf {
		if rs.ascii[c] && !slices.Contains(out, lowerByte[c]) {
			out = append(out, lowerByte[c])
		}
	}
	return string(out)
}

// maxLetterChoices is the most letters (up to case) a class may admit to
// be split into one path per letter.
const maxLetterChoices = 4

// choices returns the parts of each choice of an alternation, an optional
// part, or a class of 2 to maxLetterChoices ASCII letters (up to case,
// its other characters a choice of their own); nil for any other part.
func choices(n *syntax.Regexp) [][]*syntax.Regexp {
	switch {
	case n.Op == syntax.OpAlternate:
		var out [][]*syntax.Regexp
		for _, a := range n.Sub {
			out = append(out, flatten(a, nil))
		}
		return out
	case n.Op == syntax.OpQuest || n.Op == syntax.OpRepeat && n.Min == 0 && n.Max == 1:
		return [][]*syntax.Regexp{flatten(n.Sub[0], nil), nil}
	case n.Op == syntax.OpRepeat && n.Min >= 1 && !oneChar(n.Sub[0]):
		// x{m,M} is x then x{m-1,M-1}: one choice, which lets a
		// keyword run on into a repeated group (xox[pe](?:-[0-9]+){3}).
		rest := *n
		rest.Min--
		if rest.Max > 0 {
			rest.Max--
		}
		out := flatten(n.Sub[0], nil)
		if rest.Max != 0 {
			out = append(out, &rest)
		}
		return [][]*syntax.Regexp{out}
	case n.Op == syntax.OpCharClass:
		set := charsOf(n)
		ls := lowers(&set)
		if len(ls) < 2 || len(ls) > maxLetterChoices {
			return nil
		}
		var out [][]*syntax.Regexp
		for _, l := range []byte(ls) {
			var class []rune
			for c := range rune(utf8.RuneSelf) {
				if set.ascii[c] && lowerByte[c] == l {
					class = append(class, c, c)
				}
			}
			out = append(out, []*syntax.Regexp{{Op: syntax.OpCharClass, Rune: class}})
		}
		if len(set.wide) > 0 {
			out = append(out, []*syntax.Regexp{{Op: syntax.OpCharClass, Rune: slices.Clone(set.wide)}})
		}
		return out
	}
	return nil
}

// passes reports whether a keyword hit at [at, at+n) of s stands as the
// site requires.
func (st *site) passes(s string, at, n int, memo *quickMemo) bool {
	if n != len(st.kw) {
		return false
	}
	for j := range n {
		if c := s[at+j]; c >= utf8.RuneSelf || !st.at[j].ascii[c] {
			return false
		}
	}
	if st.wbBefore && !boundary(s, at) || st.wbAfter && !boundary(s, at+n) {
		return false
	}
	// Before first: for a keyword at the start of a value (NRJS-,
	// tfp_) what comes before tells, and for one in a name nothing is
	// required before it.
	return st.before.backward(s, at) && st.after.forward(s, at+n, memo)
}

// boundaryNext reports whether parts (read outwards from a site) start
// with a \b before any character.
func boundaryNext(parts []*syntax.Regexp) bool {
	for _, n := range parts {
		switch n.Op {
		case syntax.OpWordBoundary:
			return true
		case syntax.OpNoWordBoundary, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText, syntax.OpEmptyMatch:
		default:
			return false
		}
	}
	return false
}

// boundary reports whether \b may hold at s[i], as the regex reads the
// text: a backslash near it (a JSON escape, read decoded) passes.
func boundary(s string, i int) bool {
	if i < len(s) && s[i] == '\\' || strings.LastIndexByte(s[max(0, i-6):i], '\\') >= 0 {
		return true
	}
	return wordBoundaryAt(s, i)
}

// forward reports whether s from i may start what the side requires. A
// backslash passes: in a raw JSON text it starts an escape, which the
// regex reads decoded.
func (t *sideTest) forward(s string, i int, memo *quickMemo) bool {
	if len(t.seq) == 0 {
		return true
	}
	for k := 0; ; k++ {
		if t.skipFill && memo != nil {
			// No seq starts inside the fill: jump over its ASCII run.
			room := len(s)
			if t.maxFill >= 0 {
				room = t.maxFill - k + 1
			}
			end := memo.asciiRun(s, i, room, &t.fill)
			k, i = k+end-i, end
			if t.maxFill >= 0 && k > t.maxFill {
				return false
			}
		}
		if i >= len(s) {
			return t.seq[0].atEnd
		}
		c, w := s[i], 1
		var cls uint8
		if c < utf8.RuneSelf {
			if c == '\\' {
				return true
			}
			cls = t.class[c]
		} else {
			var r rune
			r, w = utf8.DecodeRuneInString(s[i:])
			cls = t.classOf(r)
		}
		if cls&startsSeq != 0 {
			if ok, end := t.seqFrom(s, i, memo); ok && (end < 0 || t.tail == nil || t.tail.forward(s, end, memo)) {
				return true
			}
		}
		if k == t.maxFill || cls&inFill == 0 {
			return false
		}
		i += w
	}
}

// seqFrom reports whether s from i holds seq, and where it ends (-1: a
// backslash, which passes). A run of one set (a repeat) is read through
// memo.
func (t *sideTest) seqFrom(s string, i int, memo *quickMemo) (bool, int) {
	for k := 0; k < len(t.seq); {
		set := &t.seq[t.runStart[k]]
		if need := t.runEnd[k] - k; need > 1 {
			end := memo.asciiRun(s, i, need, set)
			if have := end - i; have >= need {
				i, k = i+need, k+need
				continue
			} else {
				i, k = end, k+have
			}
		}
		if i >= len(s) {
			return set.atEnd, -1
		}
		if s[i] == '\\' {
			return true, -1
		}
		r, w := runeAt(s, i)
		if !set.has(r) {
			return false, 0
		}
		i, k = i+w, k+1
	}
	return true, i
}

// backward reports whether s up to i may end with what the side
// requires. A character that may end a JSON escape (a backslash within
// the six bytes before it) passes.
func (t *sideTest) backward(s string, i int) bool {
	if len(t.seq) == 0 {
		return true
	}
	for k := 0; ; k++ {
		if i <= 0 {
			return false
		}
		if strings.LastIndexByte(s[max(0, i-6):i], '\\') >= 0 {
			return true
		}
		r, w := utf8.DecodeLastRuneInString(s[:i])
		cls := t.classOf(r)
		if cls&startsSeq != 0 && t.seqBefore(s, i) {
			return true
		}
		if k == t.maxFill || cls&inFill == 0 {
			return false
		}
		i -= w
	}
}

func (t *sideTest) seqBefore(s string, i int) bool {
	for k := range t.seq {
		if strings.LastIndexByte(s[max(0, i-6):i], '\\') >= 0 {
			return true
		}
		if i <= 0 {
			return false
		}
		r, w := utf8.DecodeLastRuneInString(s[:i])
		if !t.seq[k].has(r) {
			return false
		}
		i -= w
	}
	return true
}

// runeAt decodes the character at s[i] as the regexp package does (an
// invalid byte is utf8.RuneError).
func runeAt(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// sideOf derives what parts (read outwards from a site: backwards when
// back) require: the parts that may match nothing are fill, as long as
// they are bounded; from the first that must match a character on, the
// characters every match has in turn.
func sideOf(parts []*syntax.Regexp, back bool) sideTest { return sideFrom(parts, back, 0) }

func sideFrom(parts []*syntax.Regexp, back bool, depth int) sideTest {
	var t sideTest
	for i, n := range parts {
		if !nullable(n) || !back && endOr(n) {
			var rest []*syntax.Regexp
			t.seq, rest = fixedChars(parts[i:], back)
			t.runStart, t.runEnd = make([]int, len(t.seq)), make([]int, len(t.seq))
			for k := range t.seq {
				if k > 0 && t.seq[k].equal(&t.seq[k-1]) {
					t.runStart[k] = t.runStart[k-1]
				} else {
					t.runStart[k] = k
				}
			}
			for k := len(t.seq) - 1; k >= 0; k-- {
				if k+1 < len(t.seq) && t.runStart[k+1] == t.runStart[k] {
					t.runEnd[k] = t.runEnd[k+1]
				} else {
					t.runEnd[k] = k + 1
				}
			}
			for c := range rune(utf8.RuneSelf) {
				if t.fill.has(c) {
					t.class[c] |= inFill
				}
				if t.seq[0].has(c) {
					t.class[c] |= startsSeq
				}
			}
			t.skipFill = true
			for c := range t.class {
				if t.class[c] == inFill|startsSeq {
					t.skipFill = false
				}
			}
			if rest != nil && !back && depth < maxTails {
				if tail := sideFrom(rest, back, depth+1); len(tail.seq) > 0 && tail.maxFill >= 0 {
					t.tail = &tail
				}
			}
			return t
		}
		m, ok := maxChars(n)
		switch {
		case !ok:
			t.maxFill = -1
		case t.maxFill >= 0:
			t.maxFill += m
		}
		t.fill.union(allChars(n))
	}
	return sideTest{}
}

// disjoint reports whether some character of a site admits no character
// of fill: then a run of fill from one hit ends before the next hit of
// the same keyword, so an unbounded fill is read once per byte in all.
func disjoint(at []runeSet, fill *runeSet) bool {
	for j := range at {
		if !slices.ContainsFunc(at[j].ascii[:], func(b bool) bool { return b }) {
			continue
		}
		clash := false
		for c := range at[j].ascii {
			clash = clash || at[j].ascii[c] && fill.ascii[c]
		}
		if !clash {
			return true
		}
	}
	return false
}

// fixedChars returns the characters every match of parts (read
// backwards when back) has at its start, in turn, at most maxSeq: of
// one-character parts and the least repeats of them, and where a part
// of another kind comes first, the characters it may start with. When
// the characters end in a repeat of varying length, rest is the rest of
// it and the parts after it.
func fixedChars(parts []*syntax.Regexp, back bool) (out []runeSet, rest []*syntax.Regexp) {
	var flat []*syntax.Regexp
	for _, n := range parts {
		sub := flatten(n, nil)
		if back {
			slices.Reverse(sub)
		}
		flat = append(flat, sub...)
	}
	for i, p := range flat {
		switch {
		case oneChar(p):
			out = append(out, charsOf(p))
		case (p.Op == syntax.OpRepeat && p.Min >= 1 || p.Op == syntax.OpPlus) && oneChar(p.Sub[0]):
			least, most := 1, -1
			if p.Op == syntax.OpRepeat {
				least, most = p.Min, p.Max
			}
			set := charsOf(p.Sub[0])
			if len(out)+least > maxSeq {
				for len(out) < maxSeq {
					out = append(out, set)
				}
				return out, nil // the rest of the repeat is not read
			}
			for range least {
				out = append(out, set)
			}
			if most != least {
				more := -1
				if most >= 0 {
					more = most - least
				}
				return out, slices.Concat([]*syntax.Regexp{{Op: syntax.OpRepeat, Min: 0, Max: more, Sub: p.Sub}}, flat[i+1:])
			}
		case !back && endOr(p):
			// (?:[\x60'"\s;]|\\[nr]|$): one of its first characters, or
			// the end of the text; it ends the seq.
			set := edgeChars(p, false)
			set.atEnd = true
			set.ascii['"'] = true // where a raw JSON string ends
			return append(out, set), nil
		default:
			if len(out) == 0 {
				out = append(out, edgeChars(parts[0], back))
			}
			return out, nil
		}
		if len(out) >= maxSeq {
			return out[:maxSeq], nil
		}
	}
	return out, nil
}

// endOr reports whether re is an alternation whose only empty choice is
// the end of the text ($ without (?m)).
func endOr(re *syntax.Regexp) bool {
	if re.Op != syntax.OpAlternate {
		return false
	}
	end := false
	for _, a := range re.Sub {
		switch {
		case a.Op == syntax.OpEndText:
			end = true
		case nullable(a):
			return false
		}
	}
	return end
}

// oneChar reports whether re matches exactly one character.
func oneChar(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune) == 1
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return true
	}
	return false
}

// nullable reports whether re matches the empty string.
func nullable(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune) == 0
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL, syntax.OpNoMatch:
		return false
	case syntax.OpCapture, syntax.OpPlus:
		return nullable(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min == 0 || nullable(re.Sub[0])
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if !nullable(s) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		return slices.ContainsFunc(re.Sub, nullable)
	}
	return true // empty match, star, quest, and the empty-width assertions
}

// maxChars is the most characters re matches, ok false when unbounded.
func maxChars(re *syntax.Regexp) (int, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune), true
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1, true
	case syntax.OpCapture, syntax.OpQuest:
		return maxChars(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		return 0, false
	case syntax.OpRepeat:
		m, ok := maxChars(re.Sub[0])
		return m * re.Max, ok && re.Max >= 0
	case syntax.OpConcat, syntax.OpAlternate:
		total := 0
		for _, s := range re.Sub {
			m, ok := maxChars(s)
			if !ok {
				return 0, false
			}
			if re.Op == syntax.OpConcat {
				total += m
			} else {
				total = max(total, m)
			}
		}
		return total, true
	}
	return 0, true
}

// allChars is every character re may match.
func allChars(re *syntax.Regexp) runeSet {
	var out runeSet
	switch re.Op {
	case syntax.OpLiteral, syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		if re.Op == syntax.OpLiteral {
			for _, r := range re.Rune {
				out.union(charsOf(&syntax.Regexp{Op: syntax.OpLiteral, Flags: re.Flags, Rune: []rune{r}}))
			}
			return out
		}
		return charsOf(re)
	}
	for _, s := range re.Sub {
		out.union(allChars(s))
	}
	return out
}

// edgeChars is every character a non-empty match of re may start with
// (end with, when last).
func edgeChars(re *syntax.Regexp, last bool) runeSet {
	var out runeSet
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) > 0 {
			r := re.Rune[0]
			if last {
				r = re.Rune[len(re.Rune)-1]
			}
			return charsOf(&syntax.Regexp{Op: syntax.OpLiteral, Flags: re.Flags, Rune: []rune{r}})
		}
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return charsOf(re)
	case syntax.OpCapture, syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		return edgeChars(re.Sub[0], last)
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			out.union(edgeChars(s, last))
		}
	case syntax.OpConcat:
		subs := slices.Clone(re.Sub)
		if last {
			slices.Reverse(subs)
		}
		for _, s := range subs {
			out.union(edgeChars(s, last))
			if !nullable(s) {
				break
			}
		}
	}
	return out
}

// runeSet is a set of characters: ASCII in a table, the rest as sorted
// ranges (lo, hi pairs).
type runeSet struct {
	ascii [utf8.RuneSelf]bool
	wide  []rune
	// atEnd: the end of the text passes too (a last part such as
	// (?:[\s;]|$), read as a seq's last character).
	atEnd bool
}

// charsOf is the set of characters a one-character part matches.
func charsOf(re *syntax.Regexp) runeSet {
	var out runeSet
	switch re.Op {
	case syntax.OpLiteral:
		r := re.Rune[0]
		out.addRange(r, r)
		if re.Flags&syntax.FoldCase != 0 {
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				out.addRange(f, f)
			}
		}
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			out.addRange(re.Rune[i], re.Rune[i+1])
		}
	case syntax.OpAnyCharNotNL:
		out.addRange(0, '\n'-1)
		out.addRange('\n'+1, unicode.MaxRune)
	case syntax.OpAnyChar:
		out.addRange(0, unicode.MaxRune)
	}
	return out
}

func (rs *runeSet) equal(o *runeSet) bool {
	return rs.ascii == o.ascii && slices.Equal(rs.wide, o.wide) && rs.atEnd == o.atEnd
}

func (rs *runeSet) addRange(lo, hi rune) {
	for c := lo; c <= hi && c < utf8.RuneSelf; c++ {
		rs.ascii[c] = true
	}
	if hi >= utf8.RuneSelf {
		rs.wide = append(rs.wide, max(lo, utf8.RuneSelf), hi)
	}
}

func (rs *runeSet) union(o runeSet) {
	for c, in := range o.ascii {
		rs.ascii[c] = rs.ascii[c] || in
	}
	rs.wide = append(rs.wide, o.wide...)
}

// has reports whether r is in the set. An invalid byte reads as
// utf8.RuneError, as it does to the regexp package.
func (rs *runeSet) has(r rune) bool {
	if r < utf8.RuneSelf {
		return rs.ascii[r]
	}
	for i := 0; i+1 < len(rs.wide); i += 2 {
		if rs.wide[i] <= r && r <= rs.wide[i+1] {
			return true
		}
	}
	return false
}

// maxNeeds and maxNeedChars bound mustHold's sets.
const (
	maxNeeds     = 4
	maxNeedChars = 16
)

// mustHold returns sets of ASCII characters (at most maxNeeds, each of at
// most maxNeedChars, those without letters and the smallest first) one
// of each of which every match of expr holds: its one-character parts
// that no path avoids.
func mustHold(expr string) []string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range flatten(re, nil) {
		if (p.Op == syntax.OpRepeat && p.Min >= 1 || p.Op == syntax.OpPlus) && oneChar(p.Sub[0]) {
			p = p.Sub[0]
		}
		if !oneChar(p) {
			continue
		}
		set := charsOf(p)
		var chars []byte
		for c := range byte(utf8.RuneSelf) {
			if set.ascii[c] {
				chars = append(chars, c)
			}
		}
		if len(set.wide) == 0 && len(chars) <= maxNeedChars && !slices.Contains(out, string(chars)) {
			out = append(out, string(chars))
		}
	}
	// Letters last: text is made of them, and of a flood of the
	// keyword; a digit, a slash or a dot tells more.
	letters := func(set string) int {
		if strings.ContainsFunc(set, unicode.IsLetter) {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Or(letters(a)-letters(b), len(a)-len(b)) })
	return out[:min(len(out), maxNeeds)]
}

package policy

import (
	"fmt"
	"hash"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpguard/mcpguard/policy/approval"
	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/rules"
	"github.com/mcpguard/mcpguard/rules/canon"
)

type segmentKind uint8

const (
	segName      segmentKind = iota // a member, matched by name
	segAnyMember                    // *: every member of an object
	segAnyDepth                     // **: every string at any depth, member names included
	segIndex                        // [N]
	segAnyIndex                     // [*]
)

type segment struct {
	kind  segmentKind
	name  string
	key   string // egress: name as a reader sees it (canon.Visible)
	index int
}

// Selector addresses values inside the arguments (ingress) or the result
// (egress): member names, `[*]` for every array element, `[N]` for one, `*`
// for every member of an object, `**` for every string at any depth with
// member names included.
//
// Wildcards select whatever container they meet: `[*]` and `[N]` over an
// object select every member ({"0": "/etc/passwd"}, {"/etc/passwd": 1}), `*`
// over an array every element, and either over a lone value that value.
// When a wildcard is the last step, the member names it passes are selected
// too: a server that iterates an object where a list was expected (Python's
// for x in obj) reads its names.
//
// Member names match under Unicode case folding (`path` selects `PATH` and
// `Path` too): servers decoding with Go's encoding/json read those as the
// same field, so a check must see them all.
type Selector struct {
	text string
	segs []segment
}

func (s Selector) String() string { return s.text }

// ParseSelector parses selector text such as `testArgs[*]`,
// `structuredContent.files[*].file` or `**`.
func ParseSelector(text string) (Selector, error) {
	sel := Selector{text: text}
	rest := text
	for first := true; ; first = false {
		if !first {
			if rest == "" {
				break
			}
			if rest[0] != '.' {
				return Selector{}, fmt.Errorf("selector %q: expected '.' or '[' before %q", text, rest)
			}
			rest = rest[1:]
		}
		end := strings.IndexAny(rest, ".[")
		if end < 0 {
			end = len(rest)
		}
		name := rest[:end]
		rest = rest[end:]
		switch name {
		case "":
			if !strings.HasPrefix(rest, "[") || !first {
				return Selector{}, fmt.Errorf("selector %q: empty member name", text)
			}
		case "*":
			sel.segs = append(sel.segs, segment{kind: segAnyMember})
		case "**":
			sel.segs = append(sel.segs, segment{kind: segAnyDepth})
		default:
			if strings.ContainsAny(name, "]*") {
				return Selector{}, fmt.Errorf("selector %q: bad member name %q", text, name)
			}
			sel.segs = append(sel.segs, segment{kind: segName, name: name, key: canon.Visible(name)})
		}
		for strings.HasPrefix(rest, "[") {
			close := strings.IndexByte(rest, ']')
			if close < 0 {
				return Selector{}, fmt.Errorf("selector %q: unclosed '['", text)
			}
			inner := rest[1:close]
			rest = rest[close+1:]
			if inner == "*" {
				sel.segs = append(sel.segs, segment{kind: segAnyIndex})
				continue
			}
			n, err := strconv.Atoi(inner)
			if err != nil || n < 0 {
				return Selector{}, fmt.Errorf("selector %q: index must be * or a number, not %q", text, inner)
			}
			sel.segs = append(sel.segs, segment{kind: segIndex, index: n})
		}
		if rest == "" {
			break
		}
	}
	if len(sel.segs) == 0 {
		return Selector{}, fmt.Errorf("selector %q is empty", text)
	}
	return sel, nil
}

// endsInName reports whether the selector's last step names one member or
// one index (`path`, `args[1]`) rather than a wildcard.
func (s Selector) endsInName() bool {
	k := s.segs[len(s.segs)-1].kind
	return k == segName || k == segIndex
}

// match is one value a selector reached. path is only valid during the
// callback: it is rendered (renderPath) only when a check fails.
type match struct {
	path   []pathElem
	node   int32  // the value reached, in the walker's tree
	name   string // the member name reached (isName)
	isName bool   // a member name (only under **), in name, not node
}

// text is the string a match holds, if it holds one.
func (w *walker) text(m match) (string, bool) {
	if m.isName {
		return m.name, true
	}
	n := &w.tree.nodes[m.node]
	return n.str, n.kind == argString
}

// walker walks selectors over a call's argument tree and judges every
// value they reach with one rule; the first rejection stops the walk. One
// walker serves a whole evaluation (reset per rule and selector) so that
// judging a call does not allocate per value. Object members are visited
// in document order; with sorted, in name order, which is what a
// rejection reports: the evaluator walks in document order and walks again
// sorted only to report a failure, so that the field a rejection names does
// not depend on how the agent ordered its members.
type walker struct {
	tree      argTree
	rule      *ingressRule
	tool      string
	validated bool // a JSON Schema accepted the arguments
	named     bool // the selector names one field: a container there is type confusion
	sorted    bool
	// reordered: the walk met an object of more than one member, whose
	// name order a sorted walk may visit differently.
	reordered bool
	rej       *message.Rejection
	path      []pathElem
	session   judge    // whose client roots path_scope also reads relative paths against
	bases     []string // those roots, for this evaluation
	extra     []string // roots the call itself carries (inputResponses)
	// scopeRule's check and roots with extra among them (requestScope),
	// built once per rule and evaluation.
	scopeRule  *ingressRule
	scope      rules.Check
	scopeRoots []string
	// key, when set, gets every value the walk reaches instead of the
	// rule's check: a rate_limit rule's key (limitKey).
	key  hash.Hash
	asks []approval.Reason // the ask rules (action: ask) whose check failed
}

// judgeSelector walks sel over the arguments with rule r and returns the
// first rejection.
func (w *walker) judgeSelector(r *ingressRule, sel *Selector, sorted bool) *message.Rejection {
	w.rule, w.named, w.sorted, w.reordered, w.rej, w.path = r, sel.endsInName(), sorted, false, nil, w.path[:0]
	w.walk(sel.segs, 0)
	return w.rej
}

// reachesNothing reports, cheaply, that sel selects nothing in the
// arguments because it starts with a member name the arguments do not
// have in any case: most rules of a policy name fields a given call does
// not carry, and this spares them a walk.
func (w *walker) reachesNothing(sel *Selector) bool {
	if sel.segs[0].kind != segName {
		return false
	}
	_, matches := w.foldMembers(0, sel.segs[0].name)
	return matches == 0
}

// foldMembers counts the members of node i whose name equals name under
// case folding, and returns the first of them; a node that is not an
// object has none.
func (w *walker) foldMembers(i int32, name string) (first int32, matches int) {
	nodes := w.tree.nodes
	if nodes[i].kind != argObject {
		return -1, 0
	}
	first = -1
	for c := i + 1; c < nodes[i].end; c = nodes[c].end {
		if strings.EqualFold(nodes[c].name, name) {
			if matches == 0 {
				first = c
			}
			matches++
		}
	}
	return first, matches
}

// members calls fn with each member of object i (name order when the walk
// is sorted) until a check fails.
func (w *walker) members(i int32, fn func(c int32)) {
	if !w.sorted {
		if end := w.tree.nodes[i].end; i+1 < end && w.tree.nodes[i+1].end < end {
			w.reordered = true
		}
		for c := i + 1; c < w.tree.nodes[i].end && w.rej == nil; c = w.tree.nodes[c].end {
			fn(c)
		}
		return
	}
	for _, c := range w.sortedMembers(i, func(int32) bool { return true }) {
		if w.rej != nil {
			return
		}
		fn(c)
	}
}

// sortedMembers lists the members of object i that keep accepts, in name
// order. The list is fresh: the walk recurses while it is in use.
func (w *walker) sortedMembers(i int32, keep func(c int32) bool) []int32 {
	nodes := w.tree.nodes
	var out []int32
	for c := i + 1; c < nodes[i].end; c = nodes[c].end {
		if keep(c) {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(a, b int) bool { return nodes[out[a]].name < nodes[out[b]].name })
	return out
}

// emit reports the value at node i.
func (w *walker) emit(i int32) {
	if w.key != nil {
		w.keyValue(i, "", false)
		return
	}
	if w.rej == nil {
		w.rej = w.judge(match{path: w.path, node: i})
	}
}

func (w *walker) emitName(k string) {
	if w.key != nil {
		w.keyValue(0, k, true)
		return
	}
	if w.rej == nil {
		w.rej = w.judge(match{path: w.path, name: k, isName: true})
	}
}

func (w *walker) into(e pathElem, segs []segment, i int32) {
	w.path = append(w.path, e)
	w.walk(segs, i)
	w.path = w.path[:len(w.path)-1]
}

func (w *walker) intoMember(segs []segment, c int32) {
	w.into(pathElem{name: w.tree.nodes[c].name, index: -1}, segs, c)
}

// intoElements walks segs from every element of array i.
func (w *walker) intoElements(segs []segment, i int32) {
	nodes := w.tree.nodes
	for c, k := i+1, 0; c < nodes[i].end && w.rej == nil; c, k = nodes[c].end, k+1 {
		w.into(pathElem{index: k}, segs, c)
	}
}

func (w *walker) walk(segs []segment, i int32) {
	if w.rej != nil {
		return
	}
	if len(segs) == 0 {
		w.emit(i)
		return
	}
	nodes := w.tree.nodes
	kind := nodes[i].kind
	seg, rest := segs[0], segs[1:]
	switch seg.kind {
	case segName:
		// Usually one member matches; sort only when fold variants add more.
		first, matches := w.foldMembers(i, seg.name)
		switch {
		case matches == 1:
			w.intoMember(rest, first)
		case matches > 1:
			folds := func(c int32) bool { return strings.EqualFold(nodes[c].name, seg.name) }
			for _, c := range w.sortedMembers(i, folds) {
				w.intoMember(rest, c)
			}
		}
	case segAnyMember:
		switch kind {
		case argObject:
			w.everyMember(rest, i)
		case argArray: // JavaScript reads an array as an object with index keys
			w.intoElements(rest, i)
		default:
			w.walk(rest, i) // shape confusion: see below
		}
	case segIndex, segAnyIndex:
		switch kind {
		case argObject:
			// Shape confusion: {"0": "/etc/passwd"} or {"/etc/passwd": 1}
			// where a list was expected. JavaScript reads x[0] as x["0"],
			// Python iterates a dict's names, Object.values its values: every
			// member is selected, name and value.
			w.everyMember(rest, i)
			return
		case argArray:
		default:
			// Shape confusion: "--inspect" where ["--inspect"] was
			// expected. A lenient server may take a lone string for a
			// one-element list, so the string is checked as the element
			// would have been.
			w.walk(rest, i)
			return
		}
		if seg.kind == segAnyIndex {
			w.intoElements(rest, i)
			return
		}
		for c, k := i+1, 0; c < nodes[i].end; c, k = nodes[c].end, k+1 {
			if k == seg.index {
				w.into(pathElem{index: k}, rest, c)
				return
			}
		}
	case segAnyDepth:
		if len(rest) > 0 {
			// `a.**.b`: b at any depth below.
			w.walk(rest, i)
			switch kind {
			case argObject:
				w.members(i, func(c int32) { w.intoMember(segs, c) })
			case argArray:
				w.intoElements(segs, i)
			}
			return
		}
		w.allStrings(i)
	}
}

// everyMember walks segs from every member of object i; when segs is
// empty (the wildcard was the selector's last step) each member's name is
// selected too, since a server iterating the object may read names.
func (w *walker) everyMember(segs []segment, i int32) {
	w.members(i, func(c int32) {
		if len(segs) == 0 {
			name := w.tree.nodes[c].name
			w.path = append(w.path, pathElem{name: name, index: -1})
			w.emitName(name)
			w.path = w.path[:len(w.path)-1]
		}
		w.intoMember(segs, c)
	})
}

// allStrings reaches every string at or under node i, member names included.
func (w *walker) allStrings(i int32) {
	switch w.tree.nodes[i].kind {
	case argString:
		w.emit(i)
	case argObject:
		w.members(i, func(c int32) {
			name := w.tree.nodes[c].name
			w.path = append(w.path, pathElem{name: name, index: -1})
			w.emitName(name)
			w.allStrings(c)
			w.path = w.path[:len(w.path)-1]
		})
	case argArray:
		nodes := w.tree.nodes
		for c, k := i+1, 0; c < nodes[i].end && w.rej == nil; c, k = nodes[c].end, k+1 {
			w.path = append(w.path, pathElem{index: k})
			w.allStrings(c)
			w.path = w.path[:len(w.path)-1]
		}
	}
}

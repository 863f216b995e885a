package policy

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpguard/mcpguard/message"
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
	index int
}

// Selector addresses values inside the arguments (ingress) or the result
// (egress): member names, `[*]` for every array element, `[N]` for one, `*`
// for every member of an object, `**` for every string at any depth with
// member names included.
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
			sel.segs = append(sel.segs, segment{kind: segName, name: name})
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
	value  any    // the value reached; nil for a member name
	name   string // the member name reached (isName)
	isName bool   // a member name (only under **), in name, not value
}

// text is the string a match holds, if it holds one.
func (m match) text() (string, bool) {
	if m.isName {
		return m.name, true
	}
	s, ok := m.value.(string)
	return s, ok
}

// walker walks selectors over decoded arguments and judges every value
// they reach with one rule; the first rejection stops the walk. One walker
// serves a whole evaluation (reset per rule and selector) so that judging
// a call does not allocate per value. With sorted, object members are
// visited in name order, so the first failure is the same on every run;
// without, in map order, which costs no allocation (the evaluator walks
// unsorted and walks again sorted only to report a failure).
type walker struct {
	rule      *ingressRule
	tool      string
	validated bool // a JSON Schema accepted the arguments
	named     bool // the selector names one field: a container there is type confusion
	sorted    bool
	rej       *message.Rejection
	path      []pathElem

	// The arguments' own member names, listed once per evaluation: most
	// selectors start with a name, and finding its fold variants by
	// ranging over the map for every rule cost more than the checks.
	atTop    bool
	topNames []string
	topKnown bool
}

// judgeSelector walks sel over args with rule r and returns the first
// rejection.
func (w *walker) judgeSelector(r *ingressRule, sel Selector, args any, sorted bool) *message.Rejection {
	w.rule, w.named, w.sorted, w.rej, w.path = r, sel.endsInName(), sorted, nil, w.path[:0]
	w.atTop = true
	w.walk(sel.segs, args)
	return w.rej
}

// keys returns the member names of m, sorted when the walk is.
func (w *walker) keys(m map[string]any, fn func(k string)) {
	if !w.sorted {
		for k := range m {
			if w.rej != nil {
				return
			}
			fn(k)
		}
		return
	}
	for _, k := range sortedKeys(m) {
		if w.rej != nil {
			return
		}
		fn(k)
	}
}

// emit reports a value; v is passed as the interface it already is, so
// no string is boxed again.
func (w *walker) emit(v any) {
	if w.rej == nil {
		w.rej = w.judge(match{path: w.path, value: v})
	}
}

func (w *walker) emitName(k string) {
	if w.rej == nil {
		w.rej = w.judge(match{path: w.path, name: k, isName: true})
	}
}

func (w *walker) into(e pathElem, segs []segment, v any) {
	w.path = append(w.path, e)
	w.walk(segs, v)
	w.path = w.path[:len(w.path)-1]
}

func (w *walker) walk(segs []segment, v any) {
	atTop := w.atTop
	w.atTop = false
	if w.rej != nil {
		return
	}
	if len(segs) == 0 {
		w.emit(v)
		return
	}
	seg, rest := segs[0], segs[1:]
	switch seg.kind {
	case segName:
		obj, ok := v.(map[string]any)
		if !ok {
			return
		}
		// Usually one member matches; sort only when fold variants add more.
		var first string
		var more []string
		consider := func(k string) {
			if strings.EqualFold(k, seg.name) {
				if first == "" && more == nil {
					first = k
				} else {
					more = append(more, k)
				}
			}
		}
		if atTop {
			for _, k := range w.argumentNames(obj) {
				consider(k)
			}
		} else {
			for k := range obj {
				consider(k)
			}
		}
		if more != nil {
			more = append(more, first)
			sort.Strings(more)
			for _, k := range more {
				w.into(pathElem{name: k, index: -1}, rest, obj[k])
			}
		} else if first != "" {
			w.into(pathElem{name: first, index: -1}, rest, obj[first])
		}
	case segAnyMember:
		switch x := v.(type) {
		case map[string]any:
			w.keys(x, func(k string) { w.into(pathElem{name: k, index: -1}, rest, x[k]) })
		case []any: // JavaScript reads an array as an object with index keys
			for i, e := range x {
				w.into(pathElem{index: i}, rest, e)
			}
		default:
			w.walk(rest, v) // shape confusion: see below
		}
	case segIndex, segAnyIndex:
		arr, ok := v.([]any)
		if !ok {
			if _, isObj := v.(map[string]any); !isObj {
				// Shape confusion: "--inspect" where ["--inspect"] was
				// expected. A lenient server may take a lone string for
				// a one-element list, so the string is checked as the
				// element would have been.
				w.walk(rest, v)
			}
			return
		}
		if seg.kind == segIndex {
			if seg.index < len(arr) {
				w.into(pathElem{index: seg.index}, rest, arr[seg.index])
			}
			return
		}
		for i, e := range arr {
			w.into(pathElem{index: i}, rest, e)
		}
	case segAnyDepth:
		if len(rest) > 0 {
			// `a.**.b`: b at any depth below.
			w.walk(rest, v)
			switch x := v.(type) {
			case map[string]any:
				w.keys(x, func(k string) { w.into(pathElem{name: k, index: -1}, segs, x[k]) })
			case []any:
				for i, e := range x {
					w.into(pathElem{index: i}, segs, e)
				}
			}
			return
		}
		w.allStrings(v)
	}
}

// argumentNames returns the member names of the arguments object, listed
// on the first call of an evaluation.
func (w *walker) argumentNames(obj map[string]any) []string {
	if !w.topKnown {
		w.topNames, w.topKnown = w.topNames[:0], true
		for k := range obj {
			w.topNames = append(w.topNames, k)
		}
	}
	return w.topNames
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// allStrings reaches every string under v, member names included.
func (w *walker) allStrings(v any) {
	switch x := v.(type) {
	case string:
		w.emit(v)
	case map[string]any:
		w.keys(x, func(k string) {
			w.path = append(w.path, pathElem{name: k, index: -1})
			w.emitName(k)
			w.allStrings(x[k])
			w.path = w.path[:len(w.path)-1]
		})
	case []any:
		for i, e := range x {
			w.path = append(w.path, pathElem{index: i})
			w.allStrings(e)
			w.path = w.path[:len(w.path)-1]
		}
	}
}

package policy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/rules/canon"
	"github.com/mcpguard/mcpguard/rules/rawjson"
)

// Egress returns the bytes to forward to the agent for a message from the
// server: m.Raw itself, byte for byte, when nothing changes. call is the
// request a response answers (see Session.CallOf), nil when unknown or
// not a response.
//
// Every string the server sends (results, error messages and data,
// notifications, the params of server→client requests; member names too)
// goes through one pipeline, egressString: the canonicalisers of the
// egress rules that select it, then `text`. Rules select fields of
// tools/call results, and of tasks/result results by the tool that
// created the task, by the member names the client will read (after
// `text`, invisible code points aside), so a name that only looks
// different to the proxy (file\u0000, file\u200b) cannot dodge them.
//
// The envelope's jsonrpc, id and method route the message and are not
// rewritten; a server→client request or notification whose method is not
// a plain protocol name, or whose string id holds anything `text` would
// change, is refused (an error) rather than relayed: the client hands
// both to application code and logs as they are.
//
// A response to a tools/call (or tasks/result) gives the agent session
// the labels of its tool, and private when a credential was redacted
// from it (see learnResult).
func (s *Session) Egress(m *message.Message, call *Call) ([]byte, []Rewrite, error) {
	return s.EgressAfter(m, call, Head{})
}

// EgressAfter is Egress for a message whose head a HeadCheck judged while
// the rest of the line arrived (HeadCheck.Done): the checks read only what
// it did not. The verdict is Egress's. A head counts only when m.Raw is the
// line it was found in, from its first byte (see Head.of).
func (s *Session) EgressAfter(m *message.Message, call *Call, head Head) ([]byte, []Rewrite, error) {
	j := s.now()
	out, rewrites, err := j.egress(m, call, head.of(m.Raw))
	if err == nil && call != nil && m.Kind == message.Response && m.Result != nil && !(call.Task && call.Method == "tools/call") &&
		(j.policy().labelled || call.outside || len(rewrites) > 0) { // else learnResult learns nothing
		j.learnResult(call, rewrites)
	}
	return out, rewrites, err
}

func (s judge) egress(m *message.Message, call *Call, head Head) ([]byte, []Rewrite, error) {
	if m.Kind != message.Response {
		if err := checkRouting(m); err != nil {
			return nil, nil, err
		}
	}
	esc := m.Escapes()
	// The member names the checks below look for: the parser's record
	// for m's own text, searched again in a text egress rewrote.
	members := m.Members()
	var early *earlyVerdict
	if len(m.Raw) >= concurrentMin {
		early = s.judgeEarly(m, call, esc, members, head)
		defer early.wait() // nothing reads m.Raw once egress returns
	}
	if m.Kind == message.Response && m.Result != nil && members&message.MemberInputRequests != 0 {
		if reason := s.inputRequests(m.Result); reason != "" {
			return nil, nil, errors.New(reason)
		}
	}
	raw := m.Raw
	// The parser's one pass already knows, for most messages, that no
	// string holds anything text could change (it applies to m.Raw only).
	plain := m.TextPlain
	var rewrites []Rewrite
	var rules []*egressRule
	if call != nil && m.Kind == message.Response && m.Result != nil {
		// Cases in order, the usual reply first: one comparison, where a
		// switch on the string searches every case's text.
		switch method := call.Method; {
		case method == "tools/call":
			rules = s.policy().egressFor(call.Tool)
			if call.Task {
				s.noteTask(call.Tool, m.Result)
			}
		case method == "tools/list":
			var err error
			if raw, rewrites, err = s.toolsList(m); err != nil {
				return nil, nil, err
			}
			plain, esc, head = false, rawjson.ScanEscapes(raw), Head{}
			members = message.MembersIn(raw, esc)
		case method == "tasks/result":
			if call.Tool == "" && s.policy().hasEgressRules() {
				return nil, nil, errUnknownTask
			}
			rules = s.policy().egressFor(call.Tool)
		case method == "prompts/list" || method == "resources/list" || method == "resources/templates/list" ||
			method == "initialize" || method == "server/discover":
			out, err := s.pinResult(m, call.Method)
			if err != nil {
				return nil, nil, err
			}
			if out != nil {
				raw, plain, esc, head = out, false, rawjson.ScanEscapes(out), Head{}
				members = message.MembersIn(raw, esc)
			}
		}
	}
	// After text, every string goes through the secrets and links filter
	// of the tool that answers (or of the policy).
	ef := s.policy().egressFilterOf(call)
	var clean bool
	switch {
	case early != nil:
		clean = early.wait()
	case len(rules) == 0:
		clean = unchanged(raw, esc, members, plain, head, ef)
	}
	if clean {
		return raw, rewrites, nil
	}
	out, more, err := rewriteStrings(raw, rules, ef)
	if err != nil {
		return nil, nil, err
	}
	if len(more) == 0 {
		return raw, rewrites, nil // suspect code points that text keeps where they stand
	}
	return out, append(rewrites, more...), nil
}

// unchanged reports whether no string of a validated message can change
// on its way to the client, looking at its raw bytes: nothing text would
// change or judge (plain: the parser found every string plain, see
// message.Message.TextPlain; else needsText), and ef's secrets and links
// checks find nothing (esc are raw's escapes, members the names of
// message.MemberSet it may have; head what a HeadCheck found in it). The
// text check goes first, so that a
// message it sends to be rewritten is not scanned for secrets and links
// as well. A message of concurrentMin bytes or more then has its links
// and its secrets judged at once, the links on a goroutine of their own
// beside the secrets check, which splits its own work further.
func unchanged(raw []byte, esc rawjson.Escapes, members message.MemberSet, plain bool, head Head, ef egressFilter) bool {
	if !plain && (head.needsText || needsText(raw[head.text:])) {
		return false
	}
	if len(raw) < concurrentMin || ef.lf == nil || runtime.GOMAXPROCS(0) < 2 {
		return ef.linksClean(raw, esc, members, head.imagesClean()) && ef.secretsClean(raw, esc)
	}
	var links bool
	var wg sync.WaitGroup
	wg.Go(func() { links = ef.linksClean(raw, esc, members, head.imagesClean()) })
	clean := ef.secretsClean(raw, esc)
	wg.Wait()
	return clean && links
}

// concurrentMin is the size from which egress judges a message on every
// core: below it, a goroutine costs more than it saves.
const concurrentMin = 256 << 10

// earlyVerdict is the verdict of unchanged on a long result, worked out
// on other goroutines while egress reads the rest of the message (whether
// it may hold inputRequests, what its call selects).
type earlyVerdict struct {
	ch    chan bool
	done  bool
	clean bool
}

// judgeEarly starts unchanged on m when it is a result of concurrentMin
// bytes or more that egress forwards as it is when nothing in it can
// change: a tools/call or tasks/result result no egress rule rewrites.
// It returns nil for any other message.
func (s judge) judgeEarly(m *message.Message, call *Call, esc rawjson.Escapes, members message.MemberSet, head Head) *earlyVerdict {
	if len(m.Raw) < concurrentMin || runtime.GOMAXPROCS(0) < 2 || call == nil || m.Kind != message.Response || m.Result == nil {
		return nil
	}
	switch call.Method {
	case "tools/call":
	case "tasks/result":
		if call.Tool == "" {
			return nil // refused, or judged by no tool's rules
		}
	default:
		return nil
	}
	p := s.policy()
	if len(p.egressFor(call.Tool)) > 0 {
		return nil
	}
	a := &earlyVerdict{ch: make(chan bool, 1)}
	raw, plain, ef := m.Raw, m.TextPlain, p.egressFilterFor(callTool(call))
	go func() { a.ch <- unchanged(raw, esc, members, plain, head, ef) }()
	return a
}

// wait returns the verdict once it is in (false for a nil earlyVerdict).
func (a *earlyVerdict) wait() bool {
	if a == nil {
		return false
	}
	if !a.done {
		a.clean, a.done = <-a.ch, true
	}
	return a.clean
}

var errUnknownTask = errors.New("a tasks/result for a task mcpguard did not see created: the egress rules of its tool cannot be applied")

// checkRouting refuses a server→client request or notification whose
// method is not a plain protocol name or whose string id is not plain
// text: both reach the client application verbatim (a request id as
// extra.requestId, an unknown method in a fallback handler), where an
// OSC 52 clipboard write or a bidi override does its work.
func checkRouting(m *message.Message) error {
	if !plainMethod(m.Method) {
		return errors.New("a server message whose method is not a plain protocol name")
	}
	if len(m.ID) > 0 && m.ID[0] == '"' {
		id := message.Unquote(m.ID)
		if canon.Visible(id) != id {
			return errors.New("a server request whose id holds control, invisible or escape characters")
		}
	}
	return nil
}

// plainMethod reports whether a method name is made only of what protocol
// method names use: ASCII letters, digits and / _ - . (at most 256 bytes,
// starting with a letter).
func plainMethod(s string) bool {
	if len(s) == 0 || len(s) > 256 || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '/' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// hasEgressRules reports whether any egress rule does more than text.
func (p *Policy) hasEgressRules() bool {
	for _, r := range p.egress {
		if r.kind != canon.KindText {
			return true
		}
	}
	return false
}

// egressFor returns the egress rules for a tool's results, leaving out
// `text` rules: every string gets text anyway, so they cannot change what
// the fast path decides.
func (p *Policy) egressFor(tool string) []*egressRule {
	var out []*egressRule
	for _, r := range p.egress {
		if r.kind != canon.KindText && globsMatch(r.tools, tool) {
			out = append(out, r)
		}
	}
	return out
}

// pathElem is one step into a JSON document: a member name or an index.
type pathElem struct {
	name  string // as the client reads it
	key   string // what selectors match: name less invisible code points
	index int    // -1 for members
}

func renderPath(path []pathElem) string {
	var b strings.Builder
	for i, e := range path {
		if e.index >= 0 {
			b.WriteString("[" + strconv.Itoa(e.index) + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(e.name)
	}
	return b.String()
}

// matches reports whether a selector (relative to result) reaches path
// (relative to the message). isName: the string is the member name at path.
func (s Selector) matches(path []pathElem, isName bool) bool {
	if len(path) == 0 || path[0].name != "result" || path[0].index >= 0 {
		return false
	}
	return matchSegs(s.segs, path[1:], isName)
}

func matchSegs(segs []segment, path []pathElem, isName bool) bool {
	if len(segs) == 0 {
		return len(path) == 0 && !isName
	}
	seg := segs[0]
	if seg.kind == segAnyDepth {
		if len(segs) == 1 {
			return true // every string below, names included
		}
		for i := 0; i <= len(path); i++ {
			if matchSegs(segs[1:], path[i:], isName) {
				return true
			}
		}
		return false
	}
	if len(path) == 0 {
		return false
	}
	e := path[0]
	switch seg.kind {
	case segName:
		if e.index >= 0 || !strings.EqualFold(e.key, seg.key) {
			return false
		}
	case segAnyMember:
		if e.index >= 0 {
			return false
		}
	case segIndex:
		if e.index != seg.index {
			return false
		}
	case segAnyIndex:
		if e.index < 0 {
			return false
		}
	}
	return matchSegs(segs[1:], path[1:], isName)
}

var errRewriteCollision = errors.New("canonicalising member names made two of them equal")

// probeFirst is the message size from which rewriteStrings first reads
// the message without writing it, to find whether any string changes: a
// copy of a large message that nothing changes is never made. When one
// does change, the second pass reuses the first change's result, so only
// the unchanged strings before it are read twice.
const probeFirst = 1 << 20

// firstChange is what a probe found: the n-th string (counting from 0)
// changes, as the pipeline decided; shrunk is about how much shorter it
// gets in the message.
type firstChange struct {
	n, shrunk, removed int
	by, out            string
	filtered           []Rewrite
}

// errChanged stops a probe at the first string that changes.
var errChanged = errors.New("a string changes")

// rewriteStrings re-encodes a message with every string canonicalised.
// Numbers, literals and unchanged strings keep their exact text. With no
// rewrite to report, the caller forwards raw and out is not read.
func rewriteStrings(raw []byte, rules []*egressRule, ef egressFilter) ([]byte, []Rewrite, error) {
	var first *firstChange
	if len(raw) >= probeFirst {
		first = &firstChange{n: -1}
		switch _, _, err := rewriteStringsTo(nil, raw, rules, ef, first); {
		case err == nil:
			return raw, nil, nil
		case err != errChanged:
			return nil, nil, err
		}
	}
	var out bytes.Buffer
	size := len(raw)
	if first != nil {
		// A flood refused whole becomes a short stand-in: do not
		// reserve the message's size for it.
		size = max(size-first.shrunk, 0)
	}
	out.Grow(size)
	return rewriteStringsTo(&out, raw, rules, ef, first)
}

// rewriteStringsTo is rewriteStrings writing to out. With out nil it
// writes nothing, and at the first string that changes it fills first
// and returns errChanged; with out set, a first filled so is used.
func rewriteStringsTo(out *bytes.Buffer, raw []byte, rules []*egressRule, ef egressFilter, first *firstChange) ([]byte, []Rewrite, error) {
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw))
	// Strings that stay are written with their escapes as they came. A
	// probe writes nothing (the encoder would buffer every value); the
	// parser has rejected duplicate names, and a probe stops at the
	// first name that changes.
	var enc *jsontext.Encoder
	if out != nil {
		enc = jsontext.NewEncoder(out, jsontext.PreserveRawStrings(true))
	}
	writeToken := func(t jsontext.Token) error {
		if enc == nil {
			return nil
		}
		return enc.WriteToken(t)
	}
	writeValue := func(v jsontext.Value) error {
		if enc == nil {
			return nil
		}
		return enc.WriteValue(v)
	}
	var rewrites rewriteList
	var path []pathElem
	// Each open container: an object (waiting for a name or a value) or an
	// array (and the index of its next element). path[i] is the position
	// inside stack[i].
	type frame struct {
		object   bool
		wantName bool
		next     int
	}
	var stack []frame
	afterValue := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantName = true
		}
	}
	// canonicalise writes a string token through the egress pipeline and
	// returns what the client will read.
	read := -1 // the string tokens read, less one
	canonicalise := func(tok jsontext.Value, isName bool) (string, error) {
		read++
		var out, applied string
		var filtered []Rewrite
		removed := -1 // by the rules and text: -1 when they change nothing
		if first != nil && first.n == read && enc != nil {
			out, applied, removed, filtered = first.out, first.by, first.removed, first.filtered
		} else {
			s := message.Unquote(tok)
			routing := len(path) == 1 && path[0].index < 0 && (path[0].name == "jsonrpc" || path[0].name == "id" || path[0].name == "method") && !isName
			if routing {
				return s, writeValue(tok)
			}
			var mid string
			mid, applied = egressString(s, rules, path, isName)
			out, filtered = ef.apply(mid)
			if !isName {
				if u, rw := ef.urlMember(path, out); rw != nil {
					out, filtered = u, append(filtered, *rw)
				}
			}
			if out == s {
				return s, writeValue(tok)
			}
			if mid != s {
				removed = len(s) - len(mid)
			}
			if enc == nil {
				// The string itself is not kept: it may be most of
				// the message.
				*first = firstChange{n: read, shrunk: len(tok) - len(out), by: applied, removed: removed, out: out, filtered: filtered}
				return out, errChanged
			}
		}
		field := "(more)"
		if len(rewrites.list) < MaxRewrites {
			field = renderPath(path)
			if isName {
				field += " (member name)"
			}
			field = clean(field)
		}
		if removed >= 0 {
			rewrites.add(Rewrite{Field: field, Canonicaliser: applied, Removed: removed})
		}
		for _, rw := range filtered {
			rw.Field = field
			rewrites.add(rw)
		}
		return out, writeToken(jsontext.String(out))
	}
	for {
		kind := dec.PeekKind()
		if kind == 0 {
			break
		}
		n := len(stack)
		if n > 0 && !stack[n-1].object && kind != ']' {
			path[n-1] = pathElem{index: stack[n-1].next}
			stack[n-1].next++
		}
		switch kind {
		case '{', '[':
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, nil, err
			}
			if err := writeToken(tok); err != nil {
				return nil, nil, err
			}
			stack = append(stack, frame{object: kind == '{', wantName: kind == '{'})
			path = append(path, pathElem{index: -1})
		case '}', ']':
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, nil, err
			}
			if err := writeToken(tok); err != nil {
				return nil, nil, err
			}
			stack = stack[:n-1]
			path = path[:n-1]
			afterValue()
		case '"':
			v, err := dec.ReadValue()
			if err != nil {
				return nil, nil, err
			}
			if n > 0 && stack[n-1].wantName {
				// A member name: it names the path of the value that follows.
				// Rules select on the name the client reads; a rule that
				// selects names may change it again.
				stack[n-1].wantName = false
				name := canon.Text(message.Unquote(v))
				path[n-1] = pathElem{name: name, key: canon.Visible(name), index: -1}
				name, err := canonicalise(v, true)
				if err != nil {
					if isDuplicate(err) {
						return nil, nil, errRewriteCollision
					}
					return nil, nil, err
				}
				path[n-1] = pathElem{name: name, key: canon.Visible(name), index: -1}
				continue
			}
			if _, err := canonicalise(v, false); err != nil {
				return nil, nil, err
			}
			afterValue()
		default:
			v, err := dec.ReadValue()
			if err != nil {
				return nil, nil, err
			}
			if err := writeValue(v); err != nil {
				return nil, nil, err
			}
			afterValue()
		}
	}
	if out == nil {
		return nil, nil, nil
	}
	return bytes.TrimRight(out.Bytes(), "\n"), rewrites.records(), nil
}

// egressString is the pipeline every string from the server goes
// through, in order: the canonicaliser of each egress rule that selects
// it (path is where it stands, isName: it is the member name at path),
// then text. It returns the string the client will read and the last
// canonicaliser that changed it, for the log.
func egressString(s string, rules []*egressRule, path []pathElem, isName bool) (out, by string) {
	out = s
	for _, r := range rules {
		if r.selects(path, isName) {
			if next := r.apply(out); next != out {
				out, by = next, string(r.kind)
			}
		}
	}
	if next := canon.Text(out); next != out {
		out = next
		if by == "" {
			by = string(canon.KindText)
		}
	}
	return out, by
}

func (r *egressRule) selects(path []pathElem, isName bool) bool {
	for _, sel := range r.fields {
		if sel.matches(path, isName) {
			return true
		}
	}
	return false
}

func isDuplicate(err error) bool { return errors.Is(err, jsontext.ErrDuplicateName) }

func (r *egressRule) apply(s string) string {
	switch r.kind {
	case canon.KindPath:
		return canon.Path(s)
	case canon.KindFreeText:
		return canon.FreeText(s, r.maxBytes)
	}
	return canon.Text(s)
}

// rawNeedsText reports whether any string in a validated JSON text may
// hold a code point that canon.Text removes or judges (canon.Suspect),
// looking at the raw bytes and \u escapes without decoding the JSON. It
// is the fast path that lets the common message through byte-identical;
// FuzzRawNeedsText holds it to canon.NeedsText: it never says no where
// text would change a string, and says yes only for a suspect code point.
func rawNeedsText(b []byte) bool {
	for i := 0; i < len(b); i++ {
		// Skip plain ASCII other than backslash and DEL eight bytes at a
		// time: nothing there can need the text canonicaliser. (A
		// byte beyond ASCII is most often followed by more of them.)
		if b[i] < 0x80 {
			for i+8 <= len(b) && plainASCII8(b[i:i+8]) {
				i += 8
			}
			if i+8 <= len(b) {
				i += plainPrefix8(b[i : i+8]) // to the first byte that is not
			}
			if i >= len(b) {
				break
			}
		}
		switch c := b[i]; {
		case c == 0x7F:
			return true
		case c >= 0xC2 && c < 0xE0 && i+1 < len(b) && b[i+1]&0xC0 == 0x80:
			// Two bytes (Latin, Greek, Cyrillic, Hebrew, Arabic, ...),
			// decoded without a call.
			if canon.Suspect(rune(c&0x1F)<<6 | rune(b[i+1]&0x3F)) {
				return true
			}
			i++
		case c >= 0x80:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 || canon.Suspect(r) {
				return true
			}
			i += n - 1
		case c == '\\':
			if i+1 >= len(b) {
				return false
			}
			switch b[i+1] {
			case 'b': // backspace: a control
				return true
			case 'u':
			default:
				i++ // \n, \t, \r, \f, \", \\, \/: kept by text
				continue
			}
			r, n, ok := rawjson.Rune(b[i:])
			if !ok {
				return true
			}
			i += n - 1
			if canon.Suspect(r) {
				return true
			}
		}
	}
	return false
}

// needsText is rawNeedsText, read in one part per processor at once when
// b is concurrentMin bytes or more: text beyond ASCII is read code point
// by code point, several times slower than plain ASCII, and the other
// checks of egress wait for the verdict.
func needsText(b []byte) bool {
	n := min(runtime.GOMAXPROCS(0), runtime.NumCPU(), len(b)/concurrentMin)
	if n < 2 {
		return rawNeedsText(b)
	}
	cuts := make([]int, 1, n+1)
	for k := 1; k < n; k++ {
		if p := textCut(b, max(len(b)*k/n, cuts[len(cuts)-1]+1), len(b)*(k+1)/n); p >= 0 {
			cuts = append(cuts, p)
		}
	}
	cuts = append(cuts, len(b))
	needs := make([]bool, len(cuts)-1)
	var wg sync.WaitGroup
	for k := 1; k < len(needs); k++ {
		wg.Go(func() { needs[k] = rawNeedsText(b[cuts[k]:cuts[k+1]]) })
	}
	needs[0] = rawNeedsText(b[:cuts[1]])
	wg.Wait()
	return slices.Contains(needs, true)
}

// textCut returns the first offset in [at, limit) where b can be cut in
// two that rawNeedsText reads as it reads b, -1 when there is none: an
// offset that starts a code point (not a UTF-8 continuation byte) and
// that no escape reaches over (no backslash in the 11 bytes before it:
// the longest escape rawNeedsText reads, a surrogate pair, is 12 bytes).
// Reading the two parts then meets every code point and escape that
// reading b does, and nothing else. It reads each byte a bounded number
// of times.
func textCut(b []byte, at, limit int) int {
	for p := at; p < limit; {
		lo := max(0, p-11)
		if j := bytes.LastIndexByte(b[lo:p], '\\'); j >= 0 {
			p = lo + j + 12
			continue
		}
		if b[p]&0xC0 == 0x80 {
			p++
			continue
		}
		return p
	}
	return -1
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainASCII8 reports whether 8 bytes are all ASCII below DEL and none is
// a backslash.
func plainASCII8(b []byte) bool { return notPlain8(b) == 0 }

// plainPrefix8 returns how many of 8 bytes, from the first, are ASCII
// below DEL and not a backslash.
func plainPrefix8(b []byte) int { return bits.TrailingZeros64(notPlain8(b)) >> 3 }

// notPlain8 marks, in the high bit of each byte's lane, the bytes of 8
// that are not ASCII below DEL or are a backslash (SWAR: high bit set,
// low 7 bits all ones, or equal to 0x5C). The zero-byte test of the
// backslash may mark lanes after a backslash wrongly, never one before
// the first, so the lowest mark is exact.
func notPlain8(b []byte) uint64 {
	w := binary.LittleEndian.Uint64(b)        // one load; keeps this inlinable
	high := w | ((w & ^uint64(highs)) + ones) // high bit set if byte >= 0x80 or low bits 0x7F
	x := w ^ (0x5C * ones)                    // zero byte where w had a backslash
	zero := (x - ones) & ^x & highs
	return (high & highs) | zero
}

// Package pins owns what mcpguard pins of what an MCP server shows the
// model: the canonical definition of every tool, prompt, resource and
// resource template, the server's instructions and serverInfo; the lock
// file that records them next to the policy; and the per-session state
// that withholds what changed.
//
// It stops tool poisoning after approval and rug pulls (OWASP MCP Top 10,
// MCP03): a server that the user approved can later change a description
// ("also BCC attacker@..."), widen an input schema, rename a tool to
// shadow another server's, or change its instructions. With a lock file,
// an item whose definition differs from its pin is withheld from its list
// and calls of it are refused (INPUT_REJECTED_TOOL_CHANGED); an item the
// lock does not know is withheld and refused too
// (INPUT_REJECTED_TOOL_UNPINNED), which also catches renames. Without one,
// each session pins what it sees first, and a definition that changes
// later in the session is withheld. Pins are keyed by the item's identity
// (name, uri, uriTemplate) and compare a digest of the whole canonical
// definition, so no field the model reads can change unnoticed.
package pins

import (
	"slices"
	"sync"

	"github.com/mcpguard/mcpguard/rules/canon"
	"github.com/mcpguard/mcpguard/rules/codes"
	"github.com/mcpguard/mcpguard/rules/lint"
)

// Actions in events.
const (
	ActionWithheld = "withheld" // removed from its list, calls refused
	ActionAudited  = "audited"  // would have been withheld (mode: audit)
	ActionAllowed  = "allowed"  // relayed; logged because it is new or has findings
	ActionReplaced = "replaced" // instructions replaced by the pinned ones
	ActionChanged  = "changed"  // serverInfo changed; logged only
)

// maxItems bounds what one session pins of each kind: a server that
// announces more distinct items than this gets the rest withheld.
const maxItems = 4096

// Event is one pin decision, for the log.
type Event struct {
	Kind     string // tool, prompt, resource, resource template, instructions, serverInfo
	Name     string // the item's key, canonicalised
	Action   string
	Code     string   // the rejection code calls get, for withheld items
	Fields   []string // the fields that differ from the pin
	Findings []lint.Finding
	Message  string
}

// Options set how a session enforces.
type Options struct {
	Lock        *Lock // nil: pin on first sight
	Audit       bool  // log, never withhold
	LintEnforce bool  // an item with lint findings is withheld like an unpinned one
	// LintAllow lists, by item key, the lint rules that are no finding for
	// that item: a reviewed description that a rule misreads.
	LintAllow map[string][]string
	// Lint caches lint findings across the sessions of one policy; nil:
	// the session keeps its own.
	Lint *LintCache
}

// Block is why calls of an item are refused.
type Block struct {
	Code   string
	Reason string
}

type status struct {
	block *Block // nil: allowed
}

// Session is the pin state of one MCP session. Safe for concurrent use;
// Check, on the tools/call path, is one lock-free map lookup.
type Session struct {
	opt Options

	mu       sync.Mutex
	pinned   [numKinds]map[string]Definition // without a lock: first sight
	digests  [numKinds]map[string]string
	listed   [numKinds]bool
	lints    *LintCache
	linted   map[string]bool // digests whose findings this session reported
	instr    *string         // pinned instructions (nil: none yet, or none pinned)
	instrSet bool            // instr is decided (lock, or first sight)
	info     *Definition

	// state holds each item's status by key (under mu); counts is its
	// size per kind.
	state  [numKinds]map[string]status
	counts [numKinds]int
	// withheld maps the canon.Loose name of every withheld item to its
	// block, for calls that name it in another spelling; pinnedLoose maps
	// the canon.Loose name of every pinned item to its key (both under mu).
	withheld    [numKinds]map[string]*Block
	pinnedLoose [numKinds]map[string]string
	// seen is the digest of every item's definition as last listed
	// (under mu), so that a reloaded lock can judge it again (Reload).
	seen [numKinds]map[string]string
}

// NewSession starts the pin state of one session.
func NewSession(opt Options) *Session {
	s := &Session{opt: opt, lints: opt.Lint, linted: map[string]bool{}}
	if s.lints == nil {
		s.lints = NewLintCache()
	}
	for k := range numKinds {
		s.pinned[k] = map[string]Definition{}
		s.digests[k] = map[string]string{}
		s.seen[k] = map[string]string{}
		s.state[k] = map[string]status{}
	}
	if l := opt.Lock; l != nil {
		for k := range numKinds {
			for key, d := range l.Items[k] {
				s.pinned[k][key] = d
				s.digests[k][key] = d.Digest()
				s.state[k][key] = status{}
				s.counts[k]++
			}
		}
		if l.HasInstructions {
			instr := l.Instructions
			s.instr = &instr
		}
		s.instrSet = true
		s.info = l.ServerInfo
	}
	for k := range numKinds {
		s.withheld[k] = map[string]*Block{}
		s.pinnedLoose[k] = map[string]string{}
		for key := range s.pinned[k] {
			s.pinnedLoose[k][canon.Loose(key)] = key
		}
	}
	return s
}

// Check returns why a call of an item is refused, nil when it is not: the
// item was withheld from its list, or (with a lock) the lock does not pin
// a tool or prompt of that name. A resource the lock does not list may
// still come from a template, so only withheld resources are refused.
func (s *Session) Check(kind Kind, key string) *Block {
	if st, ok := s.status(kind, key); ok {
		return st.block
	}
	// Items are pinned under their canonical key: a call that spells a
	// withheld name with what text removes (wi\u202epe) must find it.
	if !printableASCII(key) {
		if c := canon.Text(key); c != key {
			if st, ok := s.status(kind, c); ok {
				return st.block
			}
		}
	}
	// A server may resolve a name loosely (case, spaces, NFKC, a
	// Cyrillic look-alike): a call of SEND_EMAIL reaches a withheld
	// send_email.
	loose := canon.Loose(key)
	s.mu.Lock()
	b := s.withheld[kind][loose]
	s.mu.Unlock()
	if b != nil {
		return &Block{Code: b.Code, Reason: b.Reason + " (called as " + canon.FreeText(key, 256) + ", which a server may read as that name)"}
	}
	if s.opt.Lock != nil && (kind == Tool || kind == Prompt) {
		return &Block{Code: codes.ToolUnpinned, Reason: "the lock file does not pin " + kind.String() + " " + canon.FreeText(key, 256)}
	}
	return nil
}

// status is the status of the item of kind with key, if it has one.
func (s *Session) status(kind Kind, key string) (status, bool) {
	s.mu.Lock()
	st, ok := s.state[kind][key]
	s.mu.Unlock()
	return st, ok
}

// printableASCII reports whether text cannot change s: it has no
// control, DEL or non-ASCII byte.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7F {
			return false
		}
	}
	return true
}

// Audit reports whether the session only logs.
func (s *Session) Audit() bool { return s.opt.Audit }

// List judges the items of one list result.
type List struct {
	s    *Session
	kind Kind
	kept map[string]bool
}

// NewList starts judging one list result of kind.
func (s *Session) NewList(kind Kind) *List { return &List{s: s, kind: kind, kept: map[string]bool{}} }

// Judge decides on one item of the list: keep says whether it stays in the
// list the agent gets, ev is the decision to log (nil when there is
// nothing to say). An item announced twice in one list is ambiguous
// (clients differ on which entry wins): once one entry of a name is kept,
// later ones are withheld and the name keeps the status of the kept one.
func (l *List) Judge(raw []byte) (keep bool, ev *Event) {
	def, err := Canonical(raw)
	key := ""
	if err == nil {
		key = def.String(l.kind.KeyField())
	}
	if key != "" && l.kept[key] {
		ev := &Event{Kind: l.kind.String(), Name: canon.FreeText(key, 256), Code: codes.ToolChanged, Action: ActionWithheld,
			Message: "a second " + l.kind.String() + " of the same " + l.kind.KeyField() + " in one list; the first one is kept"}
		if l.s.opt.Audit {
			ev.Action = ActionAudited
			return true, ev
		}
		return false, ev
	}
	keep, ev = l.s.judge(l.kind, raw, def, key, err)
	if keep && key != "" {
		l.kept[key] = true
	}
	return keep, ev
}

func (s *Session) judge(kind Kind, raw []byte, def Definition, key string, err error) (keep bool, ev *Event) {
	if err != nil || key == "" {
		reason := "it has no " + kind.KeyField()
		if err != nil {
			reason = err.Error()
		}
		return s.decide(kind, "", &Block{Code: codes.ToolUnpinned, Reason: "a " + kind.String() + " that cannot be pinned: " + reason}, nil, nil)
	}
	if s.opt.Lock != nil && s.opt.Lock.MetaUnpinned {
		def = def.withoutMeta()
	}
	digest := def.Digest()

	findings := s.allowed(key, s.lints.Item(raw))
	s.mu.Lock()
	done := s.linted[digest]
	if !done && len(s.linted) < 4*maxItems {
		s.linted[digest] = true
	}
	var block *Block
	var fields []string
	newItem := false
	if _, known := s.seen[kind][key]; known || len(s.seen[kind]) < 2*maxItems {
		s.seen[kind][key] = digest
	}
	pinned, ok := s.pinned[kind][key]
	switch {
	case !ok && s.opt.Lock != nil:
		block = &Block{Code: codes.ToolUnpinned, Reason: "the lock file does not pin " + kind.String() + " " + canon.FreeText(key, 256)}
	case !ok && len(s.pinned[kind]) >= maxItems:
		block = &Block{Code: codes.ToolUnpinned, Reason: "the server announced more than 4096 " + kind.Section() + "; " + kind.String() + " " + canon.FreeText(key, 256) + " is not pinned"}
	case !ok && s.pinnedLoose[kind][canon.Loose(key)] != "":
		// A new name that reads as a pinned one (send_еmail with a
		// Cyrillic е): a rename that shadows the item, not a new item.
		other := s.pinnedLoose[kind][canon.Loose(key)]
		fields = []string{kind.KeyField()}
		block = &Block{Code: codes.ToolChanged, Reason: kind.String() + " " + canon.FreeText(key, 256) + " reads as pinned " + kind.String() + " " + canon.FreeText(other, 256)}
	case !ok:
		s.pinned[kind][key] = def
		s.digests[kind][key] = digest
		s.pinnedLoose[kind][canon.Loose(key)] = key
		newItem = s.listed[kind]
	case s.digests[kind][key] != digest:
		fields = ChangedFields(pinned, def)
		block = &Block{Code: codes.ToolChanged, Reason: kind.String() + " " + canon.FreeText(key, 256) + " differs from its pin in " + joinFields(fields)}
	}
	s.mu.Unlock()

	if block == nil && len(findings) > 0 && s.opt.LintEnforce {
		block = &Block{Code: codes.ToolUnpinned, Reason: kind.String() + " " + canon.FreeText(key, 256) + " has lint findings (lint: enforce)"}
	}
	keep, ev = s.decide(kind, key, block, fields, findings)
	if ev == nil && newItem {
		ev = &Event{Kind: kind.String(), Name: canon.FreeText(key, 256), Action: ActionAllowed, Findings: findings,
			Message: "a new " + kind.String() + " appeared after the first list; pinned on first sight"}
	}
	if ev != nil && !done {
		ev.Findings = findings
	} else if ev == nil && !done && len(findings) > 0 {
		ev = &Event{Kind: kind.String(), Name: canon.FreeText(key, 256), Action: ActionAllowed, Findings: findings,
			Message: kind.String() + " has lint findings (a warning; lint: enforce withholds it)"}
	}
	return keep, ev
}

// decide records the status of an item and makes its event.
func (s *Session) decide(kind Kind, key string, block *Block, fields []string, findings []lint.Finding) (bool, *Event) {
	if key != "" {
		s.setStatus(kind, key, block)
	}
	if block == nil {
		return true, nil
	}
	ev := &Event{Kind: kind.String(), Name: canon.FreeText(key, 256), Code: block.Code, Fields: fields, Findings: findings, Message: block.Reason}
	if s.opt.Audit {
		ev.Action = ActionAudited
		return true, ev
	}
	ev.Action = ActionWithheld
	return false, ev
}

func (s *Session) setStatus(kind Kind, key string, block *Block) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.state[kind][key]
	if ok && sameBlock(old.block, block) {
		return
	}
	if !ok && s.counts[kind] >= 2*maxItems {
		return // unknown keys are refused or allowed by Check's default
	}
	s.state[kind][key] = status{block: block}
	if !ok {
		s.counts[kind]++
	}
	s.noteWithheld(kind, key, block)
}

// noteWithheld updates the loose names of the withheld items after key's
// status changed to block; s.mu is held. Each loose name is computed once
// per change, not once per item.
func (s *Session) noteWithheld(kind Kind, key string, block *Block) {
	w := s.withheld[kind]
	loose := canon.Loose(key)
	if block != nil {
		w[loose] = block
		return
	}
	if w[loose] == nil {
		return
	}
	delete(w, loose)
	// Another withheld item may read the same (rare).
	for k, st := range s.state[kind] {
		if st.block != nil && canon.Loose(k) == loose {
			w[loose] = st.block
			break
		}
	}
}

func sameBlock(a, b *Block) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// ListDone records that a complete list of kind was seen: items that
// appear after it are logged as new.
func (s *Session) ListDone(kind Kind) {
	s.mu.Lock()
	s.listed[kind] = true
	s.mu.Unlock()
}

// Instructions judges the instructions of an initialize (or
// server/discover) result. present is false when the server sent none.
// It returns what the agent gets: the text and whether to send any, and
// whether that differs from what the server sent.
func (s *Session) Instructions(text string, present bool) (out string, outPresent, rewrite bool, ev *Event) {
	cur := canon.Text(text)
	findings := []lint.Finding(nil)
	if present {
		findings = lint.Instructions(text)
	}
	s.mu.Lock()
	if !s.instrSet {
		s.instrSet = true
		if present {
			s.instr = &cur
		}
	}
	pinned := s.instr
	s.mu.Unlock()

	matches := (pinned == nil && !present) || (pinned != nil && present && *pinned == cur)
	if matches && (len(findings) == 0 || !s.opt.LintEnforce) {
		if len(findings) > 0 {
			return text, present, false, &Event{Kind: "instructions", Action: ActionAllowed, Findings: findings,
				Message: "the server's instructions have lint findings (a warning; lint: enforce removes them)"}
		}
		return text, present, false, nil
	}
	ev = &Event{Kind: "instructions", Findings: findings, Code: codes.ToolChanged, Fields: []string{"instructions"}}
	switch {
	case !matches && pinned != nil:
		ev.Message = "the server's instructions differ from the pinned ones"
	case !matches:
		ev.Message = "the server sent instructions where none are pinned"
	default:
		ev.Message = "the server's instructions have lint findings (lint: enforce)"
		ev.Code, ev.Fields = codes.ToolUnpinned, nil
	}
	if s.opt.Audit {
		ev.Action = ActionAudited
		return text, present, false, ev
	}
	ev.Action = ActionReplaced
	if !matches && pinned != nil && !(s.opt.LintEnforce && len(lint.Instructions(*pinned)) > 0) {
		ev.Message += "; replaced by the pinned instructions"
		return *pinned, true, true, ev
	}
	ev.Message += "; removed"
	return "", false, true, ev
}

// ServerInfo compares the serverInfo of an initialize result with its pin
// (lock, or first sight). A change is logged, never withheld: versions
// change with every release.
func (s *Session) ServerInfo(raw []byte) *Event {
	def, err := Canonical(raw)
	if err != nil {
		return &Event{Kind: "serverInfo", Action: ActionChanged, Message: "serverInfo cannot be pinned: " + err.Error()}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.info == nil {
		if s.opt.Lock == nil {
			s.info = &def
			return nil
		}
		return &Event{Kind: "serverInfo", Action: ActionChanged, Fields: ChangedFields(Definition{}, def), Message: "the lock file pins no serverInfo"}
	}
	if s.info.Digest() == def.Digest() {
		return nil
	}
	return &Event{Kind: "serverInfo", Action: ActionChanged, Fields: ChangedFields(*s.info, def), Message: "serverInfo differs from its pin (logged only)"}
}

func joinFields(fields []string) string {
	out := ""
	for i, f := range fields {
		if i > 0 {
			out += ", "
		}
		out += canon.FreeText(f, 64)
	}
	if out == "" {
		return "(nothing)"
	}
	return out
}

// allowed returns findings without the rules the policy allows for key.
func (s *Session) allowed(key string, findings []lint.Finding) []lint.Finding {
	return Allowed(s.opt.LintAllow, key, findings)
}

// Allowed returns findings without the rules allow (lint_allow:) lists
// for the item key.
func Allowed(allow map[string][]string, key string, findings []lint.Finding) []lint.Finding {
	rules := allow[key]
	if len(rules) == 0 || len(findings) == 0 {
		return findings
	}
	var out []lint.Finding
	for _, f := range findings {
		if !slices.Contains(rules, f.Rule) {
			out = append(out, f)
		}
	}
	return out
}

// Package secrets finds credentials in text: gitleaks' default rules
// (generated into gitleaks_rules.go by internal/gitleaksgen; MIT License,
// see LICENSE.gitleaks), mcpguard's own formats (formats.go: credential
// files, URL passwords, headers; pem.go: private key blocks of any length
// and their parts) and the known secrets of the environment the MCP
// server runs with, in the text and in every reading of its decoding
// pipeline (decode.go: escapes of every kind, invisible and fullwidth
// characters, base64, hex and base32).
//
// It stops the exfiltration of credentials through tool calls (an
// injected agent putting a token into an issue body or a URL's query) and
// their exposure in what a server sends back (a tool that prints its
// environment, a file read that holds a key). A Finding names the rule
// that matched and where, never the value.
//
// Every rule runs only where one of its keywords occurs and a run of
// token bytes long enough for its shortest match is near: clean text costs
// one pass of small filters of its starts (of a byte-pair table, when it
// is long).
package secrets

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/mcpguard/mcpguard/rules"
	"github.com/mcpguard/mcpguard/rules/codes"
	"github.com/mcpguard/mcpguard/rules/rawjson"
)

// KnownRule is the rule id of a finding of a known secret.
const KnownRule = "known-secret"

// TooDenseRule is the rule id of a finding that covers a region of a text
// too dense with credential keywords to search in bounded time: the
// region around a keyword past the budget is refused (ingress) or
// redacted (egress), failing closed there; the rest of the text is
// searched as usual and never redacted whole.
const TooDenseRule = "too-dense-to-scan"

// Finding is one credential in a text: the bytes [Start, End) of the text
// searched, the rule that found it, and for a known secret its Source.
type Finding struct {
	Start, End int
	Rule       string
	Source     string
}

// Options configures a Scanner.
type Options struct {
	// Known are the known secrets.
	Known []Known
	// Allow are rule ids not applied (gitleaks ids, or "known-secret").
	Allow []string
}

// Scanner finds credentials. It is immutable and safe for concurrent use.
type Scanner struct {
	rules   []*rule // enabled rules, by their index in allRules
	enabled []bool
	known   []Known
	idx     *index
	// slashNeedle: some needle contains '/', so a JSON "\/" escape may
	// hide one in a raw message.
	slashNeedle bool
}

// defaultOff are gitleaks rules a Scanner does not apply: generic-api-key
// matches any assignment of a random-looking value to a name with "key",
// "token" or "auth" in it, which ordinary code and configuration are full
// of (a false refusal is a defect too).
var defaultOff = map[string]bool{"generic-api-key": true}

// keywordOverride replaces keywords that would make a rule run on most
// text: every JWT has ".ey" where its header ends and its payload starts,
// while "ey" is in "they" and "key".
var keywordOverride = map[string][]string{"jwt": {".ey"}}

// confirmAfter lists, for rules whose keyword is common and whose regex
// is costly, strings the regex requires after the keyword: a curl command
// line holds an auth header or user only with -H or -u.
var confirmAfter = map[string][]string{
	"curl-auth-header": flagsAfterSpace("-H", "--header"),
	"curl-auth-user":   flagsAfterSpace("-u", "--user"),
}

func flagsAfterSpace(flags ...string) []string {
	var out []string
	for _, f := range flags {
		for _, sp := range []string{" ", "\t", "\n", "\r"} {
			out = append(out, sp+f)
		}
	}
	return out
}

// backAnchored lists rules whose keyword is inside the match, after a
// part made of word bytes only that starts it: a JWT is
// \b(ey[a-zA-Z0-9]{17,}\.ey..., found by its keyword .ey, so its match
// starts where the run of word bytes before .ey starts.
// The own rules that name a credential variable or a URL's scheme start
// where the name or the scheme does.
var backAnchored = map[string]bool{"jwt": true, "credential-assignment": true, "aws-secret-access-key": true, "url-password": true}

// ruleSpecs are every rule: gitleaks' then mcpguard's own.
func ruleSpecs() []*ruleSpec {
	out := make([]*ruleSpec, 0, len(gitleaksRules)+len(ownRules))
	for i := range gitleaksRules {
		out = append(out, &gitleaksRules[i])
	}
	for i := range ownRules {
		out = append(out, &ownRules[i])
	}
	return out
}

var allRules = sync.OnceValue(func() []*rule {
	specs := ruleSpecs()
	out := make([]*rule, len(specs))
	for i := range specs {
		out[i] = newRule(i, specs[i])
	}
	return out
})

// newRule makes the i-th of ruleSpecs ready to run.
func newRule(i int, spec *ruleSpec) *rule {
	kws := spec.keywords
	if o, ok := keywordOverride[spec.id]; ok {
		kws = o
	}
	r := &rule{spec: spec, index: i, keywords: kws}
	r.findAnchors(leadingOf(i, spec))
	r.confirm = confirmAfter[spec.id]
	if r.confirm != nil {
		r.tail = confirmTail(spec.id, spec.regex)
	}
	if req, ok := requireAfter[spec.id]; ok {
		checkRequired(spec.id, spec.regex, req)
		if len(kws) != 1 {
			panic("secrets: a rule with a required word has one keyword")
		}
		r.require = &req
	}
	r.scan = keyScans[spec.id]
	r.valid = ownValid[spec.id]
	r.quick = ownQuick[spec.id]
	if backAnchored[spec.id] {
		r.backAnchor, r.leadingWB = true, true
	}
	return r
}

// RuleIDs lists the ids of the rules a Scanner applies by default.
func RuleIDs() []string {
	var out []string
	for _, r := range allRules() {
		if !defaultOff[r.spec.id] {
			out = append(out, r.spec.id)
		}
	}
	return out
}

// Keywords lists the keywords the rules a Scanner applies by default run
// on, each once: what a hostile text repeats to make every hit cost a
// rule's search (a budget test sweeps them).
func Keywords() []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range allRules() {
		for _, kw := range r.keywords {
			if !defaultOff[r.spec.id] && !seen[kw] {
				seen[kw] = true
				out = append(out, kw)
			}
		}
	}
	return out
}

// IsRule reports whether id names a rule (or is KnownRule).
func IsRule(id string) bool {
	if id == KnownRule {
		return true
	}
	for _, r := range allRules() {
		if r.spec.id == id {
			return true
		}
	}
	return false
}

// New makes a Scanner. An unknown rule id in o.Allow is an error.
func New(o Options) (*Scanner, error) {
	off := map[string]bool{}
	for _, id := range o.Allow {
		if !IsRule(id) {
			return nil, fmt.Errorf("unknown secrets rule %q", id)
		}
		off[id] = true
	}
	all := allRules()
	sc := &Scanner{rules: all, enabled: make([]bool, len(all))}
	var needles []needle
	for i, r := range all {
		if defaultOff[r.spec.id] || off[r.spec.id] {
			continue
		}
		sc.enabled[i] = true
		for _, kw := range r.keywords {
			needles = append(needles, needle{text: kw, fold: true, owner: i})
		}
	}
	if !off[KnownRule] {
		for k, known := range o.Known {
			if len(known.Value) < MinKnownLen {
				continue
			}
			sc.known = append(sc.known, known)
			for _, n := range encodings(known.Value) {
				n.owner = -1 - (len(sc.known) - 1)
				needles = append(needles, n)
			}
			_ = k
		}
	}
	for _, n := range needles {
		if strings.IndexByte(n.text, '/') >= 0 {
			sc.slashNeedle = true
		}
	}
	for _, h := range hiddenNeedles {
		needles = append(needles, needle{text: h, owner: hiddenOwner})
	}
	sc.idx = newIndex(needles)
	return sc, nil
}

// HasKnown reports whether the scanner knows any secret.
func (sc *Scanner) HasKnown() bool { return len(sc.known) > 0 }

const (
	gateBefore   = 64  // a keyword's rule must have its token run this close
	windowBefore = 256 // a rule's regex runs from this far before its keyword
	windowAfter  = 512 // to this far after (a match that reaches a side widens it)

	// anchorSpan bounds the text an anchored rule reads; a match that
	// reaches the cut reads further. A rule that spans lines (a PEM key)
	// reads anchorSpanMultiline.
	anchorSpan          = 256
	anchorSpanMultiline = 4096
)

// Find returns the credentials in s, in order, without overlaps. s is
// searched as it is and through every reading of the decoding pipeline
// (decode.go); a finding in a reading is mapped back onto the span of s
// it comes from, and one inside a decoded base64, hex or base32 run
// covers the whole run.
func (sc *Scanner) Find(s string) []Finding {
	return merge(sc.findDecoded(s, maxDepth))
}

// findDecoded is Find, depth encodings deep; its findings may overlap.
func (sc *Scanner) findDecoded(s string, depth int) []Finding {
	fs := sc.find(s)
	if depth == 0 {
		return fs
	}
	text := s
	var rounds []reading
	for len(rounds) < maxRounds && mayHideEscapes(text) {
		r, ok := unescapeOnce(text)
		if !ok {
			break
		}
		rounds = append(rounds, r)
		text = r.text
		// What the text held undecoded is found already: search around
		// what the round decoded.
		for _, w := range aroundMarks(r.marks, len(text)) {
			for _, f := range sc.find(text[w[0]:w[1]]) {
				f.Start, f.End = f.Start+w[0], f.End+w[0]
				fs = append(fs, mapBack(f, rounds))
			}
		}
	}
	if len(rounds) > 0 && strings.IndexByte(text, '+') >= 0 && nextPercent(s, 0, len(s)) >= 0 {
		// A URL's query reads + as a space: a reading as long as text.
		for _, f := range sc.findDecoded(strings.ReplaceAll(text, "+", " "), depth-1) {
			fs = append(fs, mapBack(f, rounds))
		}
	}
	encodedRuns(text, func(run encodedRun) bool {
		enc := text[run.lo:run.hi]
		whole := run.lo == 0 && run.hi == len(text)
		var buf [512]byte
		decs, n := decodings(enc, run.sep, buf[:])
		for _, dec := range decs[:n] {
			if !whole && !texty(dec) {
				continue
			}
			if inner := sc.findDecoded(string(dec), depth-1); len(inner) > 0 {
				fs = append(fs, mapBack(Finding{Start: run.lo, End: run.hi, Rule: inner[0].Rule, Source: inner[0].Source}, rounds))
			}
		}
		return true
	})
	return fs
}

// aroundMarks returns the parts of a reading of length n within
// decodeReach of what it decoded, merged, in order.
func aroundMarks(marks []mark, n int) [][2]int {
	var out [][2]int
	for _, m := range marks {
		lo, hi := max(0, m.dec-decodeReach), min(n, m.dec+m.n+decodeReach)
		if k := len(out); k > 0 && lo <= out[k-1][1] {
			out[k-1][1] = max(out[k-1][1], hi)
			continue
		}
		out = append(out, [2]int{lo, hi})
	}
	return out
}

// mapBack maps a finding in the last of rounds (each a reading of the one
// before) onto the text the first reads.
func mapBack(f Finding, rounds []reading) Finding {
	for i := len(rounds) - 1; i >= 0; i-- {
		f.Start, f.End = rounds[i].source(f.Start, f.End)
	}
	return f
}

type ruleHit struct{ rule, at, n int }

func (sc *Scanner) find(s string) []Finding {
	var fs []Finding
	var hits []ruleHit
	sc.idx.scan(s, func(n *needle, at int) bool {
		if n.owner == hiddenOwner {
			return true // the decoding pipeline reads these
		}
		if n.owner < 0 {
			k := sc.known[-1-n.owner]
			fs = append(fs, Finding{Start: at, End: at + len(n.text), Rule: KnownRule, Source: k.Source})
			return true
		}
		hits = append(hits, ruleHit{n.owner, at, len(n.text)})
		return true
	})
	if len(hits) == 0 {
		return fs
	}
	hits = byRule(hits, len(sc.rules))
	doneRule, doneTo := -1, -1
	lacksRule, lacksTo := -1, -1                     // a window of lacksRule before lacked a need up to lacksTo
	windowRule, windowRuns, anchoredRuns := -1, 0, 0 // windowRuns: of windowRule
	var memo quickMemo
	for _, h := range hits {
		if h.rule == doneRule && h.at < doneTo {
			continue
		}
		if h.rule == lacksRule && lacksUntil(h.at, h.n, lacksTo, len(s)) {
			continue
		}
		r := sc.rules[h.rule]
		if !r.passesQuick(s, h.at, h.n, &memo) {
			continue
		}
		if !gate(s, h.at-gateBefore, h.at+h.n+gateBefore, r.minRun()) {
			continue
		}
		if r.scan != nil {
			if lo, hi, ok := r.scan(s, h.at); ok {
				fs = append(fs, Finding{Start: lo, End: hi, Rule: r.spec.id})
				doneRule, doneTo = h.rule, hi
			}
			continue
		}
		if h.rule != windowRule {
			windowRule, windowRuns = h.rule, 0
		}
		if !r.anchors && !r.backAnchor {
			// A window without the characters every match holds is
			// not searched, and costs no budget.
			lacks, next := r.lacksNeed(s, max(0, h.at-windowBefore), min(len(s), h.at+h.n+windowAfter), "")
			if lacks {
				lacksRule, lacksTo = h.rule, next
				continue
			}
		}
		if windowRuns > windowBudget(len(s)) || anchoredRuns > anchoredBudget(len(s)) {
			// Text dense with keywords that pass the gate (a hostile
			// server's megabyte of "-----BEGIN PRIVATE KEY-----"): past
			// the budget, a keyword is not searched but the region its
			// rule could match is covered, failing closed there and
			// nowhere else.
			from := 0
			if h.rule == doneRule {
				from = doneTo
			}
			lo, hi := denseRegion(s, h.at, h.n, r.multiline, from)
			fs = append(fs, Finding{Start: lo, End: hi, Rule: TooDenseRule})
			doneRule, doneTo = h.rule, hi
			continue
		}
		if r.anchors || r.backAnchor {
			start := h.at
			if r.backAnchor {
				start = wordRunStart(s, h.at)
			}
			if !tokenRunFrom(s, start, r.minPre()) {
				continue
			}
			found, _ := sc.matchesAt(r, s, start)
			fs = append(fs, found...)
			anchoredRuns++
			if r.multiline {
				anchoredRuns += anchorSpanMultiline/anchorSpan - 1 // it reads that much more
			}
			continue
		}
		found, hi := sc.matchesNear(r, s, h.at, h.n)
		fs = append(fs, found...)
		windowRuns++
		doneRule, doneTo = h.rule, searchedTo(hi, len(s))
	}
	return fs
}

// byRule orders hits (each rule's in order of position, as the index
// found them) by rule, keeping each rule's order: a counting sort over
// the rules, linear in the hits, as a flood of one keyword (a hit every
// few bytes) needs; a comparison sort costs a log factor more per hit.
func byRule(hits []ruleHit, rules int) []ruleHit {
	if len(hits) <= rules {
		slices.SortStableFunc(hits, func(a, b ruleHit) int { return cmp.Compare(a.rule, b.rule) })
		return hits
	}
	starts := make([]int, rules+1)
	for _, h := range hits {
		starts[h.rule+1]++
	}
	for i := 1; i <= rules; i++ {
		starts[i] += starts[i-1]
	}
	out := make([]ruleHit, len(hits))
	for _, h := range hits {
		out[starts[h.rule]] = h
		starts[h.rule]++
	}
	return out
}

// searchedTo is how far a window search of a rule that ended at hi
// (end: the end of the text, or of the JSON string it searched) stands
// for the rule's later keywords: a keyword whose own window reaches more
// than half a window past hi is searched again. A match around a later
// keyword may end past hi, and one of fixed length (a Slack webhook's
// 43 to 56 characters, then its end) cannot match cut short, so the cut
// does not widen the search: a decoy keyword a few hundred bytes before
// a credential would hide it.
func searchedTo(hi, end int) int {
	if hi >= end {
		return end
	}
	return hi - windowAfter/2
}

// windowBudget and anchoredBudget are how many window runs of one rule
// and anchored runs of all rules a text of n bytes gets: text made only
// of the benign corpus's densest lines needs a window run of one rule per
// 20 KiB and an anchored run per 1 KiB.
func windowBudget(n int) int   { return n/8192 + 64 }
func anchoredBudget(n int) int { return n/64 + 1024 }

// denseRegion is the span a keyword at [at, at+n) covers when it cannot
// be searched: the lines a rule's match could reach (at most windowBefore
// before the keyword and windowAfter after it, anchorSpanMultiline for a
// rule that spans lines, and on over the lines of a block such as a PEM
// body), widened to whole token runs at both ends so no part of a
// credential is left beside it. It starts no earlier than from (at most
// at: the end of the same rule's region before it), which keeps the
// widening linear.
func denseRegion(s string, at, n int, multiline bool, from int) (int, int) {
	lo, hi := max(0, at-windowBefore, from), min(len(s), at+n+windowAfter)
	if multiline {
		hi = min(len(s), at+anchorSpanMultiline)
	} else {
		if i := strings.LastIndexByte(s[lo:at], '\n'); i >= 0 {
			lo += i + 1
		}
		if i := strings.IndexByte(s[at+n:hi], '\n'); i >= 0 {
			hi = at + n + i
		}
	}
	for lo > max(0, from) && tokenByte[s[lo-1]] {
		lo--
	}
	for hi < len(s) && (tokenByte[s[hi]] || multiline && (s[hi] == '\n' || s[hi] == '\r')) {
		hi++
	}
	return lo, hi
}

// matchesNear runs rule r on a window of s around a keyword at [at,
// at+n), widened until no match reaches a side of it that is not a side
// of s. It returns the findings and where the window ended.
func (sc *Scanner) matchesNear(r *rule, s string, at, n int) ([]Finding, int) {
	before, after := windowBefore, windowAfter
	for {
		lo, hi := max(0, at-before), min(len(s), at+n+after)
		found, edge := sc.matches(r, s, lo, hi)
		if !edge || (lo == 0 && hi == len(s)) {
			return found, hi
		}
		before, after = 4*before, 4*after
	}
}

// matchesAt runs a rule whose every match starts with its keyword on s
// from at, anchored there.
func (sc *Scanner) matchesAt(r *rule, s string, at int) ([]Finding, bool) {
	r.compiled()
	if r.leadingWB && !wordBoundaryAt(s, at) {
		return nil, false
	}
	if r.require != nil && !hasWordNear(s, at, len(r.keywords[0]), *r.require) {
		return nil, false
	}
	span := anchorSpan
	if r.multiline {
		span = anchorSpanMultiline
	}
	if len(r.confirm) > 0 {
		// The regex reads up to the first flag it needs and a value.
		i := indexAny(linesFrom(s, at, 12, 1024), r.confirm)
		if i < 0 {
			return nil, false
		}
		w := s[at:min(len(s), at+i+512)]
		if !r.tailMatches(w) {
			return nil, false
		}
		m := r.anchored.FindStringSubmatchIndex(w)
		if m == nil {
			return nil, false
		}
		return sc.verify(r, w, at, m, nil), false
	}
	for {
		w := s[at:min(len(s), at+span)]
		m := r.anchored.FindStringSubmatchIndex(w)
		if m == nil {
			return nil, false
		}
		if m[1] == len(w) && at+span < len(s) {
			span *= 8 // the match may go on past the cut: look further
			continue
		}
		return sc.verify(r, w, at, m, nil), false
	}
}

// matches runs rule r on s[lo:hi] and returns its findings (offsets in
// s); edge says a match touched a side of the window that is not a side
// of s.
func (sc *Scanner) matches(r *rule, s string, lo, hi int) ([]Finding, bool) {
	return sc.matchesWindow(r, s[lo:hi], lo, lo > 0, hi < len(s))
}

// matchesWindow runs rule r on w, which starts at offset base of the text;
// openLo, openHi: that side of w is not a side of the text, and edge says
// a match touched such a side.
func (sc *Scanner) matchesWindow(r *rule, w string, base int, openLo, openHi bool) (out []Finding, edge bool) {
	re := r.compiled()
	if !r.mayMatch(w) {
		return nil, false
	}
	for _, m := range re.FindAllStringSubmatchIndex(w, -1) {
		if (m[0] == 0 && openLo) || (m[1] == len(w) && openHi) {
			edge = true
		}
		out = sc.verify(r, w, base, m, out)
	}
	return out, edge
}

// verify applies a rule's secret group, entropy and allowlists to match m
// of w (which starts at offset lo of the text) and appends the finding.
func (sc *Scanner) verify(r *rule, w string, lo int, m []int, out []Finding) []Finding {
	start, end := m[0], m[1]
	match := strings.Trim(w[start:end], "\n")
	ss, se := start, end
	if len(m) > 2 {
		if g := r.spec.secretGroup; g > 0 && 2*g+1 < len(m) && m[2*g] >= 0 {
			ss, se = m[2*g], m[2*g+1]
		} else if g == 0 {
			for k := 2; k+1 < len(m); k += 2 {
				if m[k] >= 0 && m[k+1] > m[k] {
					ss, se = m[k], m[k+1]
					break
				}
			}
		}
	}
	secret := w[ss:se]
	if r.spec.entropy != 0 && entropy(secret) <= r.spec.entropy {
		return out
	}
	line := lineAround(w, start, end)
	if g := globalAllow(); g.excused(secret, match, line) {
		return out
	}
	excused := false
	for i := range r.allow {
		if r.allow[i].excused(secret, match, line) {
			excused = true
			break
		}
	}
	if excused || publicFixture(r.spec.id, secret) || r.valid != nil && !r.valid(secret, match) {
		return out
	}
	return append(out, Finding{Start: lo + ss, End: lo + se, Rule: r.spec.id})
}

// lineAround returns the line that holds s[start:end], at most maxLine
// bytes on either side (a text that is one long line must not make every
// finding cost its length).
func lineAround(s string, start, end int) string {
	const maxLine = 4096
	from := max(0, start-maxLine)
	a := from + strings.LastIndexByte(s[from:start], '\n') + 1
	to := min(len(s), end+maxLine)
	b := strings.IndexByte(s[end:to], '\n')
	if b < 0 {
		return s[a:to]
	}
	return s[a : end+b]
}

// gate reports whether a run of at least need token bytes intersects
// s[lo:hi] (clipped to s).
func gate(s string, lo, hi, need int) bool {
	lo, hi = max(0, lo), min(len(s), hi)
	if need <= 1 {
		return true
	}
	start := lo
	for start > 0 && lo-start < need && tokenByte[s[start-1]] {
		start--
	}
	end := hi
	for end < len(s) && end-hi < need && tokenByte[s[end]] {
		end++
	}
	run := 0
	for i := start; i < end; i++ {
		if tokenByte[s[i]] {
			run++
			if run >= need {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// merge sorts findings and drops those that overlap an earlier one.
func merge(fs []Finding) []Finding {
	if len(fs) < 2 {
		return fs
	}
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].Start != fs[j].Start {
			return fs[i].Start < fs[j].Start
		}
		return fs[i].End > fs[j].End
	})
	out := fs[:1]
	for _, f := range fs[1:] {
		last := &out[len(out)-1]
		if f.Start < last.End {
			last.End = max(last.End, f.End)
			continue
		}
		out = append(out, f)
	}
	return out
}

// Redacted is the stand-in that replaces a credential.
func Redacted(rule string) string { return "[REDACTED:" + rule + "]" }

// Redact replaces every credential in s by Redacted(rule) and returns the
// result and the findings replaced (of the first pass). Redacting its own
// output changes nothing. A string that is base64 whole (a blob: a
// resources/read blob, an image's or audio's data, read_media_file's
// answer) stays a blob of the same alphabet and padding: its decoded
// bytes are redacted and encoded again, so a client that decodes it
// gets the file with Redacted(rule) where the credential was.
func (sc *Scanner) Redact(s string) (string, []Finding) {
	if out, fs, ok := sc.redactBlob(s); ok {
		return out, fs
	}
	var first []Finding
	for pass := 0; pass < 4; pass++ {
		fs := sc.Find(s)
		if len(fs) == 0 {
			break
		}
		if first == nil {
			first = fs
		}
		var b strings.Builder
		b.Grow(len(s))
		at := 0
		for _, f := range fs {
			b.WriteString(s[at:f.Start])
			b.WriteString(Redacted(f.Rule))
			at = f.End
		}
		b.WriteString(s[at:])
		s = b.String()
	}
	return s, first
}

// Check is the `secrets` ingress check: it rejects a value that carries a
// credential, naming the rule (and for a known secret, where it comes
// from), never the value.
func (sc *Scanner) Check(value string) *rules.Finding {
	fs := sc.Find(value)
	if len(fs) == 0 {
		return nil
	}
	f := fs[0]
	reason := "value carries a credential (rule " + f.Rule + ")"
	if f.Rule == TooDenseRule {
		reason = "value is too dense with credential-like text to be checked"
	}
	if f.Rule == KnownRule {
		reason = "value carries a secret of the server's environment (" + f.Source + ")"
	}
	return &rules.Finding{Code: codes.Secret, Reason: reason,
		Remediation: "Do not send credentials through tool arguments; remove the secret from the value."}
}

// RawClean reports whether no string in a JSON text (a whole message, as
// validated by the strict parser) can hold a credential the scanner
// finds, looking at the raw bytes. False means: decode every string and
// Redact it. It errs only towards false.
func (sc *Scanner) RawClean(raw []byte) bool {
	if len(raw) == 0 {
		return true
	}
	return sc.RawCleanEscapes(raw, rawjson.ScanEscapes(raw))
}

// RawCleanEscapes is RawClean for a caller that has read the escapes of
// raw already (esc must be rawjson.ScanEscapes of raw).
func (sc *Scanner) RawCleanEscapes(raw []byte, esc rawjson.Escapes) bool {
	if len(raw) == 0 {
		return true
	}
	s := unsafe.String(&raw[0], len(raw))
	if n := rawParts(len(s)); n > 1 {
		return sc.rawCleanParts(s, esc, n)
	}
	rc := rawCheck{sc: sc, s: s, clean: true}
	rc.last.start = -1
	sc.idx.scan(s, rc.hit)
	return rc.clean && sc.escapesClean(s, esc) && sc.encodingsClean(s, esc, 0, len(s))
}

// rawCheck judges, in order of position, the needles the index finds in
// a raw JSON text s; clean turns false for good at the first that may
// hold a credential.
type rawCheck struct {
	sc        *Scanner
	s         string
	clean     bool
	doneTo    []int // by rule: where its last window run ended
	lacksTo   []int // by rule: how far its last skipped window lacked a need (lacksNeed)
	runs      []int // by rule: its window runs
	anchored  int   // anchored runs of all rules
	hiddenTo  int   // where the last decoded window around a hidden character ended
	escapedTo int   // where the last decoded window around an escaped word start ended
	memo      quickMemo
	last      struct {
		start, span, off int
		w                string
	}
}

// hit judges a needle n at at; false stops the scan (clean is false).
func (rc *rawCheck) hit(n *needle, at int) bool {
	sc, s := rc.sc, rc.s
	if n.owner == hiddenOwner {
		if at >= rc.hiddenTo {
			rc.clean, rc.hiddenTo = sc.windowClean(s, at, at, at)
		}
		return rc.clean
	}
	if n.owner < 0 {
		rc.clean = false
		return false
	}
	r := sc.rules[n.owner]
	if rc.doneTo != nil && (at < rc.doneTo[n.owner] || lacksUntil(at, len(n.text), rc.lacksTo[n.owner], len(s))) {
		return true
	}
	if !r.passesQuick(s, at, len(n.text), &rc.memo) {
		return true
	}
	if r.backAnchor {
		if escapedWordStart(s, at) {
			// The word the match starts with starts in an escape (\f,
			// \u0041): the raw bytes show other letters than the
			// reading. The decoded string around it is judged instead,
			// each part of it once.
			if at >= rc.escapedTo {
				rc.clean, rc.escapedTo = sc.windowClean(s, at, at, at)
			}
			return rc.clean
		}
	}
	if r.scan != nil {
		_, _, found := r.scan(s, at)
		rc.clean = !found
		return rc.clean
	}
	if !gate(s, at-gateBefore, at+len(n.text)+gateBefore, r.minRun()) {
		return true
	}
	if (r.anchors || r.backAnchor) && !tokenRunFrom(s, anchorOf(r, s, at), r.minPre()) {
		return true
	}
	if r.require != nil && !hasWordNear(s, at, len(n.text), *r.require) {
		return true
	}
	if !r.anchors && !r.backAnchor {
		// A window without the characters every match holds is
		// not searched, and costs no budget.
		lo, hi, _, _ := rawjson.StringAround(s, at, max(0, at-windowBefore), min(len(s), at+len(n.text)+windowAfter))
		if strings.IndexByte(s[lo:hi], '\\') < 0 {
			if lacks, next := r.lacksNeed(s, lo, hi, `\`); lacks {
				if rc.doneTo == nil {
					rc.doneTo, rc.lacksTo = make([]int, len(sc.rules)), make([]int, len(sc.rules))
				}
				rc.lacksTo[n.owner] = next
				return true
			}
		}
	}
	if rc.anchored++; rc.anchored > anchoredBudget(len(s)) {
		rc.clean = false
		return false
	}
	var found []Finding
	var edge bool
	done := -1
	if r.anchors || r.backAnchor {
		start := at
		if r.backAnchor {
			start = wordRunStart(s, at)
		}
		span := anchorSpan
		switch {
		case r.multiline:
			span = anchorSpanMultiline
		case len(r.confirm) > 0:
			span = 1024 // a few lines: all a confirmed rule reads
		}
		if start != rc.last.start || span != rc.last.span {
			// Rules that share a keyword (the two curl rules) read the
			// same decoded window: decode it once.
			rc.last.w, rc.last.off = rawFrom(s, start, span)
			rc.last.start, rc.last.span = start, span
		}
		found, _ = sc.matchesAt(r, rc.last.w, rc.last.off)
	} else {
		if rc.runs == nil {
			rc.runs = make([]int, len(sc.rules))
		}
		if rc.runs[n.owner]++; rc.runs[n.owner] > windowBudget(len(s)) {
			// Past Find's budget too: Find reads what it can and
			// covers the rest.
			rc.clean = false
			return false
		}
		lo, hi := max(0, at-windowBefore), min(len(s), at+len(n.text)+windowAfter)
		lo, hi, openLo, openHi := rawjson.StringAround(s, at, lo, hi)
		pre := rawjson.Unescape(s[lo:at])
		w := pre + rawjson.Unescape(s[at:hi])
		found, edge = sc.matchesWindow(r, w, 0, openLo, openHi)
		done = hi
		if openHi {
			done = searchedTo(hi, len(s))
		}
	}
	if len(found) > 0 || edge {
		rc.clean = false
		return false
	}
	if rc.doneTo == nil {
		rc.doneTo, rc.lacksTo = make([]int, len(sc.rules)), make([]int, len(sc.rules))
	}
	if done >= 0 {
		rc.doneTo[n.owner] = done
	}
	return true
}

// escapesClean is the raw check's look at the escapes of s: a \/ escape
// may hide a needle's slash; a \u escape of an ASCII character, any
// needle, so the string around each is decoded and searched.
func (sc *Scanner) escapesClean(s string, esc rawjson.Escapes) bool {
	if esc.Slash && sc.slashNeedle {
		return false
	}
	clean := true
	if esc.ASCII {
		rawjson.EachASCIIEscape(s, func(lo, hi int) bool {
			clean = len(sc.Find(rawjson.Unescape(s[lo:hi]))) == 0
			return clean
		})
	}
	return clean
}

// partMin is the least number of bytes of a raw text each goroutine of
// the raw check reads: below it, starting one costs more than it saves.
var partMin = 256 << 10

// rawParts is how many parts the raw check of n bytes is split into:
// partsPerProc per processor the runtime may run at once, each partMin
// or more.
func rawParts(n int) int {
	if n < 2*partMin {
		return 1 // without asking the runtime, which takes a lock
	}
	return max(1, min(partsPerProc*min(runtime.GOMAXPROCS(0), runtime.NumCPU()), n/partMin))
}

// partsPerProc is more than one so that the parts share the processors
// evenly with work that runs beside them (a caller judges other checks
// of the same text at once): the scheduler does not divide one
// goroutine's work between processors, and one part per processor
// plus one more check left a processor idle while the last part ran.
const partsPerProc = 2

// rawPart is what one part of a split raw check found: the needles that
// start in it (all of them up to resume, which is -1 when the list is
// whole) and whether the encoded text that starts in it is clean.
type rawPart struct {
	hits    []rawHit
	resume  int
	encoded bool
}

type rawHit struct {
	n  *needle
	at int
}

// maxPartHits bounds the needles a part lists; the rest of its range is
// scanned again when the parts are joined.
const maxPartHits = 1024

// rawCleanParts is the raw check of s split into n parts read at once.
// The needles of every part are judged afterwards in order of position by
// one rawCheck, so that check, its budgets included, sees what the scan
// of the whole text gives it. The encoded-text triggers (encodingsClean)
// are searched part by part, each part those that start in it.
func (sc *Scanner) rawCleanParts(s string, esc rawjson.Escapes, n int) bool {
	bounds := make([]int, n+1)
	for k := range bounds {
		bounds[k] = len(s) * k / n &^ 7 // whole words for nextTextRun
	}
	bounds[n] = len(s)
	parts := make([]rawPart, n)
	var wg sync.WaitGroup
	for k := 1; k < n; k++ {
		wg.Go(func() { parts[k] = sc.readPart(s, esc, bounds[k], bounds[k+1]) })
	}
	parts[0] = sc.readPart(s, esc, 0, bounds[1])
	wg.Wait()
	rc := rawCheck{sc: sc, s: s, clean: true}
	rc.last.start = -1
	for k, p := range parts {
		for _, h := range p.hits {
			if !rc.hit(h.n, h.at) {
				return false
			}
		}
		if p.resume >= 0 {
			sc.idx.scanRange(s, p.resume, bounds[k+1], rc.hit)
			if !rc.clean {
				return false
			}
		}
		if !p.encoded {
			return false
		}
	}
	return sc.escapesClean(s, esc)
}

// readPart lists the needles that start in s[from:to] (at most
// maxPartHits) and checks the encoded text whose triggers start there.
func (sc *Scanner) readPart(s string, esc rawjson.Escapes, from, to int) rawPart {
	p := rawPart{resume: -1}
	sc.idx.scanRange(s, from, to, func(n *needle, at int) bool {
		if len(p.hits) < maxPartHits {
			p.hits = append(p.hits, rawHit{n, at})
			return true
		}
		// Full: drop the needles at this last position and scan again
		// from it when the parts are joined.
		for len(p.hits) > 0 && p.hits[len(p.hits)-1].at == at {
			p.hits = p.hits[:len(p.hits)-1]
		}
		p.resume = at
		return false
	})
	p.encoded = sc.encodingsClean(s, esc, from, to)
	return p
}

// decodeReach is how far around a trigger the raw check decodes and
// searches: further than any keyword rule reads around its keyword.
const decodeReach = 1024

// windowClean decodes the part of the JSON string of the raw text s that
// holds offset at, from lo to hi at most (widened by decodeReach), and
// reports whether Find finds nothing there, and where the part ends.
func (sc *Scanner) windowClean(s string, at, lo, hi int) (bool, int) {
	lo, hi, _, _ = rawjson.StringAround(s, at, max(0, lo-decodeReach), min(len(s), hi+decodeReach))
	return len(sc.Find(rawjson.Unescape(s[lo:hi]))) == 0, max(hi, at+1)
}

// encodingsClean finds, in the raw JSON text s, what the decoding
// pipeline reads (a percent escape, an HTML character reference, a
// literal backslash escape, a \u escape of a character beyond ASCII, a
// run that may be base64, hex or base32 of text, a string that is one
// such run whole) and reports whether
// Find finds nothing around any of them. Every byte is decoded at most
// once per kind of trigger. It reads the triggers that start in [from,
// to), from moved back to the start of a run of backslashes (where an
// escape starts); a window decoded around one reaches past to as it
// must. Parts of a text split at multiples of 8 meet every trigger: an
// escape or a reference starts in one part, and a run of base64, hex or
// base32 that crosses an edge holds a whole word on one side that the
// search of that side samples (each part samples its first word).
func (sc *Scanner) encodingsClean(s string, esc rawjson.Escapes, from, to int) bool {
	for from > 0 && s[from-1] == '\\' {
		from--
	}
	next := escapeTriggers[:2]
	if esc.Wide {
		next = escapeTriggers[:]
	}
	for _, t := range next {
		for i := from; i < to; {
			at := t(s, i, to)
			if at < 0 {
				break
			}
			lo, hi := wordAround(s, at)
			ok, end := sc.windowClean(s, at, lo, hi)
			if !ok {
				return false
			}
			i = end
		}
	}
	for i := from; i < to; {
		at, lo, hi, whole := nextTextRun(s, i, to)
		if at < 0 {
			return true
		}
		if whole {
			if !sc.wholeRunClean(rawjson.Unescape(s[lo:hi])) {
				return false
			}
			i = hi
			continue
		}
		ok, end := sc.windowClean(s, at, lo, hi)
		if !ok {
			return false
		}
		i = end
	}
	return true
}

// escapeTriggers find, from an offset to a bound, the escapes
// encodingsClean decodes around: the last only in a text with \u escapes
// beyond ASCII or escaped backslashes (rawjson.Escapes.Wide).
var escapeTriggers = [...]func(string, int, int) int{nextPercent, nextEntity, nextWideEscape}

// wholeRunClean reports whether Find finds nothing in the readings it
// makes of the runs of a string that is one chain of runs of base64,
// hex or base32 (joined by padding or line breaks): the whole run
// decoded however it reads (findDecoded: whole), the others when they
// read as text. The string's own text the raw check has read already.
func (sc *Scanner) wholeRunClean(text string) bool {
	clean := true
	encodedRuns(text, func(run encodedRun) bool {
		whole := run.lo == 0 && run.hi == len(text)
		var buf [512]byte
		decs, n := decodings(text[run.lo:run.hi], run.sep, buf[:])
		for _, dec := range decs[:n] {
			if whole || texty(dec) {
				clean = clean && len(sc.findDecoded(string(dec), maxDepth-1)) == 0
			}
		}
		return clean
	})
	return clean
}

// wordAround returns the bounds of the run of bytes around at in a raw
// JSON text that holds no blank and no end of a string: an encoded token
// (4x percent-encoded, written in \u escapes) is many times longer than
// the credential it hides, and is decoded whole.
func wordAround(s string, at int) (int, int) {
	lo, hi := at, at
	for lo > 0 && s[lo-1] != ' ' && s[lo-1] != '\t' && !(s[lo-1] == '"' && rawjson.EvenBackslashes(s, lo-1)) {
		lo--
	}
	for hi < len(s) && s[hi] != ' ' && s[hi] != '\t' && !(s[hi] == '"' && rawjson.EvenBackslashes(s, hi)) {
		hi++
	}
	return lo, hi
}

// runChain returns the bounds of the run of base64 bytes around at in a
// raw JSON text, lines of wrapped base64 (joined by \n escapes) included.
func runChain(s string, at int) (int, int) {
	lo, hi := at, at
	for lo > 0 && (b64Byte[s[lo-1]] || s[lo-1] == '=' || lo >= 2 && s[lo-2] == '\\' && (s[lo-1] == 'n' || s[lo-1] == 'r')) {
		lo--
	}
	for hi < len(s) && (b64Byte[s[hi]] || s[hi] == '=' || s[hi] == '\\' && hi+1 < len(s) && (s[hi+1] == 'n' || s[hi+1] == 'r')) {
		hi++
	}
	return lo, hi
}

// linesFrom returns s from at to its n-th line break (CR or LF), at most
// max bytes: the reach of a regex whose dots stop at line ends and which
// crosses a few of them.
func linesFrom(s string, at, n, max int) string {
	end := min(len(s), at+max)
	for i := at; i < end; i++ {
		if s[i] == '\n' || s[i] == '\r' {
			n--
			if n < 0 {
				return s[at:i]
			}
		}
	}
	return s[at:end]
}

// indexAny returns the first index of any of subs in s, or -1.
func indexAny(s string, subs []string) int {
	first := -1
	for _, sub := range subs {
		if i := strings.Index(s, sub); i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	return first
}

// anchorOf returns where an anchored rule's match would start for a
// keyword hit at at.
func anchorOf(r *rule, s string, at int) int {
	if r.backAnchor {
		return wordRunStart(s, at)
	}
	return at
}

// escapedWordStart reports whether the run of word bytes that ends at
// s[at] starts right after a backslash (a JSON escape's letter, or the
// end of an escaped backslash), looking back at most maxNameLen bytes.
func escapedWordStart(s string, at int) bool {
	for i := at; i > max(0, at-maxNameLen); i-- {
		if !isWordByte(s[i-1]) {
			return s[i-1] == '\\'
		}
	}
	return false
}

// maxNameLen bounds how far back escapedWordStart looks, so that a flood
// of word bytes stays linear: the escape's letter changes the first word
// of a name, and the words a rule knows in a credential's name are short.
const maxNameLen = 128

// wordRunStart returns where the run of word bytes ([A-Za-z0-9_]) that
// ends at s[at] starts.
func wordRunStart(s string, at int) int {
	for at > 0 && isWordByte(s[at-1]) {
		at--
	}
	return at
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// rawFrom returns, for an anchored match at raw offset start of a JSON
// text, the decoded text from the character before start (for \b) to the
// end of the JSON string (at most span bytes on: a match that reaches the
// cut counts as found), and the
// offset of start in it. Without escapes it is a slice of s.
func rawFrom(s string, start, span int) (string, int) {
	lo := start
	switch {
	case start >= 2 && s[start-2] == '\\' && rawjson.EvenBackslashes(s, start-2):
		lo = start - 2 // \n and the like
	case start >= 6 && s[start-6] == '\\' && s[start-5] == 'u' && rawjson.EvenBackslashes(s, start-6):
		lo = start - 6 // \u0041
	case start >= 1:
		lo = start - 1
	}
	_, end, _, _ := rawjson.StringAround(s, start, start, min(len(s), start+span))
	region := s[lo:end]
	if strings.IndexByte(region, '\\') < 0 {
		return region, start - lo
	}
	pre := rawjson.Unescape(s[lo:start])
	return pre + rawjson.Unescape(s[start:end]), len(pre)
}

// blobEncodings are the encodings a blob is written in, tried in order.
var blobEncodings = []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding}

// maybeBase64 reports whether s is written in one base64 alphabet
// (standard or URL-safe) with at most its trailing padding: the check
// before a decoding, which allocates the decoded size first and would
// cost three times a long string that is not base64 at its fifth byte.
func maybeBase64(s string) bool {
	body := strings.TrimRight(s, "=")
	std, url := true, true
	for i := 0; i < len(body) && (std || url); i++ {
		switch c := body[i]; {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case c == '+' || c == '/':
			url = false
		case c == '-' || c == '_':
			std = false
		default:
			return false
		}
	}
	return std || url
}

// redactBlob redacts a string that is base64 whole and whose decoded
// bytes hold a credential; ok is false for any other string.
func (sc *Scanner) redactBlob(s string) (string, []Finding, bool) {
	if len(s) < minEncodedRun || !maybeBase64(s) {
		return "", nil, false
	}
	for _, enc := range blobEncodings {
		d, err := enc.DecodeString(s)
		if err != nil {
			continue
		}
		red, fs := sc.Redact(string(d))
		if len(fs) == 0 {
			return "", nil, false
		}
		return enc.EncodeToString([]byte(red)), []Finding{{Start: 0, End: len(s), Rule: fs[0].Rule, Source: fs[0].Source}}, true
	}
	return "", nil, false
}

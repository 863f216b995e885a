package secrets

import (
	"math"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// ruleSpec is one credential rule as gitleaks writes it: a regular
// expression, the capture group that holds the secret (0: the first
// non-empty group, else the whole match), the Shannon entropy the secret
// must exceed (0: none), the lower-case keywords one of which must occur
// in the text for the rule to run, and allowlists that excuse a finding.
type ruleSpec struct {
	id          string
	regex       string
	secretGroup int
	entropy     float64
	keywords    []string
	allow       []allowSpec
}

// allowSpec excuses a finding whose target (the secret, the whole match,
// or the line) matches one of its regexes, or whose secret contains a stop
// word. and: both kinds must hold. never: an allowlist gitleaks applies to
// paths or commits only, which cannot hold for a string.
type allowSpec struct {
	target    string
	and       bool
	never     bool
	regexes   []string
	stopwords []string
}

// rule is a ruleSpec made ready to run. Its regular expressions compile on
// first use: most rules never run, because their keywords never occur.
type rule struct {
	spec     *ruleSpec
	index    int
	keywords []string
	// runs are the token runs of every match (tokenRuns), read from the
	// regex on the rule's first hit: most rules never hit in a session,
	// and parsing them all took a fifth of mcpguard's start.
	runsOnce sync.Once
	runs     runInfo

	// anchored: every match starts with one of the keywords, so a hit is
	// judged by one match anchored there. leadingWB: the regex starts with
	// \b, checked by hand before the anchored match.
	anchors   bool
	leadingWB bool
	multiline bool // the regex matches across lines: [\s\S] or (?s)
	// confirm: one of these must occur after the keyword for the regex
	// to have a chance (see confirmAfter).
	confirm []string
	// tail: the part of a confirmed rule's regex from its flag on.
	tail func() *regexp.Regexp
	// require: a word every match holds near its start (requireAfter).
	require *requiredWord
	// backAnchor: every match starts where the run of word bytes that
	// ends at the keyword starts (see backAnchored).
	backAnchor bool
	// scan reads the rule's matches instead of its regex (keyScans).
	scan func(s string, at int) (lo, hi int, ok bool)
	// quick: a test every match passes at its keyword (ownQuick, else
	// siteTest, derived on the rule's first hit, never for a scan;
	// nil: none).
	quickOnce sync.Once
	quick     func(s string, at, n int) bool
	sites     *siteSet // the derived quick test's sites
	// needs: sets of characters one of each of which every match holds
	// (mustHold), read with the quick test.
	needs []string
	// valid: what a match's secret must also be (ownValid).
	valid func(secret, match string) bool

	once     sync.Once
	re       *regexp.Regexp
	anchored *regexp.Regexp
	allow    []allow
}

// passesQuick reports whether a keyword hit at [at, at+n) of s passes
// the rule's quick test: where it does not, no match of the rule has its
// keyword there. memo, when not nil, carries the last judgement of a
// hit by a shared siteSet from one rule to the next.
func (r *rule) passesQuick(s string, at, n int, memo *quickMemo) bool {
	r.prepareQuick()
	switch {
	case r.quick == nil:
		return true
	case r.sites == nil:
		return r.quick(s, at, n)
	case memo == nil:
		return r.sites.passes(s, at, n, nil)
	}
	if memo.ss != r.sites || memo.at != at || memo.n != n {
		memo.ss, memo.at, memo.n = r.sites, at, n
		memo.ok = r.sites.passes(s, at, n, memo)
	}
	return memo.ok
}

// prepareQuick derives the rule's quick test and needs, once. A scan
// reads more than its rule's regex (keyArmour takes a + for a space, the
// header of a key sent in a URL's query, which a percent-encoded key
// decodes to), so a test derived from the regex would pass over what the
// scan finds; a scan reads at most a header's 100 characters at a hit
// that is no key, and needs no quick test.
func (r *rule) prepareQuick() {
	r.quickOnce.Do(func() {
		if r.quick == nil && r.scan == nil {
			if r.sites = siteTest(r.spec.regex, r.keywords); r.sites != nil {
				r.quick = func(s string, at, n int) bool { return r.sites.passes(s, at, n, nil) }
			}
		}
		r.needs = mustHold(r.spec.regex)
	})
}

// mayMatch reports whether w holds a character of each of the rule's
// needs: a window without one holds no match, and its regex run (of a
// rule whose keyword is not in its match, such as facebook's digits) is
// skipped.
func (r *rule) mayMatch(w string) bool {
	r.prepareQuick()
	for _, need := range r.needs {
		if !strings.ContainsAny(w, need) {
			return false
		}
	}
	return true
}

// lacksNeed reports whether the window s[lo:hi] lacks every character
// of one of the rule's needs (it holds no match: see mayMatch) and, when
// it does, where the first character of such a need after the window is
// (of stop too: a raw JSON escape may spell one), len(s) when there is
// none. A later keyword's window holds no match either when it starts
// inside this one and ends at or before that point; one that reaches
// past it must be searched: a decoy keyword a few hundred bytes before a
// credential must not hide it.
func (r *rule) lacksNeed(s string, lo, hi int, stop string) (bool, int) {
	r.prepareQuick()
	w := s[lo:hi]
	lacks, next := false, hi
	for _, need := range r.needs {
		if strings.ContainsAny(w, need) {
			continue
		}
		lacks = true
		i := strings.IndexAny(s[hi:], need+stop)
		if i < 0 {
			return true, len(s)
		}
		next = max(next, hi+i)
	}
	return lacks, next
}

// lacksUntil is whether a keyword at [at, at+n) of a rule whose window
// before lacked a need, up to lacksTo (lacksNeed), lacks it too: its
// window ends at or before lacksTo (every window does when it is the
// text's end).
func lacksUntil(at, n, lacksTo, textLen int) bool {
	return lacksTo == textLen || at+n+windowAfter <= lacksTo
}

//go:generate go test -run ^TestTables$ -update

// leading is a rule's leading literals (leadingLiterals), generated
// into tables.go at build time: parsing every regex at start took a
// third of mcpguard's start.
type leading struct {
	id   string
	lits []string
	wb   bool
}

// leadingOf returns the leading literals of spec, the i-th of ruleSpecs:
// from tables.go, or from a parse of its regex when the table does not
// hold it (TestTables fails then).
func leadingOf(i int, spec *ruleSpec) ([]string, bool) {
	if i < len(leadingTable) && leadingTable[i].id == spec.id {
		return leadingTable[i].lits, leadingTable[i].wb
	}
	return leadingLiterals(spec.regex)
}

// findAnchors sets r.anchors when every match of the rule starts with one
// of its keywords; lits and wb are the regex's leading literals.
func (r *rule) findAnchors(lits []string, wb bool) {
	if len(lits) == 0 {
		return
	}
	for _, lit := range lits {
		ok := false
		for _, kw := range r.keywords {
			if strings.HasPrefix(lit, kw) {
				ok = true
				break
			}
		}
		if !ok {
			return
		}
	}
	r.anchors, r.leadingWB = true, wb
	r.multiline = strings.Contains(r.spec.regex, `\s\S`) || strings.Contains(r.spec.regex, `(?s`)
}

// wordBoundaryAt reports whether \b holds at s[at].
func wordBoundaryAt(s string, at int) bool {
	isWord := func(c byte) bool {
		return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	before := at > 0 && isWord(s[at-1])
	after := at < len(s) && isWord(s[at])
	return before != after
}

// leadingLiterals returns the literals (lower case) one of which every
// match of expr starts with, and whether a \b comes before them; nil when
// it cannot tell.
func leadingLiterals(expr string) (lits []string, wb bool) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, false
	}
	var walk func(re *syntax.Regexp) []string
	walk = func(re *syntax.Regexp) []string {
		for {
			switch re.Op {
			case syntax.OpCapture:
				re = re.Sub[0]
				continue
			case syntax.OpConcat:
				i := 0
				for i < len(re.Sub) && re.Sub[i].Op == syntax.OpWordBoundary {
					wb = true
					i++
				}
				if i == len(re.Sub) {
					return nil
				}
				re = re.Sub[i]
				continue
			case syntax.OpLiteral:
				return []string{strings.ToLower(string(re.Rune))}
			case syntax.OpAlternate:
				var out []string
				for _, sub := range re.Sub {
					l := walk(sub)
					if l == nil {
						return nil
					}
					out = append(out, l...)
				}
				return out
			}
			return nil
		}
	}
	return walk(re), wb
}

type allow struct {
	target string
	and    bool
	never  bool
	// res: one regex per allowlist entry; a target matches the
	// allowlist when it matches one (each alone runs much faster than
	// their alternation).
	res       []*regexp.Regexp
	stopwords []string
	// last: the last judgement, which a text that repeats one
	// credential-shaped string (a flood of "glpat-") asks for again at
	// every hit; its regexes took most of such a text's cost.
	last *atomic.Pointer[allowMemo]
}

// allowMemo is an allowlist's judgement of a target and secret.
type allowMemo struct {
	target, secret string
	excused        bool
}

// maxMemo bounds the target and secret an allowMemo copies.
const maxMemo = 512

func (r *rule) compiled() *regexp.Regexp {
	r.once.Do(func() {
		r.re = regexp.MustCompile(r.spec.regex)
		if r.anchors || r.backAnchor {
			r.anchored = regexp.MustCompile(`^(?:` + r.spec.regex + `)`)
		}
		for _, a := range r.spec.allow {
			r.allow = append(r.allow, compileAllow(a))
		}
	})
	return r.re
}

func compileAllow(a allowSpec) allow {
	out := allow{target: a.target, and: a.and, never: a.never, stopwords: a.stopwords, last: new(atomic.Pointer[allowMemo])}
	for _, expr := range a.regexes {
		out.res = append(out.res, regexp.MustCompile(expr))
	}
	return out
}

var globalAllow = sync.OnceValue(func() allow { return compileAllow(gitleaksGlobalAllow) })

// excused reports whether an allowlist excuses a finding.
func (a *allow) excused(secret, match, line string) bool {
	if a.never {
		return false
	}
	target := secret
	switch a.target {
	case "match":
		target = match
	case "line":
		target = line
	}
	if m := a.last.Load(); m != nil && m.target == target && m.secret == secret {
		return m.excused
	}
	excused := a.judge(target, secret)
	if len(target)+len(secret) <= maxMemo {
		a.last.Store(&allowMemo{strings.Clone(target), strings.Clone(secret), excused})
	}
	return excused
}

func (a *allow) judge(target, secret string) bool {
	re := false
	if target != "" {
		for _, x := range a.res {
			if x.MatchString(target) {
				re = true
				break
			}
		}
	}
	sw := false
	if len(a.stopwords) > 0 && secret != "" {
		lower := strings.ToLower(secret)
		for _, w := range a.stopwords {
			if strings.Contains(lower, w) {
				sw = true
				break
			}
		}
	}
	if a.and {
		return (len(a.res) == 0 || re) && (len(a.stopwords) == 0 || sw)
	}
	return re || sw
}

// entropy is the Shannon entropy of s in bits per byte, as gitleaks
// computes it.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	var h float64
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// tokenByte marks the bytes a credential is written with: letters,
// digits, and + / = _ . ~ - \ (the backslash so that a JSON escape inside
// a token never shortens its run).
var tokenByte = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range `+/=_.~-\` {
		t[c] = true
	}
	return t
}()

// runInfo describes the token-byte runs every match of a regex contains:
// all: every byte of every match is a token byte (then minLen bounds the
// match's length); pre, suf: guaranteed runs at the start and the end;
// best: a guaranteed run anywhere.
type runInfo struct {
	all            bool
	minLen         int
	pre, suf, best int
}

// minRun is the length of the run of token bytes (tokenByte) that every
// match contains; a text with no such run near a keyword cannot match,
// whatever the regex.
func (r *rule) minRun() int { return r.tokenRuns().best }

// minPre is the run of token bytes every match starts with: for an
// anchored rule, the text from the hit must start with that many.
func (r *rule) minPre() int { return r.tokenRuns().pre }

func (r *rule) tokenRuns() runInfo {
	r.runsOnce.Do(func() { r.runs = tokenRuns(r.spec.regex) })
	return r.runs
}

// tokenRuns returns, for every match of expr, the longest run of token
// bytes it is sure to hold (best) and the run it is sure to start with
// (pre), from one parse of expr.
func tokenRuns(expr string) runInfo {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return runInfo{}
	}
	return runsOf(re.Simplify())
}

// tokenRunFrom reports whether s has at least n token bytes from at.
func tokenRunFrom(s string, at, n int) bool {
	if at+n > len(s) {
		return false
	}
	for i := at; i < at+n; i++ {
		if !tokenByte[s[i]] {
			return false
		}
	}
	return true
}

func runsOf(re *syntax.Regexp) runInfo {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return runInfo{all: true}
	case syntax.OpLiteral:
		var ri runInfo
		ri.all = true
		cur := 0
		for _, r := range re.Rune {
			if r < utf8.RuneSelf && tokenByte[r] {
				cur++
				if ri.all {
					ri.pre = cur
				}
			} else {
				ri.all = false
				cur = 0
			}
			ri.best = max(ri.best, cur)
			ri.minLen++
		}
		ri.suf = cur
		return ri
	case syntax.OpCharClass:
		if classIsToken(re) {
			return runInfo{all: true, minLen: 1, pre: 1, suf: 1, best: 1}
		}
		return runInfo{}
	case syntax.OpCapture:
		return runsOf(re.Sub[0])
	case syntax.OpStar, syntax.OpQuest:
		sub := runsOf(re.Sub[0])
		return runInfo{all: sub.all}
	case syntax.OpPlus:
		return repeatRuns(runsOf(re.Sub[0]), 1, -1)
	case syntax.OpRepeat:
		return repeatRuns(runsOf(re.Sub[0]), re.Min, re.Max)
	case syntax.OpConcat:
		acc := runInfo{all: true}
		for _, s := range re.Sub {
			acc = concatRuns(acc, runsOf(s))
		}
		return acc
	case syntax.OpAlternate:
		var acc runInfo
		for i, s := range re.Sub {
			ri := runsOf(s)
			if i == 0 {
				acc = ri
				continue
			}
			acc = runInfo{all: acc.all && ri.all, minLen: min(acc.minLen, ri.minLen),
				pre: min(acc.pre, ri.pre), suf: min(acc.suf, ri.suf), best: min(acc.best, ri.best)}
		}
		return acc
	}
	return runInfo{} // any character, and anything unknown: no guarantee
}

func concatRuns(a, b runInfo) runInfo {
	out := runInfo{all: a.all && b.all, minLen: a.minLen + b.minLen}
	out.pre = a.pre
	if a.all {
		out.pre = a.minLen + b.pre
	}
	out.suf = b.suf
	if b.all {
		out.suf = b.minLen + a.suf
	}
	out.best = max(a.best, b.best, a.suf+b.pre, out.pre, out.suf)
	return out
}

func repeatRuns(sub runInfo, lo, hi int) runInfo {
	if lo <= 0 {
		return runInfo{all: sub.all}
	}
	acc := sub
	for i := 1; i < min(lo, 3); i++ {
		acc = concatRuns(acc, sub)
	}
	if sub.all {
		acc.minLen = lo * sub.minLen
		acc.pre, acc.suf, acc.best = acc.minLen, acc.minLen, acc.minLen
	}
	if hi != lo && !sub.all {
		acc.suf = 0
	}
	return acc
}

func classIsToken(re *syntax.Regexp) bool {
	for i := 0; i+1 < len(re.Rune); i += 2 {
		lo, hi := re.Rune[i], re.Rune[i+1]
		if lo == hi && (lo == 0x17F || lo == 0x212A) {
			continue // ſ and the Kelvin sign, added by (?i) to s and k
		}
		if hi >= utf8.RuneSelf {
			return false
		}
		for c := lo; c <= hi; c++ {
			if !tokenByte[c] {
				return false
			}
		}
	}
	return len(re.Rune) > 0
}

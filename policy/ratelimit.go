package policy

import (
	"crypto/sha256"
	"hash"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/go-json-experiment/json"

	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/rules/canon"
	"github.com/mcpguard/mcpguard/rules/codes"
	"github.com/mcpguard/mcpguard/rules/ratelimit"
)

// CodeRateLimited is the JSON-RPC error code of a request refused by a
// rate_limit rule, in the shape of the rejection contract mcpguard
// follows ("Rate limit exceeded").
const CodeRateLimited int64 = -32004

// rateLimitSummary is the summary of a rate-limit rejection: nothing in
// the call was unsafe, it came too soon.
const rateLimitSummary = "Rate limit exceeded"

// limitState is the rate-limit log of one session: a window per
// rate_limit rule, found by the rule's limitID so that a reloaded policy
// whose rule counts the same calls keeps counting where the old one was.
// mu serialises judging a call against every rule that covers it with
// recording it in all of them.
type limitState struct {
	mu      sync.Mutex
	windows map[string]*ratelimit.Window
}

// window returns r's window in the session, made on first use and set to
// r's numbers (which a reload may have changed).
func (l *limitState) window(r *ingressRule) *ratelimit.Window {
	w, ok := l.windows[r.limitID]
	switch {
	case !ok:
		if l.windows == nil {
			l.windows = map[string]*ratelimit.Window{}
		}
		w = ratelimit.NewWindow(*r.limit)
		l.windows[r.limitID] = w
	case w.Limit() != *r.limit:
		w.SetLimit(*r.limit)
	}
	return w
}

// limitIDs gives each rate_limit rule the identity its window is kept
// under: what it counts (tools, methods, fields, as written) and, for
// rules that count the same thing with other numbers (10 a minute and
// 100 an hour), its place among them.
func limitIDs(rs []*ingressRule) {
	seen := map[string]int{}
	for _, r := range rs {
		fields := make([]string, len(r.fields))
		for i, f := range r.fields {
			fields[i] = f.String()
		}
		base := strings.Join(r.tools, "\x00") + "\x01" + strings.Join(r.methods, "\x00") + "\x01" + strings.Join(fields, "\x00")
		r.limitID = base + "\x01" + strconv.Itoa(seen[base])
		seen[base]++
	}
}

// limitsFor returns the rate_limit rules that count a call of name by
// method. A tool glob also matches the spellings a server that resolves
// names loosely may read as a name it matches, as deny entries do: case
// folded (canon.Fold: CREATE_COMMENT) and look-alike letters
// (canon.Loose: a Cyrillic е in create_comment); none is run uncounted.
func (p *Policy) limitsFor(method, name string) []*ingressRule {
	if len(p.limits) == 0 {
		return nil
	}
	var out []*ingressRule
	var folded, loose string
	for _, r := range p.limits {
		if r.appliesTo(method, name) {
			out = append(out, r)
			continue
		}
		if uriMethod(method) || !slices.Contains(r.methods, method) {
			continue
		}
		if folded == "" {
			folded, loose = canon.Fold(name), canon.Loose(name)
		}
		for _, g := range r.tools {
			f, _ := path.Match(canon.Fold(g), folded)
			l, _ := path.Match(canon.LooseGlob(g), loose)
			if f || l {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// checkLimits judges a request that every other check allowed against the
// rate_limit rules that count it (rs). It is admitted when every rule
// admits it, and then counted by all of them; a refused call is not
// counted (it never reaches the server), unless audit says it is
// forwarded all the same.
func (s *Session) checkLimits(rs []*ingressRule, m *message.Message, audit bool) *message.Rejection {
	if len(rs) == 0 {
		return nil
	}
	args := m.Arguments
	if uriMethod(m.Method) {
		args, _ = json.Marshal(map[string]string{"uri": m.URI})
	}
	keys := make([]ratelimit.Key, len(rs))
	for i, r := range rs {
		keys[i] = limitKey(r, args)
	}
	now := time.Now()
	s.limits.mu.Lock()
	defer s.limits.mu.Unlock()
	var refused *ingressRule
	var wait time.Duration
	for i, r := range rs {
		if wait = s.limits.window(r).Wait(keys[i], now); wait > 0 {
			refused = r
			break
		}
	}
	if refused == nil || audit {
		for i, r := range rs {
			s.limits.window(r).Record(keys[i], now)
		}
	}
	if refused == nil {
		return nil
	}
	return limitRejection(refused, m, wait)
}

// limitRejection says which limit refused the call and how long to wait:
// retry_after_s, whole seconds rounded up.
func limitRejection(r *ingressRule, m *message.Message, wait time.Duration) *message.Rejection {
	secs := int(math.Ceil(wait.Seconds()))
	name := m.Name
	if uriMethod(m.Method) {
		name = m.URI
	}
	what := clean(name)
	if what == "" {
		what = m.Method
	}
	reason := what + " allows " + plural(r.limit.Calls, "call") + " per " + r.limit.Per.String()
	var fields []string
	for _, f := range r.fields {
		fields = append(fields, f.String())
	}
	if len(fields) > 0 {
		reason += " for each value of " + strings.Join(fields, ", ")
	}
	reason += "; retry in " + plural(secs, "second")
	return &message.Rejection{
		ErrorCode:   codes.RateLimited,
		Summary:     rateLimitSummary,
		Lead:        rateLimitSummary,
		Error:       "rate limit exceeded: " + reason + " (policy entry " + r.rule + ")",
		Reason:      reason,
		Remediation: "Wait " + plural(secs, "second") + " before calling " + what + " again; calls sooner are refused.",
		Tool:        clean(m.Name),
		Field:       strings.Join(fields, ","),
		Rule:        r.rule,
		Retryable:   true,
		RetryAfter:  secs,
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// limitKey is the digest of what r's fields select in args: the calls
// counted together are those with the same values. Values are compared
// as a server may read them, so that spellings of one value share a
// count: strings case folded (canon.Fold), numbers and numeric strings
// by value (12, "12", 1.2e1, "0xC", "١٢"; see keyNumber). A rule without
// fields has one key.
func limitKey(r *ingressRule, args []byte) ratelimit.Key {
	if len(r.fields) == 0 {
		return ratelimit.Key{}
	}
	h := sha256.New()
	w := walkers.Get().(*walker)
	defer w.release()
	if w.tree.parse(args) != nil {
		h.Write(args) // the arguments passed strict parsing: not reached
		return ratelimit.Key(h.Sum(nil))
	}
	w.key = h
	for i := range r.fields {
		w.judgeSelector(r, &r.fields[i], false)
		h.Write([]byte{0xff}) // selectors apart
	}
	return ratelimit.Key(h.Sum(nil))
}

// keyValue adds the value at node i, or a member name, to w.key.
func (w *walker) keyValue(i int32, name string, isName bool) {
	h := w.key
	if isName {
		writeKeyString(h, name)
		return
	}
	n := &w.tree.nodes[i]
	switch n.kind {
	case argString:
		writeKeyString(h, n.str)
	case argNumber:
		writeKeyNumber(h, n.number())
	case argObject, argArray:
		h.Write([]byte{'[', byte(n.kind)})
		for c := i + 1; c < n.end; c++ {
			if w.tree.nodes[c].name != "" {
				writeKeyString(h, w.tree.nodes[c].name)
			}
			if k := w.tree.nodes[c].kind; k != argObject && k != argArray {
				w.keyValue(c, "", false)
			}
		}
		h.Write([]byte{']'})
	default:
		h.Write([]byte{'l', byte(n.kind), 0})
	}
}

func writeKeyString(h hash.Hash, s string) {
	folded := canon.Fold(s)
	if f, ok := keyNumber(folded); ok {
		writeKeyNumber(h, f)
		return
	}
	h.Write([]byte{'s'})
	h.Write([]byte(folded))
	h.Write([]byte{0})
}

// keyNumber reads a folded string (canon.Fold: invisible characters such
// as the BOM that JavaScript trims are gone, full-width digits are ASCII,
// case is folded) as the number a server may parse it to: decimal with
// sign, leading zeros, exponent or digit separators, any script's decimal
// digits (Python's int reads "١٢" as 12), and 0x, 0o, 0b literals
// (JavaScript's Number). A leading zero alone is decimal ("012" is 12), as
// both read it.
func keyNumber(s string) (float64, bool) {
	s = strings.Map(asciiDigit, s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f, !math.IsInf(f, 0) && !math.IsNaN(f)
	}
	digits := strings.TrimLeft(s, "+-")
	if len(digits) > 2 && digits[0] == '0' && strings.ContainsRune("xob", rune(digits[1])) {
		if i, err := strconv.ParseInt(s, 0, 64); err == nil {
			return float64(i), true
		}
	}
	return 0, false
}

// asciiDigit maps a decimal digit of any script to its ASCII digit: the
// Unicode Nd ranges are runs of whole 0-9 sequences, each starting at its
// zero.
func asciiDigit(r rune) rune {
	if r < 0x80 || !unicode.Is(unicode.Nd, r) {
		return r
	}
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return '0' + (r-rune(rg.Lo))%10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return '0' + (r-rune(rg.Lo))%10
		}
	}
	return r
}

func writeKeyNumber(h hash.Hash, f float64) {
	h.Write([]byte{'n'})
	h.Write(strconv.AppendFloat(nil, f, 'g', -1, 64))
	h.Write([]byte{0})
}

// countedBy returns the rate_limit rules that count request m.
func (p *Policy) countedBy(m *message.Message) []*ingressRule {
	switch {
	case m.Method == "tools/call":
		return p.callPlanFor(m.Name).limits
	case uriMethod(m.Method):
		return p.limitsFor(m.Method, m.URI)
	}
	return p.limitsFor(m.Method, m.Name)
}

package secrets

import (
	"math/rand/v2"
	"net/url"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// sample writes a random string that re matches: every alternative and
// repeat count may be drawn, unbounded repeats run at most extra past
// their minimum. In a part that may be left out (a fill between a
// keyword and an operator) a class's non-ASCII characters (ſ and the
// Kelvin sign under (?i)) are drawn one time in eight; elsewhere ASCII
// is, as in a credential and its keyword (the scanner's token runs and
// keyword index read ASCII).
func sample(r *rand.Rand, re *syntax.Regexp, b *strings.Builder, wide bool, extra int) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, c := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 && ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') && r.IntN(2) == 0 {
				c ^= 0x20 // the other case
			}
			b.WriteRune(c)
		}
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		set := charsOf(re)
		var ascii []rune
		for c := range rune(utf8.RuneSelf) {
			if set.ascii[c] {
				ascii = append(ascii, c)
			}
		}
		if len(set.wide) > 0 && (len(ascii) == 0 || wide && r.IntN(8) == 0) {
			k := 2 * r.IntN(len(set.wide)/2)
			lo, hi := set.wide[k], min(set.wide[k+1], set.wide[k]+64)
			b.WriteRune(lo + rune(r.IntN(int(hi-lo)+1)))
			return
		}
		if len(ascii) > 0 {
			b.WriteRune(ascii[r.IntN(len(ascii))])
		}
	case syntax.OpCapture:
		sample(r, re.Sub[0], b, wide, extra)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			sample(r, s, b, wide, extra)
		}
	case syntax.OpAlternate:
		sample(r, re.Sub[r.IntN(len(re.Sub))], b, wide, extra)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, extra
		switch re.Op {
		case syntax.OpPlus:
			lo, hi = 1, 1+extra
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
			if hi < 0 {
				hi = lo + extra
			}
		}
		n := lo + r.IntN(hi-lo+1)
		if r.IntN(3) == 0 {
			n = []int{lo, hi}[r.IntN(2)] // the limits, where a test is most likely wrong
		}
		for range n {
			sample(r, re.Sub[0], b, wide || lo == 0, extra)
		}
	}
}

// sitePieces are what a mutation puts into a sample: the operators, the
// blanks and quotes around them, a JSON escape, letters the regexes read
// in other cases or fold, and bytes outside every class.
var sitePieces = []string{"=", ":", "=>", ":=", "||", "?=", ",", ">", " ", "\t", "\n", "'", `"`, `\"`, `\n`, `\u0041`, "\\",
	"_", "-", ".", "a", "Z", "9", "ſ", "\u212a", "é", "\xff", "/", "x", "\x00"}

// longFill is how far past their minimum a long sample's unbounded
// repeats run: past every reach and window of the scanner (decodeReach,
// windowAfter), so a cap that cuts a long value shows.
const longFill = decodeReach + 200

// quickCorpus returns, for rule r, texts that put its keywords where
// its regex has them and in every other place: samples of its regex
// that hold a keyword (two of them with their unbounded parts longer
// than any cap), mutated, embedded, and repeated. A rule read by a scan
// gets key blocks (keyCorpus): its regex is not what it matches.
func quickCorpus(t testing.TB, r *rule, rnd *rand.Rand) []string {
	if r.scan != nil {
		return keyCorpus(rnd)
	}
	re, err := syntax.Parse(r.spec.regex, syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	r.prepareQuick()
	var out []string
	samples := 12
	if raceEnabled {
		samples = 1
	}
	for i := range samples + 2 {
		var b strings.Builder
		if i < samples {
			sample(rnd, re, &b, false, 8)
		} else {
			sample(rnd, re, &b, false, longFill)
		}
		s := b.String()
		if !slices.ContainsFunc(r.keywords, func(kw string) bool { return strings.Contains(strings.ToLower(s), kw) }) {
			if r.quick != nil {
				continue // a match the keyword index cannot reach (secretaccess_key), with or without a quick test
			}
			s = r.keywords[0] + " " + s // a rule whose keyword is not in its match (facebook's digits)
		}
		out = append(out, s)
		for range 4 {
			m := []byte(s)
			for range 1 + rnd.IntN(3) {
				at := rnd.IntN(len(m) + 1)
				cut := min(len(m), at+rnd.IntN(3))
				m = slices.Concat(m[:at], []byte(sitePieces[rnd.IntN(len(sitePieces))]), m[cut:])
			}
			out = append(out, string(m))
		}
		kw := r.keywords[rnd.IntN(len(r.keywords))]
		out = append(out, kw+" "+s, strings.Repeat(kw, 3)+s+strings.Repeat(kw, 3), "x = "+s+"\n"+kw+"=", `{"k":"`+s+`"}`)
	}
	for _, kw := range r.keywords {
		out = append(out, strings.Repeat(kw, 40), strings.Repeat(kw+"=", 20), strings.Repeat(strings.ToUpper(kw)+": ", 20))
	}
	return out
}

// keyCorpus returns private key blocks of every size up to an RSA 8192
// key and past, with spaces or a URL query's + in their armour, whole,
// cut as head and tail cut them, and mutated.
func keyCorpus(rnd *rand.Rand) []string {
	var out []string
	sizes := []int{40, 1700, 6300}
	if raceEnabled {
		sizes = []int{40, 6300}
	}
	for _, kind := range []string{"RSA PRIVATE KEY", "PGP PRIVATE KEY BLOCK", "ENCRYPTED PRIVATE KEY"} {
		for _, n := range sizes {
			key, _ := keyBlock(rnd, kind, n)
			query := strings.ReplaceAll(key, kind, strings.ReplaceAll(kind, " ", "+"))
			head, tail := key[:min(len(key), 300)], key[max(0, len(key)-300):]
			m := []byte(key)
			at := rnd.IntN(len(m))
			m = slices.Concat(m[:at], []byte(sitePieces[rnd.IntN(len(sitePieces))]), m[at:])
			out = append(out, key, query, head, tail, string(m), strings.ReplaceAll(key, "\n", `\n`))
		}
	}
	return out
}

// noQuick returns a scanner like sc whose rules run their regex at every
// keyword hit: the scanner before quick tests.
func noQuick(sc *Scanner) *Scanner {
	plain := *sc
	plain.rules = make([]*rule, len(sc.rules))
	for i, r := range sc.rules {
		plain.rules[i] = newRule(i, r.spec)
		plain.rules[i].quickOnce.Do(func() {})
		plain.rules[i].quick = nil
	}
	return &plain
}

// TestQuickIsSound: a rule's quick test, derived from its regex
// (siteTest) or written for it (ownQuick), and the characters its
// windows must hold (mustHold) change no finding: on
// samples of every rule's regex, mutated around its keywords and
// embedded in text dense with them, the scanner finds what it finds when
// every keyword hit runs the regex.
func TestQuickIsSound(t *testing.T) {
	t.Parallel()
	sc, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	plain := noQuick(sc)
	rnd := rand.New(rand.NewPCG(23, 24))
	derived := 0
	for _, r := range sc.rules {
		if !sc.enabled[r.index] {
			continue
		}
		if raceEnabled && r.index%3 != 0 && r.scan == nil {
			// The race detector adds nothing to this one-goroutine
			// check and slows it tenfold: a third of the rules.
			continue
		}
		r.passesQuick("", 0, 0, nil)
		if r.quick == nil {
			t.Logf("%s: no quick test", r.spec.id)
		} else {
			derived++
		}
		corpus := quickCorpus(t, r, rnd)
		for i, text := range corpus {
			got, want := merge(sc.find(text)), merge(plain.find(text))
			if !slices.Equal(got, want) {
				t.Fatalf("%s: with its quick test %v, without %v, in %q", r.spec.id, got, want, text)
			}
			if i%5 != 0 {
				continue
			}
			// Readings: the quick test judges decoded text too (a key
			// escaped as a URL's query decodes to + in its header). Find
			// searches every round of the four it undoes.
			enc := url.QueryEscape(url.QueryEscape(url.QueryEscape(url.QueryEscape(text))))
			if got, want := sc.Find(enc), plain.Find(enc); !slices.Equal(got, want) {
				t.Fatalf("%s: with its quick test %v, without %v, in %q query-escaped 4 times", r.spec.id, got, want, text)
			}
		}
	}
	if derived < 200 && !raceEnabled {
		t.Errorf("%d rules have a quick test, want every rule of a known shape (200+)", derived)
	}
}

// FuzzQuick: TestQuickIsSound on any text, for the rule the first byte
// names.
func FuzzQuick(f *testing.F) {
	sc, err := New(Options{})
	if err != nil {
		f.Fatal(err)
	}
	plain := noQuick(sc)
	rnd := rand.New(rand.NewPCG(25, 26))
	var quick []*rule
	for _, r := range sc.rules {
		if sc.enabled[r.index] {
			quick = append(quick, r)
		}
	}
	for i, r := range quick {
		for _, text := range quickCorpus(f, r, rnd)[:6] {
			f.Add(byte(i), text)
		}
	}
	f.Fuzz(func(t *testing.T, which byte, text string) {
		r := quick[int(which)%len(quick)]
		kw := r.keywords[0]
		text = strings.ReplaceAll(text, "\x00", kw) // a keyword wherever the fuzzer puts a 0 byte
		got, want := merge(sc.find(text)), merge(plain.find(text))
		if !slices.Equal(got, want) {
			t.Fatalf("%s: with its quick test %v, without %v, in %q", r.spec.id, got, want, text)
		}
		if len(text) <= 16<<10 {
			enc := url.QueryEscape(text)
			if got, want := sc.Find(enc), plain.Find(enc); !slices.Equal(got, want) {
				t.Fatalf("%s: with its quick test %v, without %v, in %q query-escaped", r.spec.id, got, want, text)
			}
		}
	})
}

// TestDecoyKeywordBefore: a keyword of a rule a few hundred bytes
// before a credential of that rule (a decoy a hostile server or an
// injected agent puts there) does not hide it, in Find or RawClean.
// A search of the decoy's window stands for the rule's later keywords
// only as far as a match around them cannot end past that window: a
// Slack webhook 440 bytes after "hooks.slack.com" was passed over, its
// fixed-length value cut by the decoy's window and its own keyword
// taken as searched.
func TestDecoyKeywordBefore(t *testing.T) {
	t.Parallel()
	sc, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	webhook := "https://hooks.slack.com/services/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"
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, r := range sc.rules {
		if r.scan != nil || r.anchors || r.backAnchor || raceEnabled && r.index%3 != 0 {
			continue // under -race, a third of the rules (as TestQuickIsSound)
		}
		var secret string
		if r.spec.id == "slack-webhook-url" {
			secret = webhook
		} else {
			secret = quickCorpus(t, r, rnd)[0]
		}
		if !slices.ContainsFunc(sc.find(secret), func(f Finding) bool { return f.Rule == r.spec.id }) {
			continue // a sample the rule's allowlist or entropy excuses
		}
		raw := func(text string) []byte {
			q, err := jsontext.AppendQuote(nil, text)
			if err != nil {
				return nil // a sample that is no valid UTF-8
			}
			return []byte(`{"text":` + string(q) + `}`)
		}
		rawFinds := !sc.RawClean(raw(secret))
		step := 12
		if raceEnabled {
			step = 60
		}
		for fill := 380; fill <= 560; fill += step {
			text := r.keywords[0] + " " + strings.Repeat("q", fill) + " " + secret
			if !slices.ContainsFunc(sc.find(text), func(f Finding) bool { return f.Rule == r.spec.id || f.Rule == TooDenseRule }) {
				t.Errorf("%s: Find passes over %q after its keyword and %d bytes", r.spec.id, secret, fill)
				break
			}
			if rawFinds && sc.RawClean(raw(text)) {
				t.Errorf("%s: RawClean passes over %q after its keyword and %d bytes", r.spec.id, secret, fill)
				break
			}
		}
	}
}

// TestRawCleanEscapedBlanks: RawClean reads the raw bytes of a JSON
// text, where a blank between a name and its "=", after "Bearer" or
// between a .netrc's words may be an escape: "session_token\t= ..." was
// taken as no assignment, and the baseline let such a token through in a
// tool call's arguments. Find reads plain text, where the same bytes may
// be a backslash inside a word: a .netrc login CORP\tom.
func TestRawCleanEscapedBlanks(t *testing.T) {
	t.Parallel()
	sc, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"session_token\t= ", "aws_session_token\n=\t", "Authorization\t:\tBearer ",
		"AUTHORIZATION\r\n= Token ", "Bearer\r", "Bearer\n\t", "password\t= ", "machine example.com\nlogin alice\npassword ",
		"default\r\nlogin alice\n\tpassword\t", "login u?+\npassword\n\t", `machine fs login CORP\tom password `} {
		s += "s8Zq3vXk2LmN9pQ4rT7wY1bC6dF0gH5jK8mN2pR4tV7xZ9aB3cE6fH8jL1nP4qS7uW0yA2dG5hK8mP1rT4vX7zC0eG3iL6oR9uX2aD5gJ8lO1"
		q, _ := jsontext.AppendQuote(nil, s)
		raw := []byte(`{"text":` + string(q) + `}`)
		if len(sc.Find(s)) == 0 {
			t.Errorf("%q: Find finds nothing", s)
		} else if sc.RawClean(raw) {
			t.Errorf("%s: RawClean passes over it, Find finds %v", raw, sc.Find(s))
		}
	}
}

// TestRawCleanSamples: RawClean of a JSON text holding a sample of a
// rule's regex is false whenever Find finds a credential in the sample,
// also one that only a reading of the sample's literal escapes shows
// ("asana_id=>5565625988071529\"", a JSON document inside a string:
// the raw text holds \\\" where the reading has the quote that ends the
// value; only \\u, \\U and \\x were read so).
func TestRawCleanSamples(t *testing.T) {
	t.Parallel()
	sc, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(5, 6))
	for _, r := range sc.rules {
		if raceEnabled && r.index%3 != 0 {
			continue // under -race, a third of the rules (as TestQuickIsSound)
		}
		for _, s := range quickCorpus(t, r, rnd) {
			q, err := jsontext.AppendQuote(nil, s)
			if err != nil || len(sc.Find(s)) == 0 {
				continue
			}
			if sc.RawClean([]byte(`{"text":` + string(q) + `}`)) {
				t.Errorf("%s: RawClean passes over %q, which Find finds", r.spec.id, s)
			}
		}
	}
}

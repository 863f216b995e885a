package policy

import (
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"golang.org/x/text/unicode/norm"

	"github.com/mcpguard/mcpguard/rules/skeleton"
)

// TestLookAlikeNamesAgree pins one definition of a look-alike name: a
// tool name that the definition lint reads (skeleton.Latin) as a name
// under deny, ask or labels is refused, held or labelled as that name,
// and a name the lint reads as no such name is none of them (the
// look-alikes within ASCII, m and rn, l and 1, read as one). Every code
// point of the Basic and Supplementary Multilingual Planes is tried in
// place of one letter (every look-alike and a sample of the rest, fewer
// under the race detector), for exact names (deny), globs (ask) and
// labels.
// Diacritics are left out: the lint drops them from text, a name keeps
// them (té_call is not te_call).
func TestLookAlikeNamesAgree(t *testing.T) {
	t.Parallel()
	var src strings.Builder
	src.WriteString("version: 1\nserver: lookalike\nunknown_tools: allow\ntools:\n")
	const alnum = "abcdefghijklmnopqrstuvwxyz0123456789"
	for _, c := range alnum {
		fmt.Fprintf(&src, "  t%c_call: deny\n  \"a%c_*\": ask\n  \"l%c_*\": {labels: [exfiltrates]}\n", c, c, c)
	}
	p, err := Load("lookalike.yaml", []byte(src.String()), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, notes := p.evalSession(nil)
	verdict := func(name string) Outcome {
		line, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
			"params": map[string]any{"name": name, "arguments": map[string]any{}}})
		if err != nil {
			t.Fatal(err)
		}
		return s.evaluate(line, notes).Verdict
	}
	// Every look-alike and every seventh other code point; under the race
	// detector, which slows this one-goroutine sweep tenfold and adds
	// nothing to it, only every 13th code point is read.
	scanStep := rune(1)
	if raceEnabled {
		scanStep = 13
	}
	lookAlikes := 0
	for r := rune(utf8.RuneSelf); r < 0x20000; r += scanStep {
		if !utf8.ValidRune(r) || !unicode.In(r, unicode.L, unicode.N, unicode.S, unicode.P) || hasMark(r) {
			continue
		}
		// Whether the lint reads r as one of alnum (or as an ASCII
		// look-alike of one, which deny reads as that one too).
		latin := skeleton.Latin(string(r))
		reads := strings.ContainsFunc(alnum, func(c rune) bool { return asciiLookAlike(latin) == asciiLookAlike(string(c)) })
		if reads {
			lookAlikes++
		} else if r%7 != 0 {
			continue // a sample of the rest
		}
		for _, c := range []struct {
			name string
			want Outcome
		}{{"t" + string(r) + "_call", Rejected}, {"a" + string(r) + "_x", Asked}} {
			want := Allowed
			if reads {
				want = c.want
			}
			if got := verdict(c.name); got != want {
				t.Errorf("%U %q (the lint reads %q): %s, want %s", r, c.name, latin, got, want)
			}
		}
		name := "l" + string(r) + "_x"
		if got := p.labelsOf(name)&labelBit(Exfiltrates) != 0; got != reads {
			t.Errorf("%U %q (the lint reads %q): labelled %v, want %v", r, name, latin, got, reads)
		}
	}
	if lookAlikes < 1500/int(scanStep) {
		t.Errorf("%d code points read as a letter or digit; the confusables and NFKC give more", lookAlikes)
	}
}

// asciiLookAlike reads the look-alikes within ASCII that confusables.txt
// lists (m and rn, l, 1 and |, o and 0) as one.
var asciiLookAlike = strings.NewReplacer("m", "rn", "1", "l", "|", "l", "0", "o").Replace

// hasMark reports a combining mark in r's compatibility decomposition.
func hasMark(r rune) bool {
	return strings.ContainsFunc(norm.NFKD.String(string(r)), func(c rune) bool { return unicode.Is(unicode.Mn, c) })
}

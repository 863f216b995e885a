package secrets

import (
	"cmp"
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/rules/rawjson"
)

// TestRawCleanParts: the raw check split into parts read at once finds a
// credential wherever it stands, at a part's edge above all, in plain text
// and in each kind of encoded text, and passes a clean text as the whole
// check does, also when a part finds more needles than it lists.
func TestRawCleanParts(t *testing.T) {
	t.Parallel()
	sc, err := New(Options{Known: []Known{{Source: "K", Value: fuzzKnown}}})
	if err != nil {
		t.Fatal(err)
	}
	line := "The quick brown fox jumps over the lazy dog; a curl of smoke (no flags) rose. "
	filler := strings.Repeat(line, (16<<10)/len(line))
	gh := adversarialSecrets()[2][1] // a GitHub token: found by a rule
	creds := []string{
		gh,
		fuzzKnown,
		base64.StdEncoding.EncodeToString([]byte("token " + gh)),
		hex.EncodeToString([]byte(gh)),
		url.QueryEscape(url.QueryEscape(gh)),
		"&#103;&#104;&#112;" + gh[3:],
	}
	check := func(name, text string, want bool) {
		t.Helper()
		q := mustQuote(t, text)
		if !want && sc.RawClean(q) {
			t.Fatalf("%s: the whole check says clean", name)
		}
		for n := 2; n <= 3; n++ {
			if got := sc.rawCleanParts(string(q), rawjson.ScanEscapes(q), n); got != want {
				t.Fatalf("%s (%d bytes): %d parts say clean %v, want %v", name, len(text), n, got, want)
			}
		}
	}
	check("filler", filler, true)
	for _, c := range creds {
		// At every offset across the edge of two halves (nothing in the
		// text is escaped: the JSON is the text and its two quotes).
		in := " " + c + " "
		edge := (len(filler)+len(in)+2)/2&^7 - 1
		for at := edge - len(in); at <= edge+1; at++ {
			check(c+" at "+strconv.Itoa(at), filler[:at]+in+filler[at:], false)
		}
		check(c+" at the end", filler+in, false)
	}
	// More needles in one part than it lists: its range is scanned again.
	dense := filler[:len(filler)/2] + strings.Repeat("curl x ", 3*maxPartHits) + filler[len(filler)/2:]
	check("dense", dense, sc.RawClean(mustQuote(t, dense)))
	check("dense with a credential", dense+" "+creds[0], false)
}

func mustQuote(t *testing.T, s string) []byte {
	q, err := jsontext.AppendQuote(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestByRuleIsStableSort: the counting sort of a scan's hits orders them
// as a stable sort by rule does, for few hits and for more hits than
// rules.
func TestByRuleIsStableSort(t *testing.T) {
	t.Parallel()
	const rules = 7
	for _, n := range []int{0, 1, rules, rules + 1, 500} {
		hits := make([]ruleHit, n)
		for i := range hits {
			hits[i] = ruleHit{rule: (i*5 + i/3) % rules, at: i, n: 1 + i%4}
		}
		want := slices.Clone(hits)
		slices.SortStableFunc(want, func(a, b ruleHit) int { return cmp.Compare(a.rule, b.rule) })
		if got := byRule(hits, rules); !slices.Equal(got, want) {
			t.Errorf("%d hits: byRule = %v, want %v", n, got, want)
		}
	}
}

package policy

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/rules/cputime"
	"github.com/mcpguard/mcpguard/rules/secrets"
)

// hostileUnits are the triggers beyond the secrets rules' keywords that
// make a check look closer: markup and links the result cleaner reads,
// phrases and markers the description linter reads, escapes the decoding
// pipeline reads.
var hostileUnits = []string{
	"![x](", "[a](", "<img src=", "<a href=", "url(", "<style>", "<!--", "<IMPORTANT>", "data:image/png;base64,",
	"https://", "http://a", "ignore previous instructions ", "do not tell the user ", "~/.ssh/id_rsa ", "\x1b[31m",
	"\u200b", "%41", "&#65;", `\u0041`, "-----BEGIN ", "-----END ", "-----BEGIN P", "-----BEGIN PRIVATE KEY-----\n",
}

// sweepSize is the size of the keyword floods TestKeywordFloodsWithinBudget
// sends: 256 KiB (32 KiB under -race), small enough to sweep every
// trigger in seconds, and large enough that a trigger that makes each
// hit re-read a window (a regex run of milliseconds per hit, up to the
// scanner's dense budget of 64 window runs and more) costs hundreds of
// times plain text. MCPGUARD_BUDGET_SWEEP=1 sends 4 MiB floods (1 MiB
// under -race) and holds every trigger to budgetRatio, for the closing
// figures.
func sweepSize() int {
	switch {
	case os.Getenv("MCPGUARD_BUDGET_SWEEP") != "" && raceEnabled:
		return 1 << 20
	case os.Getenv("MCPGUARD_BUDGET_SWEEP") != "":
		return 4 << 20
	case raceEnabled:
		return 32 << 10
	}
	return 256 << 10
}

// budgetRatio bounds what a flood of one trigger costs, in CPU time, over
// plain text of the same size through the same paths. Before the secrets
// rules' quick tests were derived from their regexes, floods of about 200
// keywords cost 30-600x at these sizes.
const budgetRatio = 15

// overBudget are the triggers whose floods still cost more than
// budgetRatio (issue 23 open for them), and why; each is held to
// overBudgetRatio instead, so that none grows back into a regex run of
// milliseconds per hit. MCPGUARD_BUDGET_SWEEP=1 holds them to
// budgetRatio too.
var overBudget = map[string]string{
	// Each hit starts a match of the rule's regex (glpat- and 20 word
	// characters is a GitLab token's shape; its entropy is too low for
	// a finding), or the flood's end is one (tk-us- and 48 of them,
	// then the end of the text): every hit runs the regex and its
	// verification, and the message, all base64url, is decoded whole.
	"glpat-": streamOfMatches, "glrt-": streamOfMatches, "gloas-": streamOfMatches, "github_pat_": streamOfMatches,
	"glagent-": streamOfMatches, "glft-": streamOfMatches, "glsoat-": streamOfMatches, "glimt-": streamOfMatches,
	"gldt-": streamOfMatches, "glffct-": streamOfMatches, "fio-u-": streamOfMatches, "tk-us-": streamOfMatches,
	"sq0atp-": streamOfMatches,
	// sourcegraph's regex has an alternative without its keyword (40
	// hex digits), so no quick test: its windows run the regex.
	"sourcegraph": "no keyword site", "sgp_": "no keyword site",
	// A hit every 2 to 16 bytes: the keyword index's and the quick
	// tests' cost per hit (three rules read "sharedaccesskey=": its
	// "accesskey" names a credential, its value runs on past 200
	// characters), or the decoding pipeline's per escape, not a window
	// re-read; 12-17x.
	"sharedaccesskey=": denseHits, "s.": denseHits, "hvs.": denseHits, "xoxo": denseHits, "xoxb": denseHits,
	`"auth`: denseHits, "\u200b": denseHits, "%41": denseHits,
	// The whole message is one separated hex run (a hex pair, then a
	// dash, again and again) or one base64 run: the raw check decodes it
	// whole, as Find does, and scans the decoding for credentials.
	"a3-": wholeRun, "p8e-": wholeRun, "atatt3": wholeRun, "a3t": wholeRun,
}

const (
	streamOfMatches = "a stream of matches"
	denseHits       = "a hit every few bytes"
	wholeRun        = "one encoded run, decoded whole"
)

// overBudgetRatio bounds the floods of overBudget.
const overBudgetRatio = 100

// onCaller reports whether a flood of size bytes, wrapped in a message,
// stays under concurrentMin: judged on the calling goroutine alone, its
// thread's CPU time is all it costs, and the test may run beside others.
func onCaller(size int) bool { return size+1<<10 < concurrentMin }

// floodCost returns what judging text of up to size bytes costs, in CPU
// time: the baseline's egress path on a tools/call result that holds it
// and its ingress check on a tools/call argument that holds it. A
// message of concurrentMin bytes or more is judged on several
// goroutines, so from that size the cost is the process's CPU time and
// the caller must not be parallel (see onCaller); below it, the calling
// thread's.
func floodCost(t *testing.T, size int) func(text string) time.Duration {
	t.Helper()
	measure := cputime.OfProcess
	if onCaller(size) {
		measure = cputime.Of
	}
	s := Baseline().NewSession()
	wrap := func(text string) (res, req []byte) {
		q, err := jsontext.AppendQuote(nil, text)
		if err != nil {
			t.Fatal(err)
		}
		res = append(append([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":`), q...), `}]}}`...)
		req = append(append([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","arguments":{"body":`), q...), `}}}`...)
		return res, req
	}
	return func(text string) time.Duration {
		res, req := wrap(text)
		if onCaller(size) && len(res) >= concurrentMin {
			// Escapes made it long enough to be judged on several
			// goroutines, which the thread's CPU time would not see.
			t.Fatalf("a flood of %d bytes quotes to %d, too long for a measure on one thread", len(text), len(res))
		}
		return measure(func() {
			m, err := message.Parse(res)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Egress(m, &Call{Method: "tools/call", Tool: "t"}); err != nil {
				t.Fatal(err)
			}
			if m, err = message.Parse(req); err != nil {
				t.Fatal(err)
			}
			s.Ingress(m)
		})
	}
}

// TestKeywordFloodsWithinBudget: a message made of one trigger repeated
// (every keyword of the secrets rules, the cleaner's and linter's
// triggers) costs the baseline's egress path (a tools/call result) and
// ingress check (a tools/call argument) at most budgetRatio times the
// CPU time of plain text of the same size, counting every goroutine the
// paths use: no trigger makes each hit re-read a long window.
func TestKeywordFloodsWithinBudget(t *testing.T) {
	size, strict := sweepSize(), os.Getenv("MCPGUARD_BUDGET_SWEEP") != ""
	if onCaller(size) {
		t.Parallel()
	}
	run := floodCost(t, size)
	plain := strings.Repeat("The quick brown fox jumps over the lazy dog.\n", size/45)
	base := min(run(plain), run(plain), run(plain))
	t.Logf("plain text, %d KiB: %v", size>>10, base)
	for _, unit := range append(secrets.Keywords(), hostileUnits...) {
		text := strings.Repeat(unit, size/len(unit))
		bound := float64(budgetRatio)
		if _, ok := overBudget[unit]; ok && !strict {
			bound = overBudgetRatio
		}
		ratio := float64(run(text)) / float64(base)
		// Over the bound: the ratio of the best of three more runs of
		// each, one after the other (a shared machine's bad moment is
		// not the trigger's; a quadratic scan is slow in every run).
		for try := 0; try < 3 && ratio > bound; try++ {
			b, c := run(plain), run(text)
			ratio = min(ratio, float64(c)/float64(b))
		}
		if ratio > 3 {
			t.Logf("%q: %.1fx", unit, ratio)
		}
		switch why, listed := overBudget[unit]; {
		case ratio > bound:
			t.Errorf("%q repeated to %d KiB costs %.1fx plain text's CPU time (bound %.0fx)", unit, size>>10, ratio, bound)
		case listed && ratio <= budgetRatio && !strict:
			t.Logf("%q is within %dx now (%s): take it off overBudget", unit, budgetRatio, why)
		}
	}
}

// growthBound bounds cost(4n)/cost(n) for a flood: a check linear in the
// message's size costs about 4 times as much for 4 times the text, one
// that re-reads the text per hit about 16 times.
const growthBound = 8

// TestOverBudgetFloodsLinear: the floods of overBudget, which cost more
// than budgetRatio times plain text, cost time linear in their size
// through the same paths as TestKeywordFloodsWithinBudget: a flood four
// times as long costs at most growthBound times as much, so a message up
// to the response limit is judged in time proportional to its size.
func TestOverBudgetFloodsLinear(t *testing.T) {
	size := 256 << 10
	if raceEnabled {
		// Smaller, but every flood still past its first too-dense
		// region: below that, a flood of 8 KiB is searched whole and
		// one of 32 KiB refused, a step of different work, not growth.
		size = 128 << 10
	}
	if onCaller(size) {
		t.Parallel()
	}
	run := floodCost(t, size)
	for _, unit := range slices.Sorted(maps.Keys(overBudget)) {
		short, long := strings.Repeat(unit, size/4/len(unit)), strings.Repeat(unit, size/len(unit))
		cost := func() float64 { return float64(run(long)) / float64(run(short)) }
		growth := cost()
		// Over the bound: best of three more measures (a quadratic scan
		// grows in every one, a shared machine's bad moment in one).
		for try := 0; try < 3 && growth > growthBound; try++ {
			growth = min(growth, cost())
		}
		t.Logf("%q: %d to %d KiB costs %.1fx", unit, size>>12, size>>10, growth)
		if growth > growthBound {
			t.Errorf("%q repeated to %d KiB costs %.1fx what %d KiB costs (bound %dx): not linear", unit, size>>10, growth, size>>12, growthBound)
		}
	}
}

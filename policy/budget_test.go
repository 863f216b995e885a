package policy

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/policy/message"
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

// processCPU is the process's user and system CPU time: on a loaded
// machine it moves with the work done, where the wall clock does not.
func processCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal("rusage:", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestKeywordFloodsWithinBudget: a message made of one trigger repeated
// (every keyword of the secrets rules, the cleaner's and linter's
// triggers) costs the baseline's egress path (a tools/call result) and
// ingress check (a tools/call argument) at most budgetRatio times the
// CPU of plain text of the same size: no trigger makes each hit re-read
// a long window.
//
// It does not pass yet (issue 23 is open): about 200 gitleaks keywords
// cost 30-570x plain text at 1 MiB (their window regexes run up to the
// dense budget), so it runs only when MCPGUARD_BUDGET_SWEEP is set.
func TestKeywordFloodsWithinBudget(t *testing.T) {
	if os.Getenv("MCPGUARD_BUDGET_SWEEP") == "" {
		t.Skip("known to fail (issue 23 open); set MCPGUARD_BUDGET_SWEEP=1 to run the sweep")
	}
	size := 4 << 20
	if testing.Short() || raceEnabled {
		size = 1 << 20
	}
	const budgetRatio = 12
	s := Baseline().NewSession()
	run := func(text string) time.Duration {
		q, err := jsontext.AppendQuote(nil, text)
		if err != nil {
			t.Fatal(err)
		}
		res := append(append([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":`), q...), `}]}}`...)
		req := append(append([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","arguments":{"body":`), q...), `}}}`...)
		start := processCPU(t)
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
		return processCPU(t) - start
	}
	plain := strings.Repeat("The quick brown fox jumps over the lazy dog.\n", size/45)
	base := min(run(plain), run(plain), run(plain))
	t.Logf("plain text, %d KiB: %v", size>>10, base)
	var worst time.Duration
	for _, unit := range append(secrets.Keywords(), hostileUnits...) {
		text := strings.Repeat(unit, size/len(unit))
		cost := run(text)
		if cost > budgetRatio*base {
			cost = min(cost, run(text)) // a pause of the machine, or the trigger's
		}
		if cost > worst || cost > 3*base {
			worst = max(worst, cost)
			t.Logf("%q: %v (%.1fx)", unit, cost, float64(cost)/float64(base))
		}
		if cost > budgetRatio*base {
			t.Errorf("%q repeated to %d KiB: %v of CPU, %.1fx plain text's %v (budget %dx)", unit, size>>10, cost, float64(cost)/float64(base), base, budgetRatio)
		}
	}
}

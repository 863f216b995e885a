package policy

import (
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unicode"

	"github.com/go-json-experiment/json"

	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/rules/codes"
)

func toolCall(t testing.TB, id int, tool, args string) *message.Message {
	t.Helper()
	m, err := message.Parse([]byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const limitPolicy = `
version: 1
ingress:
  - tools: [comment]
    fields: [pr]
    check: rate_limit
    calls: 2
    per: 5m
    max_keys: 2
`

// TestRateLimitReplies: over the limit, a call is refused with
// OP_RATE_LIMITED, retryable, and the whole seconds until the oldest
// call leaves the window, in both shapes (a tool result by default,
// JSON-RPC -32004 with reject_as: error); after that wait it passes.
func TestRateLimitReplies(t *testing.T) {
	for _, asError := range []bool{false, true} {
		t.Run("reject_as_error="+strconv.FormatBool(asError), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				text := limitPolicy
				if asError {
					text += "reject_as: error\n"
				}
				s := mustLoad(t, text).NewSession()
				for i := range 2 {
					if v := s.Ingress(toolCall(t, i, "comment", `{"pr":7}`)); v.Rejection != nil {
						t.Fatalf("call %d refused: %s", i, v.Rejection.Error)
					}
					time.Sleep(time.Minute)
				}
				time.Sleep(500 * time.Millisecond)
				v := s.Ingress(toolCall(t, 3, "comment", `{"pr":7}`))
				if v.Rejection == nil || v.Audit {
					t.Fatalf("third call within 5m: %+v", v)
				}
				var rej message.Rejection
				reply := v.Reply([]byte("3"))
				if asError {
					var r struct {
						Error struct {
							Code    int64             `json:"code"`
							Message string            `json:"message"`
							Data    message.Rejection `json:"data"`
						} `json:"error"`
					}
					if err := json.Unmarshal(reply, &r); err != nil {
						t.Fatal(err)
					}
					if r.Error.Code != -32004 || r.Error.Message[:len("Rate limit exceeded: ")] != "Rate limit exceeded: " {
						t.Fatalf("error %d %q", r.Error.Code, r.Error.Message)
					}
					rej = r.Error.Data
				} else {
					var r struct {
						Result struct {
							IsError bool `json:"isError"`
							Content []struct {
								Text string `json:"text"`
							} `json:"content"`
						} `json:"result"`
					}
					if err := json.Unmarshal(reply, &r); err != nil || !r.Result.IsError || len(r.Result.Content) != 1 {
						t.Fatalf("%s: %v", reply, err)
					}
					text := r.Result.Content[0].Text
					if err := json.Unmarshal([]byte(text[lastLine(text):]), &rej); err != nil {
						t.Fatalf("%q: %v", text, err)
					}
				}
				// Calls at 0 and 1m; now 2m0.5s: the first leaves at 5m.
				if rej.ErrorCode != codes.RateLimited || !rej.Retryable || rej.RetryAfter != 180 || rej.Summary != "Rate limit exceeded" || rej.Rule != "ingress[0]" || rej.Field != "pr" {
					t.Fatalf("rejection %+v", rej)
				}
				time.Sleep(179*time.Second + 500*time.Millisecond)
				if v := s.Ingress(toolCall(t, 4, "comment", `{"pr":7}`)); v.Rejection != nil {
					t.Fatalf("call after retry_after_s refused: %s", v.Rejection.Error)
				}
			})
		})
	}
}

func lastLine(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			return i + 1
		}
	}
	return 0
}

// TestRateLimitKeysBounded: past max_keys, a call with a new value is
// refused while the values tracked still have calls in their window
// (an agent cycling through made-up pull request numbers gets no fresh
// allowance), and admitted once the least recently used one has none.
func TestRateLimitKeysBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := mustLoad(t, limitPolicy).NewSession()
		for i, pr := range []string{"1", "2"} {
			if v := s.Ingress(toolCall(t, i, "comment", `{"pr":`+pr+`}`)); v.Rejection != nil {
				t.Fatal(v.Rejection.Error)
			}
		}
		time.Sleep(time.Minute)
		v := s.Ingress(toolCall(t, 3, "comment", `{"pr":3}`))
		if v.Rejection == nil || v.Rejection.ErrorCode != codes.RateLimited || v.Rejection.RetryAfter != 240 {
			t.Fatalf("a third value past max_keys 2: %+v", v.Rejection)
		}
		time.Sleep(4 * time.Minute)
		if v := s.Ingress(toolCall(t, 4, "comment", `{"pr":3}`)); v.Rejection != nil {
			t.Fatalf("after pr 1's window emptied: %s", v.Rejection.Error)
		}
	})
}

// TestRateLimitAudit: in audit mode an over-limit call is logged as
// audited and forwarded.
func TestRateLimitAudit(t *testing.T) {
	s := mustLoad(t, limitPolicy+"mode: audit\n").NewSession()
	for i := range 2 {
		if v := s.Ingress(toolCall(t, i, "comment", `{"pr":1}`)); v.Rejection != nil {
			t.Fatal(v.Rejection.Error)
		}
	}
	if v := s.Ingress(toolCall(t, 3, "comment", `{"pr":1}`)); v.Rejection == nil || !v.Audit || v.Rejection.ErrorCode != codes.RateLimited {
		t.Fatalf("%+v", v)
	}
}

// TestRateLimitOtherMethods: a rule for resources/read counts by {uri}
// and answers with a JSON-RPC error -32004.
func TestRateLimitOtherMethods(t *testing.T) {
	s := mustLoad(t, `
version: 1
ingress:
  - {methods: [resources/read], fields: [uri], check: rate_limit, calls: 1, per: 1h}
`).NewSession()
	read := func(id int, uri string) Verdict {
		m, err := message.Parse([]byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"resources/read","params":{"uri":"` + uri + `"}}`))
		if err != nil {
			t.Fatal(err)
		}
		return s.Ingress(m)
	}
	if v := read(1, "file:///a"); v.Rejection != nil {
		t.Fatal(v.Rejection.Error)
	}
	if v := read(2, "file:///b"); v.Rejection != nil {
		t.Fatal(v.Rejection.Error)
	}
	if v := read(3, "FILE:///A"); v.Rejection == nil || !v.AsError || v.Code != CodeRateLimited {
		t.Fatalf("%+v", v)
	}
}

// BenchmarkRateLimitUncovered: the 20-rule policy's run_tests call, with
// and without rate limits on other tools (what a call they do not cover
// pays), and with one that covers it (the cost of counting).
func BenchmarkRateLimitUncovered(b *testing.B) {
	others := "\n  - {tools: [lint, build], check: rate_limit, calls: 5, per: 1m}\n  - {tools: [\"deploy_*\"], fields: [env], check: rate_limit, calls: 1, per: 1h}\n"
	for _, c := range []struct{ name, policy string }{
		{"none", twentyRules},
		{"elsewhere", twentyRules + others},
		{"covering", twentyRules + others + "  - {tools: [run_tests], fields: [path], check: rate_limit, calls: 10000, per: 1ns}\n"},
	} {
		b.Run(c.name, func(b *testing.B) {
			root := b.TempDir()
			p, err := Load("bench.yaml", []byte(c.policy), func(string) (string, bool) { return root, true })
			if err != nil {
				b.Fatal(err)
			}
			s := p.NewSession()
			m := toolCall(b, 7, "run_tests", `{"testArgs":["-v","--count=1","-race","./pkg/...","-timeout","90s"],"run":"TestParse|TestRelay$","path":"`+root+`","timeout":"90s","tags":"integration,slow"}`)
			if v := s.Ingress(m); v.Rejection != nil {
				b.Fatalf("benign call rejected: %+v", v.Rejection)
			}
			b.ReportAllocs()
			for b.Loop() {
				if v := s.Ingress(m); v.Rejection != nil {
					b.Fatal("rejected: " + v.Rejection.Error)
				}
			}
		})
	}
}

// TestRateLimitCostsNothingElsewhere: the bench policy's rate limits (on
// tools the bench never calls, one of them a glob) add no allocation to
// the echo call: the rules that count a tool are planned per tool name
// when the policy loads. BenchmarkRateLimitUncovered gives the time.
func TestRateLimitCostsNothingElsewhere(t *testing.T) {
	without := func(text string) string {
		var out []string
		for line := range strings.Lines(text) {
			if !strings.Contains(line, "rate_limit") {
				out = append(out, line)
			}
		}
		return strings.Join(out, "")
	}
	allocs := map[string]float64{}
	for name, edit := range map[string]func(string) string{"with": func(s string) string { return s }, "without": without} {
		s, m := benchEcho(t, edit)
		if v := s.Ingress(m); v.Rejection != nil {
			t.Fatalf("%s the rate limits: the echo call got %+v", name, v.Rejection)
		}
		allocs[name] = testing.AllocsPerRun(200, func() { s.Ingress(m) })
		if n := len(s.now().policy().limits); (n == 2) != (name == "with") {
			t.Fatalf("%s: %d rate_limit rules loaded", name, n)
		}
	}
	if allocs["with"] != allocs["without"] {
		t.Errorf("the echo call allocates %v times with rate limits on other tools, %v without", allocs["with"], allocs["without"])
	}
}

// TestRateLimitKeySpellings: an agent cannot buy a fresh allowance by
// writing the key as another spelling a server reads as the same value:
// JSON number forms, signs, leading zeros, spaces (Unicode ones and the
// BOM JavaScript trims), hex/octal/binary literals (JavaScript's Number),
// digit separators and non-ASCII digits (Python's int), case and width.
func TestRateLimitKeySpellings(t *testing.T) {
	t.Parallel()
	for _, spell := range [][]string{
		{`12`, `"12"`, `12.0`, `1.2e1`, `"+12"`, `"012"`, `" 12 "`, `"12.0"`, `"\u00a012"`, `"\ufeff12"`, `"0xC"`, `"0XC"`, `"0o14"`, `"0b1100"`, `"1_2"`, `"１２"`, `"١٢"`, `"१२"`},
		{`"main"`, `"MAIN"`, `"ｍａｉｎ"`, `" main"`, `"ma\u200bin"`},
	} {
		p := mustLoad(t, limitPolicy)
		for _, s := range spell[1:] {
			sess := p.NewSession()
			for i, a := range []string{spell[0], spell[0]} {
				if v := sess.Ingress(toolCall(t, i, "comment", `{"pr":`+a+`}`)); v.Rejection != nil {
					t.Fatalf("call %d refused: %s", i, v.Rejection.Error)
				}
			}
			if v := sess.Ingress(toolCall(t, 9, "comment", `{"pr":`+s+`}`)); v.Rejection == nil {
				t.Errorf("pr %s after two calls with pr %s: admitted, a fresh allowance", s, spell[0])
			} else if v.Rejection.ErrorCode != codes.RateLimited {
				t.Errorf("pr %s refused by %s, not the limit", s, v.Rejection.ErrorCode)
			}
		}
	}
}

// TestASCIIDigitRanges holds asciiDigit to what it assumes of Unicode:
// every Nd range is whole runs of ten digits, zero first.
func TestASCIIDigitRanges(t *testing.T) {
	t.Parallel()
	for _, rg := range unicode.Nd.R16 {
		if rg.Stride != 1 || (rg.Hi-rg.Lo+1)%10 != 0 {
			t.Errorf("Nd range %U-%U stride %d", rg.Lo, rg.Hi, rg.Stride)
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if rg.Stride != 1 || (rg.Hi-rg.Lo+1)%10 != 0 {
			t.Errorf("Nd range %U-%U stride %d", rg.Lo, rg.Hi, rg.Stride)
		}
	}
	if got := strings.Map(asciiDigit, "٠١٢٣٤٥٦٧٨٩ ०९ 𝟎𝟗 ab"); got != "0123456789 09 09 ab" {
		t.Errorf("asciiDigit: %q", got)
	}
}

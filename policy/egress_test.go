package policy

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/rules/canon"
	"github.com/mcpguard/mcpguard/rules/codes"
)

func mustParse(t testing.TB, line string) *message.Message {
	t.Helper()
	m, err := message.Parse([]byte(line))
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return m
}

func mustLoad(t testing.TB, src string) *Policy {
	t.Helper()
	p, err := Load("test.yaml", []byte(src), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEgressLeavesCleanMessagesByteIdentical(t *testing.T) {
	s := Baseline().NewSession()
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"line 1\nline 2\r\n\ttabbed \"quoted\" ` + "`code`" + ` \u00e9 日本語 👨‍👩‍👧 \u2764\ufe0f \u0915\u094d\u200d\u0937"}]}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"می\u200cخواهم \U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466 \U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F 葛\U000E0100 1\ufe0f\u20e3\"}],\"t\":\"\\u00e9\"}}",
		`{"jsonrpc":"2.0","id":"x","result":{"n":9007199254740993,"f":1.50e+3,"ok":true,"nil":null}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"text":"שלום עולם مرحبا \u200f"}}`,
	} {
		m := mustParse(t, line)
		out, rw, err := s.Egress(m, &Call{Method: "tools/call", Tool: "x"})
		if err != nil || len(rw) != 0 || string(out) != line {
			t.Errorf("changed a clean message:\n in %s\nout %s\n%v %v", line, out, rw, err)
		}
	}
}

func TestEgressCanonicalisesHostileStrings(t *testing.T) {
	s := Baseline().NewSession()
	cases := []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok\u001b[31mred\u001b[0m"}]}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"okred"}]}}`},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"bad \u202eevil","data":{"k":"\udb40\udc41x"}}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"bad evil","data":{"k":"x"}}}`},
		{`{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"messages":[{"content":{"type":"text","text":"a` + "\u0085" + `b"}}]}}`,
			`{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"messages":[{"content":{"type":"text","text":"ab"}}]}}`},
		{`{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"k\u001b]8;;http://x\u0007":1}}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"k":1}}}`},
	}
	for _, c := range cases {
		out, rw, err := s.Egress(mustParse(t, c.in), &Call{Method: "tools/call", Tool: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != c.want || len(rw) == 0 {
			t.Errorf("\n in %s\ngot %s\nwant %s (%v)", c.in, out, c.want, rw)
		}
	}
}

func TestEgressRulesSelectFields(t *testing.T) {
	p := mustLoad(t, `
version: 1
egress:
  - tools: [coverage_report]
    fields: ["structuredContent.files[*].file"]
    canonicalise: path
  - tools: [coverage_report]
    fields: ["structuredContent.summary"]
    canonicalise: free_text
    max_bytes: 8
`)
	s := p.NewSession()
	in := `{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"files":[{"file":"a/b c.go"},{"file":"ok.go"}],"summary":"line1\nline2 and more"},"content":[{"type":"text","text":"a b\nc"}]}}`
	out, rw, err := s.Egress(mustParse(t, in), &Call{Method: "tools/call", Tool: "coverage_report"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"files":[{"file":"a/b?c.go"},{"file":"ok.go"}],"summary":"line1 li"},"content":[{"type":"text","text":"a b\nc"}]}}`
	if string(out) != want {
		t.Errorf("\ngot  %s\nwant %s", out, want)
	}
	if len(rw) != 2 || rw[0].Field != "result.structuredContent.files[0].file" || rw[0].Canonicaliser != "path" {
		t.Errorf("rewrites %+v", rw)
	}
	// Another tool's result is not touched by these rules.
	out, _, _ = s.Egress(mustParse(t, in), &Call{Method: "tools/call", Tool: "other"})
	if string(out) != in {
		t.Errorf("rules applied to another tool: %s", out)
	}
}

func TestToolsListHidesDeniedAndLearnsSchemas(t *testing.T) {
	p := mustLoad(t, `
version: 1
unknown_tools: deny
tools:
  "*": {server_schema: enforce}
  read_file: allow
  write_file: allow
  delete_file: deny
`)
	s := p.NewSession()
	list := `{"jsonrpc":"2.0","id":1,"result":{"tools":[` +
		`{"name":"read_file","inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}},` +
		`{"name":"delete_file","inputSchema":{"type":"object"}},` +
		`{"name":"secret_tool","inputSchema":{"type":"object"}},` +
		`{"name":"write_file","inputSchema":{"type":"object","$ref":"http://example.com/s.json"}}],"nextCursor":"c"}}`
	out, rw, err := s.Egress(mustParse(t, list), &Call{Method: "tools/list"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "delete_file") || strings.Contains(string(out), "secret_tool") || !strings.Contains(string(out), `"nextCursor":"c"`) || len(rw) != 2 {
		t.Errorf("tools/list not filtered: %s %v", out, rw)
	}
	call := func(args string) string {
		v := s.Ingress(mustParse(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":`+args+`}}`))
		if v.Rejection == nil {
			return "allow"
		}
		return v.Rejection.ErrorCode
	}
	if got := call(`{"path":"a"}`); got != "allow" {
		t.Errorf("valid call: %s", got)
	}
	if got := call(`{"path":7}`); got != codes.Schema {
		t.Errorf("schema violation: %s", got)
	}
	if got := call(`{}`); got != codes.Schema {
		t.Errorf("missing required: %s", got)
	}
	v := s.Ingress(mustParse(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write_file","arguments":{}}}`))
	if v.Rejection == nil || v.Rejection.ErrorCode != codes.Schema {
		t.Errorf("a server schema with a network $ref must fail closed, got %+v", v.Rejection)
	}
}

// FuzzRawNeedsText holds the raw-bytes fast path equal to canon.NeedsText:
// if it ever said "clean" for a string Text would change, hostile output
// would pass through untouched.
func FuzzRawNeedsText(f *testing.F) {
	for _, s := range []string{"plain", "a\x1b[31mb", "\u202e", "\U000E0041", "\u0085", "\u009b", "tab\tnl\n", "\u2066x", "\x7f", "\U000E0100", "é日本", "👨\u200d👩", "a\u200bb", "❤\ufe0f", "\u2028", "\u00ad", "\ufeff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8Valid(s) {
			return
		}
		q, err := jsontext.AppendQuote(nil, s)
		if err != nil {
			return
		}
		suspect := false
		for _, r := range s {
			suspect = suspect || canon.Suspect(r)
		}
		if got, needs := rawNeedsText(q), canon.NeedsText([]byte(s)); needs && !got || got != suspect {
			t.Fatalf("rawNeedsText(%q) = %v, canon.NeedsText = %v, a suspect code point: %v", q, got, needs, suspect)
		}
		// The parser's TextPlain lets Egress skip rawNeedsText: it must
		// never be set on a message that text would change.
		line := `{"jsonrpc":"2.0","id":1,"result":{"t":` + string(q) + `}}`
		if m, err := message.Parse([]byte(line)); err == nil && m.TextPlain && canon.NeedsText([]byte(s)) {
			t.Fatalf("TextPlain set on %s, which text changes", line)
		}
		// The same with every rune \u-escaped, as some servers write.
		var esc []byte
		esc = append(esc, '"')
		for _, r := range s {
			esc = appendEscaped(esc, r)
		}
		esc = append(esc, '"')
		if got, needs := rawNeedsText(esc), canon.NeedsText([]byte(s)); needs && !got || got != suspect {
			t.Fatalf("rawNeedsText(%s) = %v, canon.NeedsText = %v, a suspect code point: %v", esc, got, needs, suspect)
		}
	})
}

// FuzzTextCut: b cut where textCut says reads, part by part, as b does:
// needsText judges a long text in parts at once.
func FuzzTextCut(f *testing.F) {
	for _, s := range []string{`plain text`, `a\u202eb`, "a\u202eb", `x\ud83d\ude00y`, `\\\\u202e`, `\udb40\udc41 tag`, "\xe2\x80", `tail\`, "Съешь же ещё"} {
		f.Add([]byte(s), uint16(0))
	}
	f.Fuzz(func(t *testing.T, b []byte, at uint16) {
		if len(b) == 0 {
			return
		}
		p := textCut(b, int(at)%len(b), len(b))
		if p < 0 {
			return
		}
		if p < int(at)%len(b) || p >= len(b) {
			t.Fatalf("textCut(%q, %d) = %d, outside the range", b, int(at)%len(b), p)
		}
		if whole, parts := rawNeedsText(b), rawNeedsText(b[:p]) || rawNeedsText(b[p:]); whole != parts {
			t.Fatalf("rawNeedsText(%q) = %v, cut at %d: %v", b, whole, p, parts)
		}
	})
}

// TestPlainPrefix8: the SWAR count of leading plain bytes is the count
// read byte by byte, for every byte at every position after plain ones,
// whatever follows it.
func TestPlainPrefix8(t *testing.T) {
	t.Parallel()
	plain := func(c byte) bool { return c < 0x7F && c != '\\' }
	tails := [][]byte{[]byte("aaaaaaaa"), []byte(`\\\\\\\\`), bytes.Repeat([]byte{0xFF}, 8), bytes.Repeat([]byte{0x5D}, 8), bytes.Repeat([]byte{0x00}, 8), []byte("\x7f\x80\\\x5b\xdc\x01\x7e\xc3")}
	for k := range 8 {
		for c := range 256 {
			for _, tail := range tails {
				w := append(append(bytes.Repeat([]byte{'x'}, k), byte(c)), tail[:7-k]...)
				want := 0
				for want < 8 && plain(w[want]) {
					want++
				}
				if got := plainPrefix8(w); got != want {
					t.Fatalf("plainPrefix8(%q) = %d, want %d", w, got, want)
				}
			}
		}
	}
}

// TestNeedsTextParts: a long text read in parts at once finds a suspect
// code point wherever it stands about a cut, written out or escaped (a
// surrogate pair too), and finds none in long text beyond ASCII.
func TestNeedsTextParts(t *testing.T) {
	t.Parallel()
	if min(runtime.GOMAXPROCS(0), runtime.NumCPU()) < 2 {
		t.Log("one processor: needsText reads in one part")
	}
	q, err := jsontext.AppendQuote(nil, strings.Repeat("Съешь же ещё этих булок, café\n", 2*concurrentMin/40))
	if err != nil {
		t.Fatal(err)
	}
	if needsText(q) || rawNeedsText(q) {
		t.Fatal("a plain long text needs text")
	}
	mid := len(q) / 2
	// Under -race every fifth offset, from a different one each run; the
	// tests .ci/run repeats without -race read every offset.
	step := 1
	if raceEnabled {
		step = 5
	}
	for _, unit := range []string{"\u202e", `\u202e`, `\udb40\udc41`, `\u001b`} {
		for at := mid - 40 + rand.IntN(step); at <= mid+40; at += step {
			b := append(append(append([]byte{}, q[:at]...), unit...), q[at:]...)
			// Inside a code point or an escape the unit breaks the
			// text (rawNeedsText says yes for that); anywhere, the
			// parts say what the whole does.
			between := q[at]&0xC0 != 0x80 && q[at-1] != '\\'
			if got, want := needsText(b), rawNeedsText(b); got != want || between && !got {
				t.Fatalf("%q at %d of %d: needsText %v, rawNeedsText %v", unit, at, len(b), got, want)
			}
		}
	}
}

// TestEgressLongResults: a result long enough that egress judges its
// links and its secrets at once is forwarded unchanged when clean, and
// loses its image and its credential, wherever they stand in it.
func TestEgressLongResults(t *testing.T) {
	t.Parallel()
	s := Baseline().NewSession()
	filler := strings.Repeat("plain words on a line of text\n", 2*concurrentMin/30)
	result := func(text string) string {
		q, err := jsontext.AppendQuote(nil, text)
		if err != nil {
			t.Fatal(err)
		}
		return `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":` + string(q) + `}]}}`
	}
	line := result(filler)
	if out, rw, err := s.Egress(mustParse(t, line), &Call{Method: "tools/call", Tool: "x"}); err != nil || len(rw) != 0 || string(out) != line {
		t.Fatalf("changed a clean long result: %v %v", rw, err)
	}
	for _, c := range []struct{ insert, gone, canonicaliser string }{
		{"![x](https://attacker.example/p.png?d=1)", "p.png?d=1", "images"},
		{"token ghp_R8kq2ZfL0vXw9NcT4mHy7PbJ3sDa6EuG1oQi", "ghp_", "secrets"},
	} {
		for _, at := range []int{0, len(filler) / 2, len(filler) - 1} {
			line := result(filler[:at] + c.insert + "\n" + filler[at:])
			out, rw, err := s.Egress(mustParse(t, line), &Call{Method: "tools/call", Tool: "x"})
			if err != nil || len(rw) == 0 || rw[0].Canonicaliser != c.canonicaliser || strings.Contains(string(out), c.gone) {
				t.Fatalf("%q at %d: %v %v; kept it: %v", c.insert, at, rw, err, strings.Contains(string(out), c.gone))
			}
		}
	}
}

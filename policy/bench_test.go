package policy

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpguard/mcpguard/policy/message"
)

// twentyRules is a typical policy for a test-runner server: 20 ingress
// rules, a schema, and a denied tool.
const twentyRules = `
version: 1
tools:
  run_tests:
    schema:
      type: object
      properties:
        testArgs: {type: array, items: {type: string, maxLength: 256}}
        run: {type: string}
        path: {type: string}
  delete_cache: deny
ingress:
  - {tools: ["*"], fields: ["**"], check: control_chars}
  - {tools: [run_tests], fields: ["testArgs[*]"], check: dangerous_flags, long: [--rootdir, --cov-config, --init-script, --require, --node-options, --manifest-path, --target-dir, --inspect, --experimental-loader], short_prefixes: [-D, -I, -P]}
  - {tools: [run_tests], fields: ["testArgs[*]"], check: shell_metachars}
  - {tools: [run_tests], fields: [run], check: deny_pattern, pattern: '[;&\n\r]|\$\(', code: INPUT_REJECTED_INVALID_RUN_PATTERN}
  - {tools: [run_tests], fields: [tags], check: pattern, pattern: '^[A-Za-z0-9_,]+$'}
  - {tools: [run_tests], fields: [timeout], check: duration}
  - {tools: [run_tests], fields: [path, "packages[*]"], check: path_scope, roots: ["${ROOT}"]}
  - {tools: [run_tests], fields: [run], check: control_chars}
  - {tools: [run_tests], fields: [path], check: control_chars}
  - {tools: [run_tests], fields: [path], check: shell_metachars}
  - {tools: [run_tests], fields: [env], check: pattern, pattern: '^[A-Z_]+=[^;]*$'}
  - {tools: [other_*], fields: ["**"], check: shell_metachars}
  - {tools: [lint], fields: ["args[*]"], check: dangerous_flags, long: [--config]}
  - {tools: [lint], fields: [path], check: path_scope, roots: ["${ROOT}"]}
  - {tools: [build], fields: ["flags[*]"], check: dangerous_flags, long: [--exec], short_prefixes: [-X]}
  - {tools: [build], fields: [out], check: path_scope, roots: ["${ROOT}"]}
  - {tools: [run_tests], fields: [count], check: pattern, pattern: '^[0-9]+$'}
  - {tools: [run_tests], fields: [shard], check: pattern, pattern: '^[0-9]+/[0-9]+$'}
  - {tools: [run_tests], fields: [coverprofile], check: path_scope, roots: ["${ROOT}"]}
  - {tools: [run_tests], fields: ["testArgs[*]"], check: control_chars}
`

// BenchmarkEvaluateToolCall measures one tools/call against the 20-rule
// policy: argument decoding, the schema and every applicable rule (strict
// parsing excluded; see message.BenchmarkParseToolCall). "typical" has one
// path and six flags; "three-paths" adds two package paths, each an lstat
// per component under the root.
func BenchmarkEvaluateToolCall(b *testing.B) { benchEvaluateToolCall(b, twentyRules) }

// BenchmarkEvaluateToolCallSecretsOff is BenchmarkEvaluateToolCall without
// the secrets check (on by default): the difference is its cost.
func BenchmarkEvaluateToolCallSecretsOff(b *testing.B) {
	benchEvaluateToolCall(b, twentyRules+"\nsecrets: {ingress: off}\n")
}

func benchEvaluateToolCall(b *testing.B, policy string) {
	root := b.TempDir()
	os.MkdirAll(root+"/pkg", 0o755)
	p, err := Load("bench.yaml", []byte(policy), func(string) (string, bool) { return root, true })
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, args string }{
		{"typical", `{"testArgs":["-v","--count=1","-race","./pkg/...","-timeout","90s"],"run":"TestParse|TestRelay$","path":"` + root + `/pkg","timeout":"90s","tags":"integration,slow"}`},
		{"three-paths", `{"testArgs":["-v","--count=1","-race","./pkg/...","-timeout","90s"],"run":"TestParse|TestRelay$","path":"` + root + `/pkg","timeout":"90s","tags":"integration,slow","packages":["./pkg/a","./pkg/b"]}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := p.NewSession()
			m, err := message.Parse([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_tests","arguments":` + c.args + `}}`))
			if err != nil {
				b.Fatal(err)
			}
			if v := s.Ingress(m); v.Rejection != nil {
				b.Fatalf("benign call rejected: %+v", v.Rejection)
			}
			b.ReportAllocs()
			for b.Loop() {
				if v := s.Ingress(m); v.Rejection != nil {
					b.Fatal("rejected")
				}
			}
		})
	}
}

// BenchmarkEvaluateBenchEcho is the per-call policy cost behind
// `integration/bench -policy integration/bench/testdata/twenty-rules.yaml`:
// the bench's echo call (one 245-byte string) against that policy. Its
// schema is in fastSchema's subset; through kaptinlin alone (which formats
// every value it evaluates with fmt.Sprintf("%#v") twice) the call cost
// twice as much.
func BenchmarkEvaluateBenchEcho(b *testing.B) {
	raw, err := os.ReadFile("../integration/bench/testdata/twenty-rules.yaml")
	if err != nil {
		b.Fatal(err)
	}
	p, err := Load("twenty-rules.yaml", raw, func(string) (string, bool) { return "", false })
	if err != nil {
		b.Fatal(err)
	}
	s := p.NewSession()
	m, err := message.Parse([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"0000000007 --format=json --run=TestRelay/pipelined ./proxy/... ./message/... path/to/some/file.go:123:45 (the quick brown fox jumps over the lazy dog) 0123456789abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ !#$%&'()*+,-./:;<=>?@[]^_{|}~"}}}`))
	if err != nil {
		b.Fatal(err)
	}
	if v := s.Ingress(m); v.Rejection != nil {
		b.Fatalf("the bench's echo call is rejected: %+v", v.Rejection)
	}
	b.ReportAllocs()
	for b.Loop() {
		if v := s.Ingress(m); v.Rejection != nil {
			b.Fatal("rejected")
		}
	}
}

// withoutAsk is a policy's text without its lines that say ask.
func withoutAsk(text string) string {
	var out []string
	for line := range strings.Lines(text) {
		if !strings.Contains(line, "ask") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}

// benchEcho is the bench's echo call and the bench's policy, loaded from
// its text after edit.
func benchEcho(tb testing.TB, edit func(string) string) (*Session, *message.Message) {
	raw, err := os.ReadFile("../integration/bench/testdata/twenty-rules.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	p, err := Load("twenty-rules.yaml", []byte(edit(string(raw))), func(string) (string, bool) { return "", false })
	if err != nil {
		tb.Fatal(err)
	}
	m, err := message.Parse([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"0000000007 --format=json --run=TestRelay/pipelined ./proxy/... ./message/... path/to/some/file.go:123:45 (the quick brown fox jumps over the lazy dog) 0123456789abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ !#$%&'()*+,-./:;<=>?@[]^_{|}~"}}}`))
	if err != nil {
		tb.Fatal(err)
	}
	return p.NewSession(), m
}

// TestAskCostsNothingElsewhere: the bench policy's ask entries (a tool,
// a glob, an ingress rule, all on tools the bench never calls) add no
// allocation and no ask to the echo call: what asks is planned per tool
// name when the policy loads. BenchmarkEvaluateBenchEchoAsk gives the
// time.
func TestAskCostsNothingElsewhere(t *testing.T) {
	allocs := map[string]float64{}
	for name, edit := range map[string]func(string) string{"with": func(s string) string { return s }, "without": withoutAsk} {
		s, m := benchEcho(t, edit)
		if v := s.Ingress(m); v.Rejection != nil || v.Ask != nil {
			t.Fatalf("%s the ask entries: the echo call got %+v", name, v)
		}
		allocs[name] = testing.AllocsPerRun(200, func() { s.Ingress(m) })
	}
	if allocs["with"] != allocs["without"] {
		t.Errorf("the echo call allocates %v times with ask entries on other tools, %v without", allocs["with"], allocs["without"])
	}
	if s, _ := benchEcho(t, func(s string) string { return s }); s.now().policy().calls["git_push"].ask != "tools.git_push" {
		t.Error("the bench policy's ask entries did not load")
	}
}

// BenchmarkEvaluateBenchEchoAsk is BenchmarkEvaluateBenchEcho with and
// without the policy's ask entries (on tools the bench never calls).
func BenchmarkEvaluateBenchEchoAsk(b *testing.B) {
	for _, c := range []struct {
		name string
		edit func(string) string
	}{{"without", withoutAsk}, {"with", func(s string) string { return s }}} {
		edit := c.edit
		b.Run(c.name, func(b *testing.B) {
			s, m := benchEcho(b, edit)
			b.ReportAllocs()
			for b.Loop() {
				if v := s.Ingress(m); v.Rejection != nil || v.Ask != nil {
					b.Fatal("rejected or asked")
				}
			}
		})
	}
}

// BenchmarkParseJudge is the policy's share of one relayed call, both
// directions: the strict parse of the bench's echo call, its judgement
// (Ingress, CallOf), the strict parse of its reply and egress, after the
// bench's tools/list, a new id each call (as proxy.BenchmarkRelayCall,
// without the relay's bookkeeping). Under the baseline and under
// integration/bench's twenty-rules.yaml; "secrets-off" leaves out the
// secrets raw check, which has benchmarks of its own.
func BenchmarkParseJudge(b *testing.B) {
	raw, err := os.ReadFile("../integration/bench/testdata/twenty-rules.yaml")
	if err != nil {
		b.Fatal(err)
	}
	load := func(text string) *Policy {
		p, err := Load("twenty-rules.yaml", []byte(text), func(string) (string, bool) { return "", false })
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	baselineOff := load("version: 1\nsecrets: {ingress: off, egress: off}\n")
	for _, c := range []struct {
		name string
		p    *Policy
	}{
		{"baseline", Baseline()},
		{"baseline-secrets-off", baselineOff},
		{"twenty-rules", load(string(raw))},
		{"twenty-rules-secrets-off", load(string(raw) + "\nsecrets: {ingress: off, egress: off}\n")},
	} {
		b.Run(c.name, func(b *testing.B) { benchParseJudge(b, c.p) })
	}
}

func benchParseJudge(b *testing.B, p *Policy) {
	s := p.NewSession()
	var in, out message.Message
	if err := message.ParseInto(&in, []byte(`{"jsonrpc":"2.0","id":0,"method":"tools/list"}`)); err != nil {
		b.Fatal(err)
	}
	list := s.CallOf(&in)
	if err := message.ParseInto(&out, []byte(`{"jsonrpc":"2.0","id":0,"result":{"tools":[`+
		`{"name":"echo","description":"Returns its text argument.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}},`+
		`{"name":"blob","description":"Returns N bytes of multi-line text.","inputSchema":{"type":"object","properties":{"bytes":{"type":"integer"}},"required":["bytes"]}}]}}`)); err != nil {
		b.Fatal(err)
	}
	if _, _, err := s.Egress(&out, &list); err != nil {
		b.Fatal(err)
	}
	const filler = " --format=json --run=TestRelay/pipelined ./proxy/... ./message/... " +
		"path/to/some/file.go:123:45 (the quick brown fox jumps over the lazy dog) " +
		"0123456789abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ !#$%&'()*+,-./:;<=>?@[]^_{|}~ ok"
	var text, req, resp []byte
	b.ReportAllocs()
	id := 0
	for b.Loop() {
		id++
		text = append(strconv.AppendInt(text[:0], int64(1e9+id), 10), filler[:235]...)
		req = strconv.AppendInt(append(req[:0], `{"jsonrpc":"2.0","id":`...), int64(id), 10)
		req = append(append(append(req, `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`...), text...), `"}}}`...)
		resp = strconv.AppendInt(append(resp[:0], `{"jsonrpc":"2.0","id":`...), int64(id), 10)
		resp = append(append(append(resp, `,"result":{"content":[{"type":"text","text":"`...), text...), `"}]}}`...)
		if err := message.ParseInto(&in, req); err != nil {
			b.Fatal(err)
		}
		if v := s.Ingress(&in); v.Rejection != nil || v.Ask != nil {
			b.Fatalf("the echo call got %+v", v)
		}
		call := s.CallOf(&in)
		if err := message.ParseInto(&out, resp); err != nil {
			b.Fatal(err)
		}
		if fwd, rw, err := s.Egress(&out, &call); err != nil || len(rw) > 0 || len(fwd) != len(resp) {
			b.Fatalf("the echo reply is changed: %d rewrites, %v", len(rw), err)
		}
	}
}

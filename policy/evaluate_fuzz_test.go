package policy

import (
	"os"
	"reflect"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/policy/message"
)

// FuzzEvaluate judges fuzzed arguments of a tools/call against the 20-rule
// benchmark policy (flags, metacharacters, control characters, patterns,
// durations, paths under a real root, a schema). Evaluation must not panic,
// must give the same verdict twice, and must give the verdict it gives
// with every schema's fast path and every planned call removed: fastSchema
// and callPlan change the cost of a verdict, never the verdict.
func FuzzEvaluate(f *testing.F) {
	root := f.TempDir()
	os.MkdirAll(root+"/pkg", 0o755)
	env := func(string) (string, bool) { return root, true }
	fast, err := Load("bench.yaml", []byte(twentyRules), env)
	if err != nil {
		f.Fatal(err)
	}
	slow, err := Load("bench.yaml", []byte(twentyRules), env)
	if err != nil {
		f.Fatal(err)
	}
	for _, t := range slow.tools {
		if t.schema != nil {
			t.schema.fast = nil
		}
	}
	if len(fast.calls) == 0 {
		f.Fatal("no call planned ahead")
	}
	slow.calls = nil
	for _, args := range []string{
		`{"testArgs":["-v","--count=1","-race","./pkg/...","-timeout","90s"],"run":"TestParse|TestRelay$","path":"` + root + `/pkg","timeout":"90s","tags":"integration,slow"}`,
		`{"testArgs":["--ROOTDIR=/"],"run":"x"}`, `{"testArgs":"--rootdir"}`, `{"testArgs":[1,2]}`, `{"run":5}`,
		`{"path":"../etc"}`, `{"Path":"/etc/passwd"}`, `{"run":"a;b"}`, `{"timeout":"1h1h"}`, `{"tags":"a b"}`,
		`{"testArgs":["\u2014inspect"]}`, `{"run":"\u001b[2J"}`, `{"x":{"y":["-Dz"]}}`, `{"testArgs":["x"],"TESTARGS":["--rootdir"]}`,
		`{"testArgs":["` + "a\u00ad" + `"],"count":"12","shard":"1/2"}`, `{}`, `null`,
	} {
		f.Add("run_tests", args)
	}
	f.Add("lint", `{"args":["--config=x"],"path":"/tmp"}`)
	f.Add("other_tool", `{"a":"$(id)"}`)
	f.Add("other_*", `{"a":"$(id)"}`)
	f.Add("build", `{"flags":["--exec"]}`)
	f.Fuzz(func(t *testing.T, tool, args string) {
		name, err := jsontext.AppendQuote(nil, tool)
		if err != nil {
			return
		}
		line := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":` + string(name) + `,"arguments":` + args + `}}`
		m, err := message.Parse([]byte(line))
		if err != nil {
			return
		}
		a := fast.NewSession().Ingress(m)
		again := fast.NewSession().Ingress(m)
		b := slow.NewSession().Ingress(m)
		if !reflect.DeepEqual(a, again) {
			t.Fatalf("%s: two verdicts: %+v, then %+v", line, a.Rejection, again.Rejection)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: with fast paths %+v, without %+v", line, a.Rejection, b.Rejection)
		}
	})
}

// TestUnlistedPlan: a policy without tool entries or ingress rules judges
// every tool alike from one plan, and that plan follows unknown_tools.
func TestUnlistedPlan(t *testing.T) {
	deny, err := Load("deny.yaml", []byte("version: 1\nunknown_tools: deny\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p      *Policy
		denied bool
	}{{Baseline(), false}, {Baseline().WithMode(Audit), false}, {deny, true}, {deny.WithMode(Audit), true}} {
		if c.p.unlisted == nil {
			t.Fatalf("%s: no plan for unlisted tools", c.p.Source)
		}
		for _, tool := range []string{"read_file", "x/y", "other_tool"} {
			m, err := message.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"a":"$(id)"}}}`))
			if err != nil {
				t.Fatal(err)
			}
			if v := c.p.NewSession().Ingress(m); (v.Rejection != nil) != c.denied {
				t.Errorf("%s %q: rejection %+v, want denied=%v", c.p.Source, tool, v.Rejection, c.denied)
			}
		}
	}
}

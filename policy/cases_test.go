package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/goccy/go-yaml"
)

// caseFile is one file of policy cases under testdata/cases: a policy and
// messages with the verdict each must get. Policy behaviour is data; a new
// case is a few lines.
type caseFile struct {
	Note       string `yaml:"note"`
	Policy     string `yaml:"policy"`      // inline policy YAML
	PolicyFile string `yaml:"policy_file"` // or a file, relative to the repo root
	ToolsList  any    `yaml:"tools_list"`  // optional tools/list result priming server schemas
	// ToolsListFile is a saved tools/list of the server a shipped policy
	// was written for (testdata/toolslists, with its version), relative
	// to the repo root: it primes server schemas, and the policy must
	// name every tool in it and no other.
	ToolsListFile string `yaml:"tools_list_file"`
	// OneSession judges every case in one session, in order, so that
	// state such as rate limits carries from case to case.
	OneSession bool         `yaml:"one_session"`
	Cases      []policyCase `yaml:"cases"`
}

type policyCase struct {
	Note      string  `yaml:"note"`
	Method    string  `yaml:"method"` // default tools/call
	Tool      string  `yaml:"tool"`   // params.name
	Arguments any     `yaml:"arguments"`
	URI       string  `yaml:"uri"`     // resources/read
	Message   string  `yaml:"message"` // a raw line instead of the above
	Held      []Label `yaml:"held"`    // labels the session holds before the message
	Want      string  `yaml:"want"`    // "allow", "ask" (held for the user) or the error_code
	Field     string  `yaml:"field"`   // optional: the field the rejection names
	Rule      string  `yaml:"rule"`    // optional: the rule the rejection names
	// Repeat, when over 1, judges the message that many times in one
	// session (state such as rate limits carries over); the last verdict
	// is the case's, every earlier one must be allow.
	Repeat int `yaml:"repeat"`
}

// pathFixture builds the tree path_scope cases run against and returns the
// variables their policies expand: ROOT (an allowed root with files),
// OUTSIDE (a directory outside it), LINKROOT (a root that is a symlink).
func pathFixture(t testing.TB) map[string]string {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, filepath.Join(root, "sub"), outside, filepath.Join(base, "root_x"), filepath.Join(base, "real")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(root, "file.txt"), filepath.Join(root, "sub", "a.go"), filepath.Join(outside, "secret"), filepath.Join(root, "caf\u00e9.txt")} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		filepath.Join(root, "link_out"):        outside,
		filepath.Join(root, "link_in"):         filepath.Join(root, "sub"),
		filepath.Join(root, "sub", "link_up"):  base,
		filepath.Join(root, "dangling_out"):    filepath.Join(outside, "not-yet"),
		filepath.Join(base, "linkroot"):        filepath.Join(base, "real"),
		filepath.Join(root, "link_secret"):     filepath.Join(outside, "secret"),
		filepath.Join(root, "link_rel_escape"): "../outside",
		filepath.Join(root, "\u00e9vil"):       outside, // NFC name; cases ask for it in NFD
	}
	for link, target := range links {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	return map[string]string{"ROOT": root, "OUTSIDE": outside, "LINKROOT": filepath.Join(base, "linkroot"), "BASE": base}
}

func expandFixture(s string, vars map[string]string) string {
	for k, v := range vars {
		s = strings.ReplaceAll(s, "${"+k+"}", v)
	}
	return s
}

func TestPolicyCases(t *testing.T) {
	files, err := filepath.Glob("testdata/cases/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no case files: %v", err)
	}
	vars := pathFixture(t)
	vars["CASE_SECRET"] = "kn0wn-case-s3cret-v4lue"  // secrets.yaml's known secret
	vars["CASE_SECRET_UMLAUT"] = "Grüße-aus-Köln-42" // secrets_encodings.yaml's
	vars["CASE_SECRET_UUID"] = "3f2a9c1e-7b4d-4e8f-9a6b-2c1d0e9f8a7b"
	t.Setenv("HOME", vars["ROOT"])
	lookup := func(name string) (string, bool) {
		v, ok := vars[name]
		if !ok {
			return os.LookupEnv(name)
		}
		return v, ok
	}
	counts := map[bool]int{}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var cf caseFile
		if err := yaml.UnmarshalWithOptions(data, &cf, yaml.Strict()); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		t.Run(strings.TrimSuffix(filepath.Base(path), ".yaml"), func(t *testing.T) {
			src, name := []byte(cf.Policy), path
			if cf.PolicyFile != "" {
				name = filepath.Join("..", cf.PolicyFile)
				if src, err = os.ReadFile(name); err != nil {
					t.Fatal(err)
				}
			}
			p, err := Load(name, src, lookup)
			if err != nil {
				t.Fatalf("policy does not load: %v", err)
			}
			var tools []byte
			if cf.ToolsList != nil {
				if tools, err = json.Marshal(cf.ToolsList); err != nil {
					t.Fatal(err)
				}
			}
			if cf.ToolsListFile != "" {
				if tools, err = os.ReadFile(filepath.Join("..", cf.ToolsListFile)); err != nil {
					t.Fatal(err)
				}
				reviewedEveryTool(t, p, tools)
			}
			var shared *Session
			var notes []string
			for i, c := range cf.Cases {
				line := caseMessage(t, c, vars)
				if !cf.OneSession || shared == nil {
					shared, notes = p.evalSession(tools)
				}
				s := shared
				for _, l := range c.Held {
					s.flow.learn(labelBit(l), "(earlier call)", "held: in the case")
				}
				for n := 1; n < c.Repeat; n++ {
					if ev := s.evaluate(line, notes); ev.Verdict != Allowed {
						t.Errorf("case %d %q: judgement %d of %d: %s (%s), want allow", i, c.Note, n, c.Repeat, ev.ErrorCode, ev.Error)
					}
				}
				ev := s.evaluate(line, notes)
				got := ev.ErrorCode
				switch ev.Verdict {
				case Allowed:
					got = "allow"
				case Asked:
					got = "ask"
				}
				label := c.Note
				if label == "" {
					label = string(line)
				}
				if got != c.Want {
					t.Errorf("case %d %q: got %s (%s), want %s", i, label, got, ev.Error, c.Want)
					continue
				}
				if c.Field != "" && ev.Field != c.Field {
					t.Errorf("case %d %q: field %q, want %q", i, label, ev.Field, c.Field)
				}
				if c.Rule != "" && ev.Rule != c.Rule {
					t.Errorf("case %d %q: rule %q, want %q", i, label, ev.Rule, c.Rule)
				}
				counts[c.Want == "allow"]++
			}
		})
	}
	t.Logf("%d adversarial cases, %d benign cases", counts[false], counts[true])
	if counts[false] < 150 || counts[true] < 50 {
		t.Errorf("the case files hold %d adversarial and %d benign cases; keep at least 150 and 50", counts[false], counts[true])
	}
}

// reviewedEveryTool: the policy names no tool the server lacks, and
// gives every tool the server lists an entry of its own (allowed, with
// settings, or denied), so that none is refused only for being unknown.
func reviewedEveryTool(t *testing.T, p *Policy, toolsList []byte) {
	t.Helper()
	warnings, err := p.ToolNameWarnings(toolsList)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range warnings {
		t.Error(w)
	}
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(toolsList, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) == 0 {
		t.Fatal("the saved tools/list has no tools")
	}
	for _, tool := range list.Tools {
		if !slices.ContainsFunc(p.tools, func(e *toolEntry) bool { return !e.glob && e.pattern == tool.Name }) {
			t.Errorf("the server's tool %s has no entry under tools:", tool.Name)
		}
	}
}

func caseMessage(t *testing.T, c policyCase, vars map[string]string) []byte {
	if c.Message != "" {
		return []byte(expandFixture(c.Message, vars))
	}
	method := c.Method
	if method == "" {
		method = "tools/call"
	}
	params := map[string]any{}
	switch method {
	case "resources/read":
		params["uri"] = expandFixture(c.URI, vars)
	default:
		params["name"] = c.Tool
		if c.Arguments != nil {
			params["arguments"] = expandAll(c.Arguments, vars)
		}
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func expandAll(v any, vars map[string]string) any {
	switch x := v.(type) {
	case string:
		return expandFixture(x, vars)
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = expandAll(e, vars)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = expandAll(e, vars)
		}
		return out
	}
	return v
}

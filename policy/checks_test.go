package policy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/goccy/go-yaml"
)

// TestCheckRegistry: every registered check has its code in package codes,
// a branch in the policy schema naming exactly its options, a row in
// README.md's table of codes, a section in policies/README.md and a case
// file that uses it and sees it refuse; and the schema names no check the
// registry lacks.
func TestCheckRegistry(t *testing.T) {
	codeList := declaredCodes(t)
	branches, enum := schemaCheckBranches(t)
	table := readmeCodeTable(t)
	reference := readFile(t, "../policies/README.md")
	use := caseFileUse(t)

	for _, k := range checkKinds {
		if !slices.Contains(codeList, k.code) {
			t.Errorf("%s: code %s is not declared in package codes", k.name, k.code)
		}
		if !slices.Contains(enum, k.name) {
			t.Errorf("%s: not in the schema's check enum", k.name)
		}
		if props, ok := branches[k.name]; !ok {
			t.Errorf("%s: no if/then branch in the schema's ingressRule", k.name)
		} else {
			want := append(slices.Clone(commonMembers), jsonNames(k.options)...)
			slices.Sort(want)
			if !slices.Equal(props, want) {
				t.Errorf("%s: the schema branch allows %v, the option type %v decodes %v", k.name, props, k.options, want)
			}
		}
		if !slices.ContainsFunc(table[k.code], func(raisedBy string) bool { return strings.Contains(raisedBy, "`"+k.name+"`") }) {
			t.Errorf("%s: README.md's table of codes has no row for %s naming `%s`", k.name, k.code, k.name)
		}
		heading := regexp.MustCompile("(?m)^### `" + regexp.QuoteMeta(k.name) + "` — .*" + regexp.QuoteMeta(k.code))
		if !heading.MatchString(reference) {
			t.Errorf("%s: policies/README.md has no section headed \"### `%s` — ... %s\"", k.name, k.name, k.code)
		}
		if files := use[k.name]; len(files) == 0 {
			t.Errorf("%s: no case file in testdata/cases whose policy uses it with a case refused with %s", k.name, k.code)
		}
	}
	for _, name := range enum {
		if _, ok := lookupCheck(name); !ok {
			t.Errorf("the schema's check enum names %q, which no registered check is", name)
		}
	}
}

// TestCodeList: README.md's table of codes has one row per code in package
// codes, and no other.
func TestCodeList(t *testing.T) {
	codeList := declaredCodes(t)
	table := readmeCodeTable(t)
	for _, c := range codeList {
		if _, ok := table[c]; !ok {
			t.Errorf("%s is declared in package codes but has no row in README.md's table", c)
		}
	}
	for c := range table {
		if !slices.Contains(codeList, c) {
			t.Errorf("README.md's table lists %s, which package codes does not declare", c)
		}
	}
}

// TestUnknownCheckRefused: a name the registry lacks is a load error, also
// past the schema.
func TestUnknownCheckRefused(t *testing.T) {
	if _, err := compileIngress([]byte(`{"fields":["a"],"check":"no_such_check"}`), nil); err == nil || !strings.Contains(err.Error(), `unknown check "no_such_check"`) {
		t.Fatalf("err %v", err)
	}
	if _, err := compileIngress([]byte(`{"fields":["a"],"check":"control_chars","long":["--x"]}`), nil); err == nil {
		t.Fatal("an option of another check was accepted past the schema")
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// declaredCodes returns the string constants of package codes.
func declaredCodes(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../rules/codes/codes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			for _, v := range s.(*ast.ValueSpec).Values {
				if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					c, _ := strconv.Unquote(lit.Value)
					out = append(out, c)
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no codes found in package codes")
	}
	return out
}

// readmeCodeTable returns README.md's table of codes: the code of each row
// (the first backquoted word of its first cell) and what raises it.
func readmeCodeTable(t *testing.T) map[string][]string {
	t.Helper()
	row := regexp.MustCompile("^\\| `([A-Z_]+)`[^|]*\\| (.*) \\|$")
	table := map[string][]string{}
	in := false
	for line := range strings.Lines(readFile(t, "../README.md")) {
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "| error_code |"):
			in = true
		case in && !strings.HasPrefix(line, "|"):
			in = false
		case in:
			if m := row.FindStringSubmatch(line); m != nil {
				table[m[1]] = append(table[m[1]], m[2])
			}
		}
	}
	if len(table) == 0 {
		t.Fatal("README.md has no table of codes (a header row starting \"| error_code |\")")
	}
	return table
}

// schemaCheckBranches returns, for each check name of an if/then branch of
// the schema's ingressRule, the members its then allows (sorted), and the
// names of the check enum.
func schemaCheckBranches(t *testing.T) (map[string][]string, []string) {
	t.Helper()
	type named struct {
		Const string   `json:"const"`
		Enum  []string `json:"enum"`
	}
	var s struct {
		Defs struct {
			IngressRule struct {
				Properties struct {
					Check named `json:"check"`
				} `json:"properties"`
				AllOf []struct {
					If struct {
						Properties struct {
							Check named `json:"check"`
						} `json:"properties"`
					} `json:"if"`
					Then struct {
						Properties map[string]any `json:"properties"`
					} `json:"then"`
				} `json:"allOf"`
			} `json:"ingressRule"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(SchemaJSON, &s); err != nil {
		t.Fatal(err)
	}
	branches := map[string][]string{}
	for _, b := range s.Defs.IngressRule.AllOf {
		c := b.If.Properties.Check
		names := c.Enum
		if c.Const != "" {
			names = append(names, c.Const)
		}
		var props []string
		for p := range b.Then.Properties {
			props = append(props, p)
		}
		slices.Sort(props)
		for _, n := range names {
			if _, dup := branches[n]; dup {
				t.Errorf("the schema has two branches for check %q", n)
			}
			branches[n] = props
		}
	}
	return branches, s.Defs.IngressRule.Properties.Check.Enum
}

// caseFileUse returns, for each check name, the case files whose policy
// has an ingress rule with that check and a case refused with its code.
func caseFileUse(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob("testdata/cases/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no case files: %v", err)
	}
	use := map[string][]string{}
	for _, f := range files {
		var cf caseFile
		if err := yaml.Unmarshal([]byte(readFile(t, f)), &cf); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		text := cf.Policy
		if cf.PolicyFile != "" {
			text = readFile(t, filepath.Join("..", cf.PolicyFile))
		}
		var pol struct {
			Ingress []struct {
				Check string `yaml:"check"`
			} `yaml:"ingress"`
		}
		if err := yaml.Unmarshal([]byte(text), &pol); err != nil {
			t.Fatalf("%s: policy: %v", f, err)
		}
		for _, r := range pol.Ingress {
			k, ok := lookupCheck(r.Check)
			if !ok || slices.Contains(use[k.name], f) {
				continue
			}
			if slices.ContainsFunc(cf.Cases, func(c policyCase) bool { return c.Want == k.code }) {
				use[k.name] = append(use[k.name], f)
			}
		}
	}
	return use
}

package shellcmd

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpguard/mcpguard/rules/codes"
	"github.com/mcpguard/mcpguard/rules/cputime"
)

// corpus reads a testdata file: one command a line, # comments, a line
// starting with "q:" is a Go string literal.
func corpus(t testing.TB, name string) []string {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if q, ok := strings.CutPrefix(line, "q:"); ok {
			if line, err = strconv.Unquote(q); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		out = append(out, line)
	}
	return out
}

// testPolicies are an allowlist of what ordinary.txt runs and a denylist
// of what obfuscations.txt is after.
func testPolicies(t testing.TB) map[string]*Check {
	t.Helper()
	allow, err := New(Options{Programs: strings.Fields(`git npm npx node yarn pnpm ls cat head tail wc grep rg
		find mkdir touch cp mv pwd echo date whoami uname which go gofmt cargo make python3 pytest pip docker
		kubectl tsc cd sort uniq cut du df ps env printenv diff sed awk jq tar unzip chmod ln sha256sum test true`)})
	if err != nil {
		t.Fatal(err)
	}
	deny, err := New(Options{DenyPrograms: []string{"rm", "curl", "wget", "nc"}})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*Check{"allowlist": allow, "denylist": deny}
}

func TestOrdinaryCommandsPass(t *testing.T) {
	cmds := corpus(t, "ordinary.txt")
	if len(cmds) < 100 {
		t.Fatalf("ordinary corpus has %d commands, want at least 100", len(cmds))
	}
	for name, c := range testPolicies(t) {
		for _, cmd := range cmds {
			if f := c.Check(cmd); f != nil {
				t.Errorf("%s refused ordinary %q: %s", name, cmd, f.Reason)
			}
		}
	}
}

func TestObfuscationsRefused(t *testing.T) {
	cmds := corpus(t, "obfuscations.txt")
	if len(cmds) < 100 {
		t.Fatalf("obfuscation corpus has %d commands, want at least 100", len(cmds))
	}
	for name, c := range testPolicies(t) {
		for _, cmd := range cmds {
			f := c.Check(cmd)
			if f == nil {
				t.Errorf("%s passed %q", name, cmd)
				continue
			}
			// A denied name is the policy's text; anything longer
			// than a name must not come back.
			if f.Code != codes.ShellCommand || len(cmd) > 6 && strings.Contains(f.Reason, cmd) {
				t.Errorf("%s: finding %+v for %q: wrong code or echoes the value", name, f, cmd)
			}
		}
	}
}

func TestSyntaxOptIn(t *testing.T) {
	strict, err := New(Options{Programs: []string{"ls", "git"}, Syntax: []Syntax{}})
	if err != nil {
		t.Fatal(err)
	}
	open, err := New(Options{Programs: []string{"ls", "git", "cat", "env"}, Env: []string{"CI"},
		Syntax: []Syntax{Pipes, Lists, Groups, Control, Background, Redirects, Variables, Globs, Braces}})
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"ls | git x", "ls; git x", "( ls )", "if ls; then git x; fi", "ls &",
		"ls > out.txt", "ls $HOME", "ls *.go", "ls {a,b}", "ls < in"} {
		if strict.Check(cmd) == nil {
			t.Errorf("no syntax allowed, yet %q passed", cmd)
		}
		if f := open.Check(cmd); f != nil {
			t.Errorf("every syntax allowed, yet %q refused: %s", cmd, f.Reason)
		}
	}
	for _, cmd := range []string{"ls 2>&1", "ls >/dev/null", "git status", "CI=1 git status", "env CI=true git log",
		"cat <<'EOF'\nx\nEOF\n"} {
		if f := open.Check(cmd); f != nil {
			t.Errorf("%q refused: %s", cmd, f.Reason)
		}
	}
	// Never allowed, whatever the syntax: the program would come from
	// the running shell.
	for _, cmd := range []string{"$X a", "${X} a", "ls $(id)", "ls ${!X}", "ls ${a[$(id)]}", "/???/ls", "e* x",
		"CI='$(id)' ls ${CI@P}", "ls ${!CI*}", "ls ${CI[0]}",
		"X=1 ls", "env X=1 ls", "ls {a,b}$(id)",
		// bash syntax that sh reads otherwise (dash runs `ls &` then
		// truncates x) or not at all: the check cannot know which shell.
		"ls &> x", "git log <<< x"} {
		if open.Check(cmd) == nil {
			t.Errorf("%q passed", cmd)
		}
	}
}

func TestOptions(t *testing.T) {
	for _, o := range []Options{
		{Programs: []string{"/bin/ls"}},
		{DenyPrograms: []string{""}},
		{Syntax: []Syntax{"heredocs"}},
		{Env: []string{"1X"}},
		{Env: []string{"A-B"}},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}

func TestProgramPaths(t *testing.T) {
	c, err := New(Options{Programs: []string{"git"}})
	if err != nil {
		t.Fatal(err)
	}
	for cmd, ok := range map[string]bool{
		"git x": true, "/usr/bin/git x": true, "/usr/local/bin/git x": true, "GIT x": true,
		"./git x": false, "/tmp/git x": false, "/usr/bin/../../tmp/git x": false, "~/bin/git x": false,
		"git/ x": false, "'' x": false,
	} {
		if got := c.Check(cmd) == nil; got != ok {
			t.Errorf("%q: passed %v, want %v", cmd, got, ok)
		}
	}
}

// TestBounds: what would make the parser or the expansion work without
// bound is refused, and the largest line allowed is judged quickly.
func TestBounds(t *testing.T) {
	c := testPolicies(t)["denylist"]
	for _, cmd := range []string{
		"ls " + strings.Repeat("{a,b}", 14),
		"echo {1..100000}",
		strings.Repeat("sh -c '", 12) + "ls" + strings.Repeat("'", 12),
		"ls \x00 x",
		"echo " + strings.Repeat("a", 65<<10),
		strings.Repeat("(", 300) + "ls" + strings.Repeat(")", 300),
	} {
		if c.Check(cmd) == nil {
			t.Errorf("%.40q... passed", cmd)
		}
	}
	for _, cmd := range []string{
		strings.Repeat("(", 250) + "ls" + strings.Repeat(")", 250),
		"echo " + strings.Repeat("'a'\"b\"", 10000),
		strings.Repeat("git status; ", 5000),
	} {
		// The checking thread's CPU time: a loaded machine's waits for
		// a core are not the check's.
		if d := cputime.Of(func() { c.Check(cmd) }); d > 2*time.Second {
			t.Errorf("%.40q... took %v of CPU", cmd, d)
		}
	}
}

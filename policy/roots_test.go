package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpguard/mcpguard/policy/message"
)

func rootsPolicy(t *testing.T, roots ...string) *Policy {
	t.Helper()
	src := "version: 1\ningress:\n  - fields: [path]\n    check: path_scope\n    roots: [" + strings.Join(roots, ", ") + "]\n"
	p, err := Load("roots.yaml", []byte(src), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRootWarnings(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src, other := filepath.Join(base, "src"), filepath.Join(base, "other")
	for _, d := range []string{filepath.Join(src, "sub"), other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(src, link); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(base, "missing")
	p := rootsPolicy(t, src, missing)

	got := p.RootWarnings([]string{"mcp-server-filesystem", filepath.Join(src, "sub"), link, other, "--root=" + other, "@scope/pkg", "-y"})
	want := []string{
		"path_scope root " + missing + " (ingress[0]) does not exist",
		"the server's argument " + other + " is a directory that no path_scope root covers",
		"the server's argument " + other + " is a directory that no path_scope root covers",
	}
	if len(got) != len(want) {
		t.Fatalf("warnings:\n%s\nwant %d", strings.Join(got, "\n"), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) || strings.Contains(got[i], "\n") {
			t.Errorf("warning %d: %q, want prefix %q", i, got[i], want[i])
		}
	}
	if !strings.Contains(got[1], "(roots: "+src+", "+missing+")") {
		t.Errorf("the warning does not name the roots: %q", got[1])
	}

	if w := rootsPolicy(t, src).RootWarnings([]string{"srv", src, link}); len(w) != 0 {
		t.Errorf("covered directories warned: %q", w)
	}
	if w := Baseline().RootWarnings([]string{"srv", other}); len(w) != 0 {
		t.Errorf("a policy without path_scope warned: %q", w)
	}
}

// A path_scope rejection names the allowed roots (they are policy, not
// secrets), so that the model can correct the path.
func TestPathScopeRejectionNamesRoots(t *testing.T) {
	p := rootsPolicy(t, "/srv/a", "/srv/b")
	m, err := message.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"/etc/passwd"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	v := p.NewSession().Ingress(m)
	if v.Rejection == nil || !strings.Contains(v.Rejection.Remediation, "Allowed roots: /srv/a, /srv/b.") {
		t.Fatalf("rejection %+v does not name the roots", v.Rejection)
	}
	if strings.Contains(string(v.Reply(m.ID)), "/etc/passwd") {
		t.Errorf("the reply echoes the value")
	}
}

// serverDirsArgv is a server command line with every kind of word that
// looks like a directory, run from cwd; the directories it names, in
// order, are want. The agreement tests of wrap and init use it too.
func serverDirsArgv(t *testing.T) (argv, want []string) {
	t.Helper()
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(cwd)
	abs, flagged, spaced := filepath.Join(cwd, "abs"), filepath.Join(cwd, "flagged"), filepath.Join(cwd, "spaced")
	for _, d := range []string{abs, flagged, spaced, "rel/dir", "server", "@scope/pkg", "~/src", "${workspaceFolder}", "${HOME}/src"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile("file", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	argv = []string{
		"npx", "-y", "@scope/pkg", // argv[0] is the command; @scope/name is a package even as a directory
		abs, abs + "/", // one directory twice
		"rel/dir", "./rel/dir/..", ".", // relative to the working directory
		"--root=" + flagged, "-y", "--repository", spaced, "--flag=", "-=x", // a value after = or after a flag word
		"server",                                 // a bare word is a module name (python -m server)
		"~", "${workspaceFolder}", "${HOME}/src", // placeholders the client or shell expands: never read
		"file", "./file", "/does/not/exist", "-", "",
	}
	// "~/src" is read as written (the literal directory ./~/src): "~" is
	// not expanded, and the word holds a '/'.
	argv = append(argv, "~/src")
	want = []string{abs, filepath.Join(cwd, "rel/dir"), filepath.Join(cwd, "rel"), cwd, flagged, spaced, filepath.Join(cwd, "~/src")}
	return argv, want
}

func TestServerDirs(t *testing.T) {
	argv, want := serverDirsArgv(t)
	dirs := ServerDirs(argv)
	if got := dirs.Abs(); !slices.Equal(got, want) {
		t.Errorf("ServerDirs(%q).Abs() =\n%q\nwant\n%q", argv, got, want)
	}
	if len(dirs) != len(want)+1 || dirs[1].Arg != want[0]+"/" || dirs[0].Arg != want[0] {
		t.Errorf("ServerDirs lists every word that names a directory, duplicates too: %q", dirs)
	}
	if got := ServerDirs(argv[:1]); len(got) != 0 {
		t.Errorf("the command itself is not a directory of the server: %q", got)
	}
}

// The directories RootWarnings checks are those a relative path is read
// against: a policy whose roots are ServerDirs warns about none.
func TestServerDirsAgreeWithPathScope(t *testing.T) {
	argv, want := serverDirsArgv(t)
	p := rootsPolicy(t, quoteAll(want)...)
	if w := p.RootWarnings(argv); len(w) != 0 {
		t.Errorf("a policy rooted at ServerDirs warns:\n%s", strings.Join(w, "\n"))
	}
	s := p.NewSession()
	s.SetServerArgv(argv)
	if !slices.Equal(s.relativeBases(), want) {
		t.Errorf("relative paths are read against %q, want %q", s.relativeBases(), want)
	}
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

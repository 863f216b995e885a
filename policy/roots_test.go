package policy

import (
	"os"
	"path/filepath"
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

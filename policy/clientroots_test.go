package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpguard/mcpguard/policy/message"
)

// TestRootsAnswer: the client's roots/list answer keeps only roots inside
// a path_scope root of the policy (every reading of the URI), and the kept
// ones become bases for relative paths.
func TestRootsAnswer(t *testing.T) {
	vars := pathFixture(t)
	root, outside := vars["ROOT"], vars["OUTSIDE"]
	if err := os.Symlink(outside, filepath.Join(root, "sub", "sub_out")); err != nil {
		t.Fatal(err)
	}
	p, err := Load("roots.yaml", []byte(`
version: 1
ingress:
  - fields: [path]
    check: path_scope
    roots: ["${ROOT}"]
`), func(n string) (string, bool) { v, ok := vars[n]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	s := p.NewSession()
	call := func(path string) *message.Rejection {
		m, err := message.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"` + path + `"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		return s.Ingress(m).Rejection
	}
	if rej := call("sub_out/secret"); rej != nil {
		t.Fatalf("before any roots answer, sub_out/secret is a missing name under the root: %+v", rej)
	}
	answer := `{"jsonrpc":"2.0","id":0,"result":{"roots":[` +
		`{"uri":"file:///","name":"everything"},` +
		`{"uri":"file://` + root + `/sub","name":"project"},` +
		`{"uri":"file://` + root + `/link_out"},` +
		`{"uri":"file://` + root + `/../outside"},` +
		`{"uri":"file://evil.example/share"},` +
		`{"uri":"https://example.com/"},` +
		`{"uri":"` + root + `"},` +
		`{"name":"no uri"},` +
		`{"uri":"file://localhost` + root + `"}]}}`
	m, err := message.Parse([]byte(answer))
	if err != nil {
		t.Fatal(err)
	}
	out, rewrites, err := s.RootsAnswer(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":0,"result":{"roots":[{"uri":"file://` + root + `/sub","name":"project"},{"uri":"file://localhost` + root + `"}]}}`
	if string(out) != want {
		t.Fatalf("answer relayed as\n%s\nwant\n%s", out, want)
	}
	if len(rewrites) != 7 || rewrites[0].Field != "result.roots[0]" {
		t.Fatalf("rewrites %+v", rewrites)
	}
	for _, rw := range rewrites {
		if strings.Contains(rw.Field, root) {
			t.Fatalf("a rewrite names the root: %+v", rw)
		}
	}
	// The server now reads relative paths against ROOT/sub too.
	if rej := call("sub_out/secret"); rej == nil || rej.ErrorCode != "INPUT_REJECTED_PATH_SCOPE" {
		t.Fatalf("sub_out/secret read from the client's root sub/ leads out: %+v", rej)
	}
	if rej := call("a.go"); rej != nil {
		t.Fatalf("a.go: %+v", rej)
	}

	// An answer whose roots are all inside is relayed byte for byte.
	same := `{"jsonrpc":"2.0","id":1,"result":{"roots":[{"uri":"file://` + root + `"}]}}`
	m, _ = message.Parse([]byte(same))
	if out, rw, err := s.RootsAnswer(m); err != nil || string(out) != same || rw != nil {
		t.Fatalf("clean answer: %s %v %v", out, rw, err)
	}
	// Unreadable answers are refused; error answers pass.
	for _, bad := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"roots":{"uri":"file:///"}}}`,
	} {
		m, _ = message.Parse([]byte(bad))
		if _, _, err := s.RootsAnswer(m); err != ErrBadRootsAnswer {
			t.Errorf("%s: %v", bad, err)
		}
	}
	errAnswer := `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no roots"}}`
	m, _ = message.Parse([]byte(errAnswer))
	if out, _, err := s.RootsAnswer(m); err != nil || string(out) != errAnswer {
		t.Fatalf("error answer: %s %v", out, err)
	}

	// Without path_scope rules there is nothing to hold roots to.
	s2 := Baseline().NewSession()
	m, _ = message.Parse([]byte(answer))
	if out, _, err := s2.RootsAnswer(m); err != nil || string(out) != string(m.Raw) {
		t.Fatalf("baseline: %s %v", out, err)
	}
}

// TestServerArgvBases: server-filesystem reads a relative path against the
// directories it was started with. Started with a directory wider than the
// policy's root, it reads outside/secret as BASE/outside/secret, so the
// directories of the server's argv are bases for relative paths too.
func TestServerArgvBases(t *testing.T) {
	vars := pathFixture(t)
	root, base := vars["ROOT"], vars["BASE"]
	p, err := Load("argv.yaml", []byte(`
version: 1
ingress:
  - fields: [path]
    check: path_scope
    roots: ["${ROOT}"]
`), func(n string) (string, bool) { v, ok := vars[n]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	call := func(s *Session, path string) *message.Rejection {
		m, err := message.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"` + path + `"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		return s.Ingress(m).Rejection
	}
	wide := p.NewSession()
	wide.SetServerArgv([]string{"mcp-server-filesystem", base})
	for _, path := range []string{"outside/secret", "./outside/secret", "root_x/a", "file.txt"} {
		if rej := call(wide, path); rej == nil || rej.ErrorCode != "INPUT_REJECTED_PATH_SCOPE" {
			t.Errorf("server started with %s: relative %q got %+v, want INPUT_REJECTED_PATH_SCOPE", base, path, rej)
		}
	}
	if rej := call(wide, root+"/file.txt"); rej != nil {
		t.Errorf("absolute path inside the root refused: %+v", rej)
	}

	same := p.NewSession()
	same.SetServerArgv([]string{"npx", "-y", "@modelcontextprotocol/server-filesystem", root, "--flag", "word"})
	for _, path := range []string{"file.txt", "sub/a.go", "new/dir/x"} {
		if rej := call(same, path); rej != nil {
			t.Errorf("server started with the root: relative %q refused: %+v", path, rej)
		}
	}
	if rej := call(same, "link_out/secret"); rej == nil {
		t.Error("relative path through a link that leads out passed")
	}

	narrow := p.NewSession()
	narrow.SetServerArgv([]string{"srv", filepath.Join(root, "sub")})
	if rej := call(narrow, "link_up/outside/secret"); rej == nil {
		t.Error("server started with ROOT/sub: link_up (a link to BASE) read from there passed")
	}
}

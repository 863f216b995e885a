package policy

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

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

// TestClientRoots: a path_scope rule with client_roots: true and no roots
// refuses every path until the client names a directory; then the
// directories in the server's command line (as the agent expanded them)
// and the roots of the client's answer are its roots, with symlinks out
// of them, .. escapes and siblings still refused; "/" is never one; a
// later answer replaces the earlier one.
func TestClientRoots(t *testing.T) {
	vars := pathFixture(t)
	root, outside := vars["ROOT"], vars["OUTSIDE"]
	p, err := Load("client.yaml", []byte(`
version: 1
ingress:
  - fields: [path]
    check: path_scope
    client_roots: true
`), func(n string) (string, bool) { v, ok := vars[n]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	call := func(s *Session, path string) *message.Rejection {
		t.Helper()
		m, err := message.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":` + strconv.Quote(path) + `}}}`))
		if err != nil {
			t.Fatal(err)
		}
		return s.Ingress(m).Rejection
	}
	answer := func(s *Session, uris ...string) []byte {
		t.Helper()
		var roots []string
		for _, u := range uris {
			roots = append(roots, `{"uri":`+strconv.Quote(u)+`}`)
		}
		m, err := message.Parse([]byte(`{"jsonrpc":"2.0","id":0,"result":{"roots":[` + strings.Join(roots, ",") + `]}}`))
		if err != nil {
			t.Fatal(err)
		}
		out, _, err := s.RootsAnswer(m)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	refused := func(s *Session, paths ...string) {
		t.Helper()
		for _, path := range paths {
			if rej := call(s, path); rej == nil || rej.ErrorCode != "INPUT_REJECTED_PATH_SCOPE" {
				t.Errorf("%s: %+v, want INPUT_REJECTED_PATH_SCOPE", path, rej)
			}
		}
	}
	allowed := func(s *Session, paths ...string) {
		t.Helper()
		for _, path := range paths {
			if rej := call(s, path); rej != nil {
				t.Errorf("%s: refused %+v", path, rej)
			}
		}
	}

	s := p.NewSession()
	refused(s, root+"/file.txt", "file.txt", "/etc/hostname")
	if rej := call(s, root+"/file.txt"); rej == nil || !strings.Contains(rej.Remediation, "roots/list") {
		t.Errorf("before any directory, the refusal should say the client named none: %+v", rej)
	}
	// The client's answer: its roots are kept as they came, "/" removed.
	out := answer(s, "file:///", "file://"+root)
	if want := `{"jsonrpc":"2.0","id":0,"result":{"roots":[{"uri":"file://` + root + `"}]}}`; string(out) != want {
		t.Errorf("answer relayed as %s, want %s", out, want)
	}
	allowed(s, root+"/file.txt", "file.txt", root+"/sub/a.go", "file://"+root+"/sub/a.go")
	refused(s, "/etc/hostname", outside+"/secret", root+"/link_out/secret", root+"/../outside/secret", root+"_x/y", "link_secret")
	if rej := call(s, "/etc/hostname"); rej == nil || !strings.Contains(rej.Remediation, "Allowed roots: "+root+".") {
		t.Errorf("the refusal should name the client's root: %+v", rej)
	}
	// A later answer replaces the roots.
	answer(s, "file://"+root+"/sub")
	allowed(s, root+"/sub/a.go")
	refused(s, root+"/file.txt")
	// Only "/": nothing is a root.
	answer(s, "file:///")
	refused(s, root+"/sub/a.go", "/etc/hostname")

	// The server's command line as the agent started it.
	s = p.NewSession()
	s.SetServerArgv([]string{"server", root + "/sub"})
	allowed(s, root+"/sub/a.go", "a.go")
	refused(s, root+"/file.txt", "/etc/hostname")
	s = p.NewSession()
	s.SetServerArgv([]string{"server", "/"})
	refused(s, "/etc/hostname", root+"/file.txt")
	if w := p.RootWarnings([]string{"server", "/"}); len(w) != 1 || !strings.Contains(w[0], "never makes a root") {
		t.Errorf("RootWarnings for /: %q", w)
	}
	if w := p.RootWarnings([]string{"server", root}); len(w) != 0 {
		t.Errorf("RootWarnings for a directory client_roots takes: %q", w)
	}
}

// TestClientRootsWithRoots: client_roots adds to the rule's own roots;
// the schema accepts either member and refuses neither.
func TestClientRootsWithRoots(t *testing.T) {
	vars := pathFixture(t)
	root := vars["ROOT"]
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	p, err := Load("both.yaml", []byte("version: 1\ningress:\n  - fields: [path]\n    check: path_scope\n    roots: [\"${ROOT}/sub\"]\n    client_roots: true\n"), lookup)
	if err != nil {
		t.Fatal(err)
	}
	s := p.NewSession()
	m, _ := message.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"` + root + `/sub/a.go"}}}`))
	if rej := s.Ingress(m).Rejection; rej != nil {
		t.Errorf("a path under the rule's own root before any client root: %+v", rej)
	}
	for _, bad := range []string{
		"version: 1\ningress:\n  - fields: [path]\n    check: path_scope\n",
		"version: 1\ningress:\n  - fields: [path]\n    check: path_scope\n    client_roots: false\n",
		"version: 1\ningress:\n  - fields: [path]\n    check: path_scope\n    client_roots: yes please\n",
	} {
		if _, err := Load("bad.yaml", []byte(bad), lookup); err == nil {
			t.Errorf("loaded %q", bad)
		}
	}
}

// clientRootsPolicy is a policy whose one rule is a path_scope with
// client_roots: true and no roots of its own, over pathFixture's tree.
func clientRootsPolicy(tb testing.TB) (*Policy, map[string]string) {
	tb.Helper()
	vars := pathFixture(tb)
	p, err := Load("client.yaml", []byte("version: 1\ningress:\n  - fields: [path]\n    check: path_scope\n    client_roots: true\n"),
		func(n string) (string, bool) { v, ok := vars[n]; return v, ok })
	if err != nil {
		tb.Fatal(err)
	}
	return p, vars
}

// TestClientRootsNeverTheWholeTree: under client_roots a root that is
// "/" by a link (/proc/self/root, a link in the workspace) is refused as
// "/" is, in a roots/list answer and in a retried request.
func TestClientRootsNeverTheWholeTree(t *testing.T) {
	t.Parallel()
	p, vars := clientRootsPolicy(t)
	link := filepath.Join(vars["ROOT"], "to_slash")
	if err := os.Symlink("/", link); err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{"file:///", "file://" + link, "file:///proc/self/root"} {
		s := p.NewSession()
		m, err := message.Parse([]byte(`{"jsonrpc":"2.0","id":"x","result":{"roots":[{"uri":"` + uri + `"}]}}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, rewrites, err := s.RootsAnswer(m); err != nil || len(rewrites) != 1 {
			t.Errorf("roots/list answer %s: %d rewrites, %v; want it removed", uri, len(rewrites), err)
		}
		retry, err := message.Parse([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read","arguments":{"path":"/etc/hostname"},"inputResponses":{"r":{"roots":[{"uri":"` + uri + `"}]}}}}`))
		if err != nil {
			t.Fatal(err)
		}
		if rej := s.Ingress(retry).Rejection; rej == nil || rej.Field != "inputResponses" {
			t.Errorf("a retried request whose root is %s: %+v", uri, rej)
		}
	}
}

// TestRootsAnswerBound: a roots/list answer names at most
// maxClientRoots roots; one past that is refused whole rather than
// built into a path_scope root by root (16000 roots held the session
// for seconds).
func TestRootsAnswerBound(t *testing.T) {
	t.Parallel()
	p, vars := clientRootsPolicy(t)
	root := vars["ROOT"]
	answer := func(n int) error {
		rs := []string{`{"uri":"file://` + root + `/sub"}`}
		for i := 1; i < n; i++ {
			rs = append(rs, `{"uri":"file:///r/`+strconv.Itoa(i)+`"}`)
		}
		m, err := message.Parse([]byte(`{"jsonrpc":"2.0","id":"x","result":{"roots":[` + strings.Join(rs, ",") + `]}}`))
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = p.NewSession().RootsAnswer(m)
		return err
	}
	if err := answer(maxClientRoots); err != nil {
		t.Errorf("an answer with %d roots: %v", maxClientRoots, err)
	}
	if err := answer(maxClientRoots + 1); !errors.Is(err, ErrTooManyRoots) {
		t.Errorf("an answer with %d roots: %v, want ErrTooManyRoots", maxClientRoots+1, err)
	}
}

// TestClientRootsInRetriedRequest: a 2026-07-28 client never
// initializes and is never asked roots/list on its own: it answers the
// server's roots input request in the retried request's
// params.inputResponses. Under client_roots: true those roots hold for
// that request (absolute and relative paths inside them pass, others
// are refused and the refusal names them); "/" is never one; the next
// request without them is judged on what the session knows.
func TestClientRootsInRetriedRequest(t *testing.T) {
	p, vars := clientRootsPolicy(t)
	root, outside := vars["ROOT"], vars["OUTSIDE"]
	call := func(s *Session, path string, roots ...string) *message.Rejection {
		t.Helper()
		params := `"name":"read","arguments":{"path":` + strconv.Quote(path) + `},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
		if len(roots) > 0 {
			var rs []string
			for _, r := range roots {
				rs = append(rs, `{"uri":`+strconv.Quote(r)+`}`)
			}
			params += `,"inputResponses":{"roots-1":{"roots":[` + strings.Join(rs, ",") + `]}},"requestState":"opaque"`
		}
		m, err := message.Parse([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{` + params + `}}`))
		if err != nil {
			t.Fatal(err)
		}
		return s.Ingress(m).Rejection
	}
	s := p.NewSession()
	sub := "file://" + root + "/sub"
	for _, path := range []string{root + "/sub/a.go", "a.go", "file://" + root + "/sub/a.go"} {
		if rej := call(s, path, sub); rej != nil {
			t.Errorf("%s with the request's root %s: %+v", path, sub, rej)
		}
	}
	for _, path := range []string{root + "/file.txt", "/etc/hostname", outside + "/secret", root + "/sub/../file.txt"} {
		rej := call(s, path, sub)
		if rej == nil || rej.ErrorCode != "INPUT_REJECTED_PATH_SCOPE" {
			t.Errorf("%s with the request's root %s: %+v, want INPUT_REJECTED_PATH_SCOPE", path, sub, rej)
		} else if !strings.Contains(rej.Remediation, "Allowed roots: "+root+"/sub.") {
			t.Errorf("the refusal should name the request's root: %+v", rej)
		}
	}
	// A link out of the request's root is refused.
	if rej := call(s, root+"/link_out/secret", "file://"+root); rej == nil || rej.ErrorCode != "INPUT_REJECTED_PATH_SCOPE" {
		t.Errorf("a link out of the request's root: %+v", rej)
	}
	if rej := call(s, "/etc/hostname", "file:///"); rej == nil || rej.Field != "inputResponses" {
		t.Errorf("a retried request whose root is /: %+v", rej)
	}
	// A bounded number of roots: each is a root of the request's
	// path_scope, searched for each of its paths.
	many := []string{sub}
	for i := range maxClientRoots {
		many = append(many, "file://"+root+"/sub/"+strconv.Itoa(i))
	}
	if rej := call(s, root+"/sub/a.go", many[:maxClientRoots]...); rej != nil {
		t.Errorf("a request with %d roots: %+v", maxClientRoots, rej)
	}
	if rej := call(s, root+"/sub/a.go", many...); rej == nil || rej.Field != "inputResponses" || !strings.Contains(rej.Error, "more than") {
		t.Errorf("a request with %d roots: %+v", len(many), rej)
	}
	// The roots held for their request only.
	if rej := call(s, root+"/sub/a.go"); rej == nil || !strings.Contains(rej.Remediation, "roots/list") {
		t.Errorf("a later request without roots, before any directory is known: %+v", rej)
	}
	// With a directory from the command line, the request's roots add to it.
	s = p.NewSession()
	s.SetServerArgv([]string{"server", root + "/sub"})
	if rej := call(s, outside+"/secret", "file://"+outside); rej != nil {
		t.Errorf("a path under the request's root: %+v", rej)
	}
	if rej := call(s, "a.go", "file://"+outside); rej != nil {
		t.Errorf("a path under the command line's directory: %+v", rej)
	}
	if rej := call(s, outside+"/secret"); rej == nil {
		t.Error("the request's root outlived its request")
	}
}

// TestAskRootsFirstAttempt: a 2026-07-28 client's first attempt, refused
// by a client_roots rule only because no root covers its path yet, is
// answered with an input_required result asking for the client's roots
// when the request declares the roots capability; never without the
// capability, never for a retried request (no loop), a rule without
// client_roots, another check's refusal, or in audit mode.
func TestAskRootsFirstAttempt(t *testing.T) {
	vars := pathFixture(t)
	root := vars["ROOT"]
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	load := func(text string) *Policy {
		t.Helper()
		p, err := Load("p.yaml", []byte(text), lookup)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	client := load("version: 1\ningress:\n  - fields: [path]\n    check: path_scope\n    client_roots: true\n  - fields: [cmd]\n    check: shell_metachars\n")
	fixed := load("version: 1\ningress:\n  - fields: [path]\n    check: path_scope\n    roots: [\"${ROOT}/sub\"]\n")
	audit := load("version: 1\nmode: audit\ningress:\n  - fields: [path]\n    check: path_scope\n    client_roots: true\n")
	completion := load("version: 1\ningress:\n  - methods: [completion/complete]\n    tools: [read]\n    fields: [path]\n    check: path_scope\n    client_roots: true\n")
	caps := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}}}`
	verdict := func(p *Policy, params string) Verdict {
		t.Helper()
		method := "tools/call"
		if strings.Contains(params, `"ref"`) {
			method = "completion/complete"
		}
		m, err := message.Parse([]byte(`{"jsonrpc":"2.0","id":"c-1","method":"` + method + `","params":{` + params + `}}`))
		if err != nil {
			t.Fatal(err)
		}
		return p.NewSession().Ingress(m)
	}
	read := `"name":"read","arguments":{"path":"` + root + `/file.txt"}`
	v := verdict(client, read+","+caps)
	if !v.AskRoots || v.Rejection != nil {
		t.Fatalf("the first attempt: %+v, want AskRoots", v)
	}
	want := `{"jsonrpc":"2.0","id":"c-1","result":{"resultType":"input_required","inputRequests":{"mcpguard-roots":{"method":"roots/list","params":{}}}}}`
	if got := string(v.Reply([]byte(`"c-1"`))); got != want {
		t.Errorf("reply %s, want %s", got, want)
	}
	for name, c := range map[string]struct {
		p      *Policy
		params string
	}{
		"no roots capability":     {client, read + `,"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}`},
		"no _meta":                {client, read},
		"a retried request":       {client, read + "," + caps + `,"inputResponses":{"mcpguard-roots":{"roots":[{"uri":"file://` + root + `/sub"}]}}`},
		"a retry without roots":   {client, read + "," + caps + `,"inputResponses":{"e1":{"action":"decline"}}`},
		"a fixed root":            {fixed, read + "," + caps},
		"another check":           {client, `"name":"run","arguments":{"cmd":"ls; rm -rf ~"},` + caps},
		"a request never retried": {completion, `"ref":{"type":"ref/prompt","name":"read"},"argument":{"name":"path","value":"` + root + `/file.txt"},` + caps},
	} {
		if v := verdict(c.p, c.params); v.AskRoots || v.Rejection == nil {
			t.Errorf("%s: %+v, want a refusal", name, v)
		}
	}
	if v := verdict(audit, read+","+caps); v.AskRoots || v.Rejection == nil || !v.Audit {
		t.Errorf("audit mode: %+v, want the refusal logged only", v)
	}
}

// FuzzRequestRoots: a client_roots rule judging a 2026-07-28 retried
// request with the roots it carries. Whatever the path and the root
// URI, a request that passes carried a file: root other than "/", and a
// plain absolute path that passes lies inside that root; the verdict is
// the same twice, and a fresh session never keeps the request's root.
func FuzzRequestRoots(f *testing.F) {
	p, vars := clientRootsPolicy(f)
	root := vars["ROOT"]
	for _, seed := range [][2]string{
		{root + "/file.txt", "file://" + root}, {"file.txt", "file://" + root}, {"/etc/passwd", "file:///"},
		{root + "/../outside/secret", "file://" + root}, {root + "/link_out/secret", "file://" + root},
		{"/etc/passwd", "file://localhost/etc"}, {root + "/sub/a.go", "file://" + root + "/sub/../sub"},
		{"~/x", "file://" + root}, {root + "%2f..%2fx", "file://" + root}, {"/etc/passwd", "file:///etc/../"},
		{"/etc/passwd", "file:////"}, {"/etc/passwd", "file:///%65tc"}, {"a", ""},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, path, uri string) {
		params := map[string]any{"name": "read", "arguments": map[string]any{"path": path},
			"inputResponses": map[string]any{"r": map[string]any{"roots": []any{map[string]any{"uri": uri}}}}}
		b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
		if err != nil {
			return
		}
		m, err := message.Parse(b)
		if err != nil {
			return
		}
		s := p.NewSession()
		v := s.Ingress(m)
		if again := s.Ingress(m); !reflect.DeepEqual(v, again) {
			t.Fatalf("%s: two verdicts %+v, %+v", b, v.Rejection, again.Rejection)
		}
		if v.Rejection != nil || v.AskRoots {
			return
		}
		dir, ok := rootPath(uri)
		if !ok || dir == "/" {
			t.Fatalf("%s passed with the root %q", b, uri)
		}
		if strings.HasPrefix(path, "/") && !strings.ContainsAny(path, "%~\\") {
			if c := filepath.Clean(path); c != dir && !strings.HasPrefix(c, dir+"/") {
				t.Fatalf("%s passed: %s is outside the root %s", b, c, dir)
			}
		}
		plain, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call",
			"params": map[string]any{"name": "read", "arguments": map[string]any{"path": path}}})
		if m2, err := message.Parse(plain); err == nil {
			if v := s.Ingress(m2); v.Rejection == nil {
				t.Fatalf("%s passed without the request's root", plain)
			}
		}
	})
}

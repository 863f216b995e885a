package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/rules/codes"
)

func TestLoadReportsWhereAndWhat(t *testing.T) {
	env := func(name string) (string, bool) {
		if name == "HOME" {
			return "/home/me", true
		}
		return "", false
	}
	cases := []struct {
		name, src, want string
	}{
		{"not yaml", "version: 1\ntools: [unclosed\n", "bad.yaml:2:"},
		{"missing version", "server: x\n", "bad.yaml:1:1: "},
		{"wrong version", "version: 2\n", "bad.yaml:1:10: version"},
		{"unknown key", "version: 1\nmodes: audit\n", "bad.yaml:"},
		{"bad mode", "version: 1\nmode: lenient\n", "bad.yaml:2:7: mode: `lenient` is not a valid mode; allowed: enforce, audit"},
		{"unknown top key", "version: 1\nunknown_tool: deny\n", "bad.yaml:2:15: unknown key `unknown_tool`; did you mean `unknown_tools`?"},
		{"typo in enum", "version: 1\nreject_as: errors\n", "bad.yaml:2:12: reject_as: `errors` is not a valid reject_as; allowed: result, error (did you mean `error`?)"},
		{"typo in tool setting", "version: 1\ntools:\n  a: denny\n", "bad.yaml:3:6: tools.a: `denny` is not a valid tool setting; allowed: allow, deny (did you mean `deny`?), or a mapping of action, labels, schema, secrets, server_schema"},
		{"typo in check", "version: 1\ningress:\n  - fields: [a]\n  - fields: [p]\n    check: path_scop\n", "bad.yaml:3:5: ingress[0]: missing key `check`; one of "},
		{"key of another check", "version: 1\ningress:\n  - fields: [a]\n    check: control_chars\n    long: [--x]\n", "bad.yaml:5:5: ingress[0]: `long` does not apply to check control_chars (it is a key of dangerous_flags)"},
		{"flags without flags", "version: 1\ningress:\n  - fields: [a]\n    check: dangerous_flags\n", "bad.yaml:3:5: ingress[0]: check dangerous_flags needs `long` or `short_prefixes`"},
		{"typo in rule key", "version: 1\ningress:\n  - fields: [a]\n    chek: control_chars\n", "bad.yaml:3:5: ingress[0]: missing key `check`"},
		{"typo in method", "version: 1\ningress:\n  - fields: [a]\n    check: control_chars\n    methods: [tools/cal]\n", "bad.yaml:5:15: ingress[0].methods[0]: `tools/cal` is not a valid method; allowed: tools/call, prompts/get, resources/read, resources/subscribe, resources/unsubscribe, completion/complete (did you mean `tools/call`?)"},
		{"typo in egress key", "version: 1\negress:\n  - fields: [a]\n    canonicalise: free_text\n    max_byte: 3\n", "bad.yaml:5:15: egress[0]: unknown key `max_byte`; did you mean `max_bytes`?"},
		{"bad check", "version: 1\ningress:\n  - fields: [a]\n    check: nope\n", "bad.yaml:4:12: ingress[0].check: `nope` is not a valid check; allowed: "},
		{"pattern without pattern", "version: 1\ningress:\n  - fields: [a]\n    check: pattern\n", "bad.yaml:3:5: ingress[0]: missing key `pattern` (check pattern needs it)"},
		{"bad regexp", "version: 1\ningress:\n  - fields: [a]\n    check: pattern\n    pattern: '(['\n", "bad.yaml:3:5: ingress[0]: pattern:"},
		{"bad selector", "version: 1\ningress:\n  - fields: ['a[x]']\n    check: control_chars\n", "bad.yaml:3:5: ingress[0]: selector"},
		{"unset variable", "version: 1\ningress:\n  - fields: [p]\n    check: path_scope\n    roots: ['${NOPE}/src']\n", "bad.yaml:3:5: ingress[0]: path_scope: roots[0]: ${NOPE} is not set"},
		{"duplicate key", "version: 1\nmode: audit\nmode: enforce\n", "bad.yaml:3:1:"},
		{"alias", "version: 1\nx: &a [1]\ny: *a\n", "bad.yaml:"},
		{"stray key in rule", "version: 1\ningress:\n  - fields: [a]\n    check: control_chars\n    long: [--x]\n", "bad.yaml:"},
		{"max_bytes on path", "version: 1\negress:\n  - fields: [a]\n    canonicalise: path\n    max_bytes: 5\n", "bad.yaml:3:5: egress[0]: max_bytes applies to free_text only"},
		{"schema with network ref", "version: 1\ntools:\n  t:\n    schema: {$ref: 'https://example.com/x.json'}\n", "bad.yaml:4:5: tools.t.schema:"},
		{"url scheme without a host", "version: 1\ningress:\n  - fields: [u]\n    check: url\n    schemes: [file]\n", "bad.yaml:"},
		{"url host glob in upper case", "version: 1\ningress:\n  - fields: [u]\n    check: url\n    allow_hosts: [Example.com]\n", "bad.yaml:"},
		{"url bad glob", "version: 1\ningress:\n  - fields: [u]\n    check: url\n    deny_hosts: ['[']\n", "bad.yaml:3:5: ingress[0]: url: host glob"},
		{"url key on another check", "version: 1\ningress:\n  - fields: [u]\n    check: control_chars\n    deny_private: true\n", "bad.yaml:"},
		{"duration max zero", "version: 1\ningress:\n  - fields: [t]\n    check: duration\n    max: 0s\n", "bad.yaml:3:5: ingress[0]: duration: max"},
		{"duration max not a duration", "version: 1\ningress:\n  - fields: [t]\n    check: duration\n    max: forever\n", "bad.yaml:"},
		{"short_with_value on another check", "version: 1\ningress:\n  - fields: [t]\n    check: shell_metachars\n    short_with_value: [-r]\n", "bad.yaml:"},
		{"two documents", "version: 1\n---\nversion: 1\n", "bad.yaml:1:1: a policy file holds exactly one YAML document"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load("bad.yaml", []byte(c.src), env)
			if err == nil {
				t.Fatal("loaded")
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("error %q, want prefix %q", err, c.want)
			}
		})
	}
}

func TestLoadGood(t *testing.T) {
	p, err := Load("good.yaml", []byte(`
version: 1
server: fs
mode: audit
unknown_tools: deny
reject_as: error
tools:
  "*": {server_schema: enforce}
  read: allow
  "git_*": allow
  rm: deny
ingress:
  - fields: [path]
    check: path_scope
    roots: ["${HOME}/src"]
`), func(string) (string, bool) { return "/home/me", true })
	if err != nil {
		t.Fatal(err)
	}
	if p.Server != "fs" || p.Mode != Audit || !p.DenyUnknown || !p.RejectAsError {
		t.Errorf("%+v", p)
	}
	for name, denied := range map[string]bool{"read": false, "git_log": false, "rm": true, "other": true} {
		if p.Denied(name) != denied {
			t.Errorf("Denied(%q) = %v", name, !denied)
		}
	}
}

// TestPathScopeProtectsOwnFiles: an injected agent that can write files
// through a guarded file server must not rewrite the policy or lock file
// that guards it (in force from the next start or SIGHUP), under any
// spelling of their path; other files in the same root stay writable.
func TestPathScopeProtectsOwnFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	text := "version: 1\npins: fs.lock.yaml\ningress:\n  - fields: [path]\n    check: path_scope\n    roots: [\"" + dir + "\"]\n"
	if err := os.WriteFile(filepath.Join(dir, "fs.yaml"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	p, err := LoadFileWithoutLock(filepath.Join(dir, "fs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := p.NewSession()
	call := func(path string) *message.Rejection {
		args, _ := json.Marshal(map[string]string{"path": path, "content": "version: 1\n"})
		return s.Ingress(toolCall(t, 1, "write_file", string(args))).Rejection
	}
	for _, path := range []string{dir + "/fs.yaml", dir + "/./fs.yaml", dir + "/link/fs.yaml", dir + "//fs.lock.yaml", "fs.yaml"} {
		if rej := call(path); rej == nil || rej.ErrorCode != codes.PathScope {
			t.Errorf("write_file %s: %+v, want a path_scope refusal", path, rej)
		}
	}
	if rej := call(dir + "/notes.txt"); rej != nil {
		t.Errorf("write_file notes.txt refused: %s", rej.Error)
	}
}

// TestClientRootsProtectOwnFiles: a root the client names (the server's
// command line) holding the policy does not open the policy to writes.
func TestClientRootsProtectOwnFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	text := "version: 1\ningress:\n  - fields: [path]\n    check: path_scope\n    client_roots: true\n"
	if err := os.WriteFile(filepath.Join(dir, "fs.yaml"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := LoadFileWithoutLock(filepath.Join(dir, "fs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []*Policy{p, p.WithMode(Enforce)} {
		s := q.NewSession()
		s.SetServerArgv([]string{"npx", "@modelcontextprotocol/server-filesystem", dir})
		for path, refused := range map[string]bool{dir + "/fs.yaml": true, dir + "/notes.txt": false} {
			args, _ := json.Marshal(map[string]string{"path": path})
			if rej := s.Ingress(toolCall(t, 1, "write_file", string(args))).Rejection; (rej != nil) != refused {
				t.Errorf("write_file %s: %+v, want refused %v", path, rej, refused)
			}
		}
	}
}

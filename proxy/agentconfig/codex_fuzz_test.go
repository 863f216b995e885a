package agentconfig

import (
	"os"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// FuzzCodexEdits: whatever Codex config parses, wrap writes TOML that
// still parses, runs mcpguard with the server's argv after "--", and
// never panics; unwrap of that gives the server's argv back.
func FuzzCodexEdits(f *testing.F) {
	if b, err := os.ReadFile("testdata/home/.codex/config.toml"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("[mcp_servers.a]\ncommand = \"x\"\nargs = []\n"))
	f.Add([]byte("[mcp_servers.a]\ncommand = \"x\" # c\nargs = [ # c\n \"a\", # d\n]\n"))
	f.Add([]byte("[mcp_servers.\"a.b\"]\ncommand = '''x'''\n"))
	loc := Location{Client: Codex, Path: "config.toml", Scope: "user", Key: "mcp_servers", Format: "toml"}
	isGuard := IsGuardCommand(testExe)
	f.Fuzz(func(t *testing.T, src []byte) {
		c, err := parseReadOnly(loc, src, isGuard)
		if err != nil {
			return
		}
		before := map[string][]string{}
		for i := range c.Servers {
			s := &c.Servers[i]
			if s.Kind != Unguarded {
				continue
			}
			if err := c.guardTOML(s, testExe, "", ""); err != nil {
				continue
			}
			before[s.Name] = s.Argv
		}
		wrapped := c.Bytes()
		var doc struct {
			Servers map[string]struct {
				Command string   `toml:"command"`
				Args    []string `toml:"args"`
			} `toml:"mcp_servers"`
		}
		if toml.Unmarshal(src, &doc) != nil {
			return // a shape this check does not decode (go-toml matches names without case)
		}
		doc.Servers = nil
		if err := toml.Unmarshal(wrapped, &doc); err != nil {
			t.Fatalf("wrapped TOML does not parse: %v\n%q\nfrom\n%q", err, wrapped, src)
		}
		for name, argv := range before {
			e := doc.Servers[name]
			got := append([]string{e.Command}, e.Args...)
			want := append([]string{testExe, "--"}, argv...)
			if len(got) != len(want) {
				t.Fatalf("%s: %q, want %q\n%q", name, got, want, wrapped)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s: %q, want %q\n%q", name, got, want, wrapped)
				}
			}
		}
		w, err := parseReadOnly(loc, wrapped, isGuard)
		if err != nil {
			t.Fatalf("wrapped file does not load: %v", err)
		}
		for i := range w.Servers {
			s := &w.Servers[i]
			if _, ok := before[s.Name]; ok {
				if err := w.unguardTOML(s); err != nil {
					t.Fatalf("unwrap %s: %v\n%q", s.Name, err, wrapped)
				}
			}
		}
		doc.Servers = nil
		if err := toml.Unmarshal(w.Bytes(), &doc); err != nil {
			t.Fatalf("unwrapped TOML does not parse: %v\n%q", err, w.Bytes())
		}
		for name, argv := range before {
			e := doc.Servers[name]
			got := append([]string{e.Command}, e.Args...)
			if len(got) != len(argv) {
				t.Fatalf("%s unwrapped: %q, want %q", name, got, argv)
			}
		}
	})
}

package agentconfig

import (
	"bytes"
	"os"
	"testing"
)

// FuzzYAMLEdits: whatever Continue or Goose config parses, wrap never
// panics, each entry it edits reads back as mcpguard running the entry's
// argv after "--" (applyYAML checks it, refusing otherwise), and unwrap
// of the result gives the file back byte for byte.
func FuzzYAMLEdits(f *testing.F) {
	for _, p := range []string{"testdata/home/.continue/config.yaml", "testdata/home/.config/goose/config.yaml"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, p == "testdata/home/.config/goose/config.yaml")
		}
	}
	f.Add([]byte("mcpServers:\n- name: a\n  command: x\n  args: []"), false)
	f.Add([]byte("mcpServers:\n  - name: a\n    command: 'it''s' # c\n    args:\n    # c\n    - a\n"), false)
	f.Add([]byte("extensions:\n  a: {cmd: x}\n  b:\n    cmd: \"y\\\"z\"\n    args: [\"a, b\", c]\n"), true)
	f.Fuzz(yamlRoundTrip)
}

func yamlRoundTrip(t *testing.T, src []byte, goose bool) {
	isGuard := IsGuardCommand(testExe)
	loc := Location{Client: "continue", Path: "config.yaml", Scope: "user", Key: "mcpServers", Format: "yaml"}
	if goose {
		loc.Client, loc.Key = "goose", "extensions"
	}
	c, err := parseReadOnly(loc, src, isGuard)
	if err != nil {
		return
	}
	wrapped := map[string]bool{}
	for i := range c.Servers {
		s := &c.Servers[i]
		if s.Kind == Unguarded && c.guardYAML(s, testExe, "/p/x.yaml", "") == nil {
			wrapped[s.Name] = true
		}
	}
	if len(wrapped) == 0 {
		return
	}
	w, err := parseReadOnly(loc, c.Bytes(), isGuard)
	if err != nil {
		t.Fatalf("wrapped file does not load: %v\n%q", err, c.Bytes())
	}
	for i := range w.Servers {
		s := &w.Servers[i]
		if !wrapped[s.Name] {
			continue
		}
		if s.Kind != Guarded || s.Policy != "/p/x.yaml" {
			t.Fatalf("%s reads as %+v after wrap\n%q", s.Name, s, w.Bytes())
		}
		if err := w.unguardYAML(s); err != nil {
			t.Fatalf("unwrap %s: %v\n%q\nfrom\n%q", s.Name, err, w.Bytes(), src)
		}
	}
	if !bytes.Equal(w.Bytes(), src) {
		t.Fatalf("unwrap did not restore the file:\n%q\nwant\n%q", w.Bytes(), src)
	}
}

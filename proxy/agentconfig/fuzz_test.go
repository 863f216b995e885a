package agentconfig

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tailscale/hujson"
)

// FuzzWrapRoundTrip holds wrap and unwrap to their promises on any config
// hujson parses: after wrap (with the policy at once, or added to a
// baseline entry later) every stdio entry runs the guard with its
// original argv after "--", the file still parses, and unwrap gives the
// file back byte for byte. Configs with entries guarded already (which
// unwrap would also unwrap) or with an empty args as the last member (the
// documented exception) are not judged.
func FuzzWrapRoundTrip(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/home/*/*.json")
	more, _ := filepath.Glob("testdata/home/*/*/*/*.json")
	seeds = append(append(seeds, more...), "testdata/home/.claude.json")
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"mcpServers":{"a":{"command":"x","args":[ /*c*/ "y" , ]}}}`))
	f.Add([]byte("{\"mcpServers\":{\"a\":{\"command\":\"x\",\"args\":[\n\t\"y\"]}}}"))
	f.Add([]byte(`{"mcpServers":{"a/b~c":{"args":[],"command":"\u0078"}}}`))
	f.Add([]byte(`{"mcpServers":{"a":{"command":"x", "env":{} /* end */ }}}`))
	f.Add([]byte("{\"mcpServers\":{\"a\":{\"command\":\"x\" // the command\n}}}"))
	f.Add([]byte("{\"mcpServers\":{\"a\":{\"command\":\"x\", // the command\n}}}"))
	f.Add([]byte("{\"mcpServers\":{\"a\":{\"command\":\"x\",\"args\":[ /* none */ ]}}}"))
	f.Add([]byte("{\"mcpServers\":{\"a\":{\"args\":[\n  // first\n  \"y\", // why\n  \"z\",\n],\n\"command\":\"x\"}}}"))
	isGuard := IsGuardCommand(testExe)
	f.Fuzz(func(t *testing.T, src []byte) {
		loc := Location{Client: Cursor, Key: "mcpServers", ClaudeProjects: true}
		c, err := parse(loc, src, isGuard)
		if err != nil {
			return
		}
		for _, s := range c.Servers {
			if s.Kind == Guarded || s.Kind == Unguarded && emptyArgsLast(c, s.Pointer) {
				return
			}
		}
		want := map[string][]string{}
		for i := range c.Servers {
			s := &c.Servers[i]
			if s.Kind != Unguarded {
				continue
			}
			// Both ways to a guarded entry with a policy: at once, or the
			// baseline first and the policy added by a later wrap.
			if len(src)%2 == 0 {
				if err := c.guard(s, testExe, "/p/policy.yaml", ""); err != nil {
					t.Fatalf("guard %s: %v", s.Pointer, err)
				}
			} else {
				if err := c.guard(s, testExe, "", ""); err != nil {
					t.Fatalf("guard %s: %v", s.Pointer, err)
				}
				if err := c.addPolicy(s, "/p/policy.yaml"); err != nil {
					t.Fatalf("addPolicy %s: %v", s.Pointer, err)
				}
			}
			want[s.Pointer] = s.Argv
		}
		wrapped := c.Bytes()
		w, err := parse(loc, wrapped, isGuard)
		if err != nil {
			t.Fatalf("the wrapped file does not parse: %v\n%s", err, wrapped)
		}
		for i := range w.Servers {
			s := &w.Servers[i]
			argv, ok := want[s.Pointer]
			if !ok {
				continue
			}
			if s.Kind != Guarded || !slices.Equal(s.Argv, argv) || s.Policy != "/p/policy.yaml" {
				t.Fatalf("%s after wrap: %v %q policy %q, want guarded %q\n%s", s.Pointer, s.Kind, s.Argv, s.Policy, argv, wrapped)
			}
			if err := w.unguard(s); err != nil {
				t.Fatalf("unguard %s: %v\n%s", s.Pointer, err, wrapped)
			}
		}
		if got := w.Bytes(); len(want) > 0 && !bytes.Equal(got, src) {
			t.Fatalf("unwrap did not restore the file:\n%q\nwant\n%q\nwrapped\n%q", got, src, wrapped)
		}
	})
}

func emptyArgsLast(c *Config, ptr string) bool {
	obj, err := c.entry(ptr)
	if err != nil {
		return false
	}
	i := member(obj, "args")
	if i < 0 || i != len(obj.Members)-1 {
		return false
	}
	arr, ok := obj.Members[i].Value.Value.(*hujson.Array)
	return ok && len(arr.Elements) == 0
}

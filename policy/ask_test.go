package policy

import (
	"testing"

	"github.com/mcpguard/mcpguard/policy/message"
)

func askTestPolicy(t *testing.T, ingress string) *Policy {
	t.Helper()
	p, err := Load("ask.yaml", []byte("version: 1\ntools:\n  git_push: ask\ningress:\n"+ingress), nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func askVerdict(t *testing.T, s *Session, tool, args string) Verdict {
	t.Helper()
	m, err := message.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	v := s.Ingress(m)
	if v.Ask == nil || v.Rejection != nil {
		t.Fatalf("%s %s: want an ask, got %+v", tool, args, v)
	}
	return v
}

// TestRememberScope: "allow for this session" covers later calls of the
// same tool that the same entries ask about, whatever their arguments;
// not another tool, not a call another entry also asks about; and after a
// reload, only entries that still say the same (ingress[0] may be another
// rule then).
func TestRememberScope(t *testing.T) {
	shell := "  - {tools: [run], fields: [cmd], check: shell_command, programs: [ls], action: ask}\n" +
		"  - {tools: [run], fields: [note], check: deny_pattern, pattern: secret, action: ask}\n"
	s := askTestPolicy(t, shell).NewSession()
	s.Remember(askVerdict(t, s, "run", `{"cmd":"curl x"}`).Ask)
	s.Remember(askVerdict(t, s, "git_push", `{}`).Ask)
	for _, c := range []struct {
		tool, args string
		remembered bool
	}{
		{"run", `{"cmd":"wget y"}`, true},                  // same tool, same entry, other arguments
		{"run", `{"cmd":"wget y","note":"secret"}`, false}, // a second entry asks too
		{"run", `{"note":"secret"}`, false},                // another entry
		{"git_push", `{"force":true}`, true},
		{"GIT_PUSH", `{}`, false}, // another name: the server may be another tool
	} {
		if got := askVerdict(t, s, c.tool, c.args).Ask.Remembered; got != c.remembered {
			t.Errorf("%s %s: remembered %v, want %v", c.tool, c.args, got, c.remembered)
		}
	}
	// ingress[0] becomes another rule: its approval does not carry over.
	s.Reload(askTestPolicy(t, "  - {tools: [run], fields: [cmd], check: deny_pattern, pattern: curl, action: ask}\n"))
	if askVerdict(t, s, "run", `{"cmd":"curl x"}`).Ask.Remembered {
		t.Error("an approval of the old ingress[0] allowed a call the new ingress[0] asks about")
	}
	if !askVerdict(t, s, "git_push", `{}`).Ask.Remembered {
		t.Error("the approval of tools.git_push did not survive a reload that keeps it")
	}
	// The same rule again: its approval holds.
	s.Reload(askTestPolicy(t, shell))
	if !askVerdict(t, s, "run", `{"cmd":"curl x"}`).Ask.Remembered {
		t.Error("an approval of an unchanged rule did not survive the reload")
	}
}

package policy

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"

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

// TestSameCall: an answer binds the tool and the arguments; spelling that
// changes nothing a server reads (member order, spacing, number and
// escape spelling) is the same call, any other difference is not.
func TestSameCall(t *testing.T) {
	s := askTestPolicy(t, "  []\n").NewSession()
	a := askVerdict(t, s, "git_push", `{"remote":"origin","force":false,"n":1}`).Ask
	for _, c := range []struct {
		tool, args string
		same       bool
	}{
		{"git_push", `{"remote":"origin","force":false,"n":1}`, true},
		{"git_push", `{"n":1.0,"force":false,"remote":"\u006frigin"}`, true},
		{"git_push", `{"remote":"origin","force":true,"n":1}`, false},
		{"git_push", `{"remote":"origin","force":false,"n":1,"extra":null}`, false},
		{"git_push", `{"remote":"origin","force":false}`, false},
		{"GIT_PUSH", `{"remote":"origin","force":false,"n":1}`, false},
		{"git_push", `null`, false},
		{"git_push", `{"remote":"origin","force":false,"n":1e0}`, true},
		{"git_push", `{"remote":"origin","force":false,"n":-0}`, false},
	} {
		if got := a.SameCall(c.tool, jsontext.Value(c.args)); got != c.same {
			t.Errorf("SameCall(%s, %s) = %v, want %v", c.tool, c.args, got, c.same)
		}
	}
	// Integers past 2^53 and numbers past a double's range: RFC 8785
	// rounds them to one double, a server that reads them exactly does
	// not.
	for _, c := range []struct {
		asked, retry string
		same         bool
	}{
		{`{"n":12345678901234567890}`, `{"n":12345678901234567891}`, false},
		{`{"n":12345678901234567890}`, `{"n":12345678901234567890}`, true},
		{`{"n":9007199254740993}`, `{"n":9007199254740992}`, false},
		{`{"n":9007199254740991}`, `{"n":9007199254740991.0}`, true},
		{`{"n":[1e400]}`, `{"n":[1e401]}`, false},
		{`{"n":-1e400}`, `{"n":-1.7976931348623157e308}`, false},
		{`{"a":{"n":0.5},"b":"\u00e9"}`, `{"b":"é","a":{"n":5e-1}}`, true},
		{`{"a":"x","b":1}`, `{"a":"x","b":"1"}`, false},
		{`{"a":[1,2]}`, `{"a":[1,2,3]}`, false},
	} {
		a := askVerdict(t, s, "git_push", c.asked).Ask
		if got := a.SameCall("git_push", jsontext.Value(c.retry)); got != c.same {
			t.Errorf("asked %s, SameCall(%s) = %v, want %v", c.asked, c.retry, got, c.same)
		}
	}
	none := askVerdict(t, s, "git_push", `null`).Ask
	if !none.SameCall("git_push", nil) || none.SameCall("git_push", jsontext.Value(`{}`)) {
		t.Error("null and absent arguments must be the same call, and {} another")
	}
}

// TestAnsweredNotCountedTwice: a call that asks is counted by its rate
// limit when it is asked; the 2026-07-28 retry that brings the answer is
// the same call, judged again but neither refused nor counted by the
// limit, so an approved call uses one of the allowance, not two.
func TestAnsweredNotCountedTwice(t *testing.T) {
	s := askTestPolicy(t, "  - {tools: [git_push], check: rate_limit, calls: 2, per: 1h}\n").NewSession()
	call := func() *message.Message {
		m, err := message.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"git_push","arguments":{}}}`))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for i := range 2 {
		if v := s.Ingress(call()); v.Ask == nil || v.Rejection != nil {
			t.Fatalf("asking call %d: %+v", i, v)
		}
		if v := s.IngressAnswered(call()); v.Ask == nil || v.Rejection != nil {
			t.Fatalf("answered retry %d: %+v", i, v)
		}
	}
	if v := s.Ingress(call()); v.Rejection == nil || v.Rejection.ErrorCode != "OP_RATE_LIMITED" {
		t.Fatalf("third asking call: %+v, want OP_RATE_LIMITED", v)
	}
}

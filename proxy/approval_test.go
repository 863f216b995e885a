package proxy

import (
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/rules/rawjson"
)

// TestApprovalHeldBound: an agent that fires more asking calls than
// maxHeldAsks gets that many prompts; the next call is refused at once
// (OP_APPROVAL_DENIED), never queued, and no call reaches the server.
func TestApprovalHeldBound(t *testing.T) {
	pol, err := policy.Load("p.yaml", []byte("version: 1\ntools:\n  echo: ask\n"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	agent := []string{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"a","version":"1"}}}`, `wait "id":1`}
	for i := 2; i <= maxHeldAsks+2; i++ { // ids 2 to 18: one call more than the bound
		agent = append(agent, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	}
	agent = append(agent, `wait "id":`+strconv.Itoa(maxHeldAsks+2)+`,`)
	server := []string{`wait "method":"initialize"`, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`}
	var got conformanceRun
	synctest.Test(t, func(t *testing.T) {
		got = relayScripts(t, pol, nil, steps(t, "agent", []byte(strings.Join(agent, "\n"))), steps(t, "server", []byte(strings.Join(server, "\n"))))
	})
	prompts, refused := 0, 0
	for _, l := range got.toAgent {
		switch {
		case strings.Contains(l, `"method":"elicitation/create"`):
			prompts++
		case strings.Contains(l, "OP_APPROVAL_DENIED") && strings.Contains(l, "too many calls wait"):
			refused++
		}
	}
	if prompts != maxHeldAsks || refused != 1 {
		t.Errorf("%d prompts and %d refusals for %d asking calls, want %d and 1:\n%s", prompts, refused, maxHeldAsks+1, maxHeldAsks, strings.Join(got.toAgent, "\n"))
	}
	for _, l := range got.toServer {
		if strings.Contains(l, `"tools/call"`) {
			t.Errorf("a held call reached the server: %s", l)
		}
	}
}

// TestApprovalInlineBound: a 2026-07-28 client that fires more asking
// calls than maxHeldAsks gets that many input_required results; the
// next is refused at once (OP_APPROVAL_DENIED). A question whose
// timeout has passed is forgotten, and makes room for a new one.
func TestApprovalInlineBound(t *testing.T) {
	pol, err := policy.Load("p.yaml", []byte("version: 1\ntools:\n  echo: ask\napproval: {timeout: 5s}\n"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	call := func(id int) string {
		return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"echo","arguments":{},` +
			`"_meta":{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}}}`
	}
	var agent []string
	for id := 1; id <= maxHeldAsks+1; id++ { // one call more than the bound
		agent = append(agent, call(id), `wait "id":`+strconv.Itoa(id)+`,`)
	}
	last := maxHeldAsks + 2
	agent = append(agent, "sleep 6s", call(last), `wait "id":`+strconv.Itoa(last)+`,`)
	var got conformanceRun
	synctest.Test(t, func(t *testing.T) {
		got = relayScripts(t, pol, nil, steps(t, "agent", []byte(strings.Join(agent, "\n"))), steps(t, "server", nil))
	})
	asked, refused := 0, 0
	for _, l := range got.toAgent {
		switch {
		case strings.Contains(l, `"resultType":"input_required"`):
			asked++
		case strings.Contains(l, "OP_APPROVAL_DENIED") && strings.Contains(l, "too many calls wait") && strings.Contains(l, `"id":`+strconv.Itoa(maxHeldAsks+1)+`,`):
			refused++
		}
	}
	if asked != maxHeldAsks+1 || refused != 1 {
		t.Errorf("%d questions and %d refusals, want %d and 1 (the last asked after the others expired):\n%s", asked, refused, maxHeldAsks+1, strings.Join(got.toAgent, "\n"))
	}
	if len(got.toServer) != 0 {
		t.Errorf("the server got %q", got.toServer)
	}
}

// FuzzAnswered: whatever a request's inputResponses hold (mcpguard's
// keys escaped, repeated, among others, nested), the request answered
// returns for the server parses and carries no member whose name starts
// with mcpguard's prefix: an answer to mcpguard never reaches the server.
// An answer that counts puts back the asked call's own inputResponses.
func FuzzAnswered(f *testing.F) {
	pol, err := policy.Load("p.yaml", []byte("version: 1\ntools:\n  echo: ask\n"), func(string) (string, bool) { return "", false })
	if err != nil {
		f.Fatal(err)
	}
	asked, err := message.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":1}}}`))
	if err != nil {
		f.Fatal(err)
	}
	ask := pol.NewSession().Ingress(asked).Ask
	if ask == nil {
		f.Fatal("echo: no ask")
	}
	const k = "mcpguard-approval-00000000000000000000000000000000-"
	for _, seed := range []string{
		`{"name":"echo","arguments":{"a":1},"inputResponses":{"` + k + `1":{"action":"accept","content":{"decision":"allow_once"}}}}`,
		`{"name":"echo","arguments":{"a":2},"inputResponses":{"` + k + `1":{"action":"accept"},"s":{}}}`,
		`{"name":"echo","arguments":{"a":1},"inputRe\u0073ponses":{"mcpguard\u002dapproval-00000000000000000000000000000000-1":{}}}`,
		`{"name":"echo","inputResponses":{"` + k + `1":{},"` + k + `2":{},"x":{"` + k + `3":1}}}`,
		`{"name":"slow","inputResponses":{"` + k + `9":{"action":"decline"}},"requestState":"s"}`,
		`{"name":"echo","inputResponses":[]}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, params string) {
		m, err := message.Parse([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":` + params + `}`))
		if err != nil {
			return
		}
		a := &approvals{prefix: k, inline: map[string]*inlineAsk{
			k + "1": {ask: ask, responses: jsontext.Value(`{"s1":{"action":"decline"}}`), deadline: time.Now().Add(time.Hour)},
		}}
		out, ans, err := a.answered(m)
		if err != nil {
			return // refused whole
		}
		if ans == nil && out != m {
			t.Fatalf("no answer, but the request was rewritten")
		}
		again, err := message.Parse(out.Raw)
		if err != nil {
			t.Fatalf("the rewritten request does not parse: %v\n%s", err, out.Raw)
		}
		got := rawjson.Member(again.Params, "inputResponses")
		if ans != nil && ans.problem == "" && string(got) != `{"s1":{"action":"decline"}}` {
			t.Fatalf("an answer about the asked call, but the server gets inputResponses %s, not the asked call's own", got)
		}
		rawjson.EachMember(got, func(name string, _ jsontext.Value) error {
			if strings.HasPrefix(name, k) {
				t.Fatalf("mcpguard's key %q reaches the server: %s", name, out.Raw)
			}
			return nil
		})
	})
}

package proxy

import (
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/mcpguard/mcpguard/policy"
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

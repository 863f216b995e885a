package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// action: ask for a client of protocol revision 2026-07-28, through the
// official Go SDK client, which speaks that revision to a server that
// answers server/discover (testserver -stateless): no initialize, the
// client's capabilities in each request's _meta, and mcpguard's prompt
// carried in an input_required result that the client's multi round-trip
// driver answers with its elicitation handler and retries.

// connectStateless connects a Go SDK client with opts to testserver
// -stateless behind mcpguard with policy, logging to logFile; the server
// records every line it gets in the returned file.
func connectStateless(t *testing.T, opts *mcp.ClientOptions, policy, logFile string) (*mcp.ClientSession, string) {
	t.Helper()
	record := filepath.Join(t.TempDir(), "server.record")
	cs := connectClient(t, opts, policy, logFile, testserverBin, "-stateless", "-record", record)
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the session speaks %s, want 2026-07-28", v)
	}
	return cs, record
}

// TestApprovalStatelessSDK: the user's answer, shown the same prompt a
// 2025 client gets, decides the call; the server gets the allowed call
// without mcpguard's answer in it, and never the denied one.
func TestApprovalStatelessSDK(t *testing.T) {
	t.Parallel()
	var p prompts
	logFile := filepath.Join(t.TempDir(), "mcpguard.log")
	cs, record := connectStateless(t, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			p.add(req.Params)
			decision := "allow_once"
			if strings.Contains(req.Params.Message, "deny me") {
				decision = "deny"
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": decision}}, nil
		},
	}, askPolicy(t, "20s"), logFile)

	if got, rej := callEcho(t, cs, "hello"); rej != nil || got != "hello" {
		t.Fatalf("allowed call: got %q, %+v; want the echo", got, rej)
	}
	_, rej := callEcho(t, cs, "deny me")
	if rej == nil || rej.ErrorCode != "OP_APPROVAL_DENIED" || rej.Rule != "tools.echo" || !strings.Contains(rej.Error, "(denied;") {
		t.Fatalf("denied call: %+v, want OP_APPROVAL_DENIED", rej)
	}
	if p.count() != 2 {
		t.Fatalf("%d prompts for two asked calls", p.count())
	}
	if msg := p.msgs[0].Message; !strings.Contains(msg, "Tool: \"echo\"\n") || !strings.Contains(msg, "  text = \"hello\"\n") {
		t.Errorf("the prompt does not show the call: %q", msg)
	}
	if asked := countLogged(t, logFile, "asked", "input_required"); asked != 2 {
		t.Errorf("%d log lines say asked in an input_required result, want 2: %v", asked, approvalLog(t, logFile))
	}
	got, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, line := range strings.Split(string(got), "\n") {
		if !strings.Contains(line, `"tools/call"`) {
			continue
		}
		calls++
		if strings.Contains(line, "deny me") || strings.Contains(line, "mcpguard-approval-") || strings.Contains(line, "inputResponses") {
			t.Errorf("the server got %s", line)
		}
	}
	if calls != 1 {
		t.Errorf("the server got %d calls, want the allowed one:\n%s", calls, got)
	}
}

// TestApprovalStatelessNoElicitation: a 2026-07-28 client whose requests
// declare no elicitation gets OP_APPROVAL_REQUIRED, naming why.
func TestApprovalStatelessNoElicitation(t *testing.T) {
	t.Parallel()
	cs, _ := connectStateless(t, &mcp.ClientOptions{}, askPolicy(t, "20s"), filepath.Join(t.TempDir(), "mcpguard.log"))
	_, rej := callEcho(t, cs, "hello")
	if rej == nil || rej.ErrorCode != "OP_APPROVAL_REQUIRED" || !strings.Contains(rej.Error, "declares no form elicitation") {
		t.Fatalf("%+v, want OP_APPROVAL_REQUIRED", rej)
	}
}

// TestApprovalStatelessBinding: with the SDK's retry driver off, the
// client retries by hand. An answer approves only the call it was given
// about, and only once: a retry with other arguments is refused, and so
// is the same answer sent again with the asked arguments.
func TestApprovalStatelessBinding(t *testing.T) {
	t.Parallel()
	cs, record := connectStateless(t, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		// Declares elicitation; with the driver off, nothing calls it.
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("the elicitation handler was called with the retry driver off")
			return &mcp.ElicitResult{Action: "cancel"}, nil
		},
	}, askPolicy(t, "20s"), filepath.Join(t.TempDir(), "mcpguard.log"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	call := func(text string, responses mcp.InputResponseMap) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}, InputResponses: responses})
		if err != nil {
			t.Fatalf("call echo %q: %v", text, err)
		}
		return res
	}
	// ask returns the answer "allow once" to the prompt of a call of text.
	ask := func(text string) mcp.InputResponseMap {
		t.Helper()
		res := call(text, nil)
		if !res.NeedsInput() || len(res.InputRequests) != 1 {
			t.Fatalf("call echo %q: %s, want input_required with one prompt", text, mustJSON(res))
		}
		for key, req := range res.InputRequests {
			if e, ok := req.(*mcp.ElicitParams); !ok || !strings.Contains(e.Message, "text = \""+text+"\"") || !strings.HasPrefix(key, "mcpguard-approval-") {
				t.Fatalf("call echo %q: prompt %q: %s", text, key, mustJSON(req))
			}
			return mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_once"}}}
		}
		panic("unreachable")
	}

	answer := ask("ls")
	if _, rej := echoResult(t, call("rm -rf ~", answer)); rej == nil || rej.ErrorCode != "OP_APPROVAL_DENIED" || !strings.Contains(rej.Error, "another call") {
		t.Fatalf("a retry with other arguments: %+v, want OP_APPROVAL_DENIED", rej)
	}
	if _, rej := echoResult(t, call("ls", answer)); rej == nil || rej.ErrorCode != "OP_APPROVAL_DENIED" || !strings.Contains(rej.Error, "taken already") {
		t.Fatalf("the answer sent again: %+v, want OP_APPROVAL_DENIED", rej)
	}
	answer = ask("ls")
	if got, rej := echoResult(t, call("ls", answer)); rej != nil || got != "ls" {
		t.Fatalf("the retry the user allowed: %q, %+v", got, rej)
	}
	if got, _ := os.ReadFile(record); strings.Contains(string(got), "rm -rf") || strings.Count(string(got), `"tools/call"`) != 1 {
		t.Errorf("the server got:\n%s", got)
	}
}

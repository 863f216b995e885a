package integration

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// action: ask through the official Go SDK client's elicitation handler:
// the user's answers (allow once, allow for the session, deny, decline,
// cancel), the timeout, a client that cannot be asked, other traffic while
// a call is held, and the prompt a hostile argument makes.

// askPolicy holds every echo call for the user; slow is not asked about.
func askPolicy(t *testing.T, timeout string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ask.yaml")
	text := "version: 1\nserver: approvals\ntools:\n  echo: ask\n  slow: allow\napproval: {timeout: " + timeout + "}\n"
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// prompts records the prompts a client was shown.
type prompts struct {
	mu   sync.Mutex
	msgs []*mcp.ElicitParams
}

func (p *prompts) add(e *mcp.ElicitParams) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, e)
}

func (p *prompts) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.msgs)
}

// connectAsked connects a Go SDK client whose elicitation handler is
// answer (nil: a client without the elicitation capability) to testserver
// behind mcpguard with policy, logging to logFile.
func connectAsked(t *testing.T, answer func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error), policy, logFile string) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if answer != nil {
		opts.ElicitationHandler = answer
	}
	return connectClient(t, opts, policy, logFile, testserverBin)
}

// connectClient connects a Go SDK client with opts to server behind
// mcpguard with policy, logging to logFile.
func connectClient(t *testing.T, opts *mcp.ClientOptions, policy, logFile string, server ...string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpguard-approval", Version: "1.0.0"}, opts)
	argv := guardArgv(t, &guardOpts{Policy: policy, Log: logFile}, server...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = &testWriter{t: t, prefix: "mcpguard stderr: "}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// decide answers every prompt with an accepted form holding decision.
func decide(p *prompts, decision string) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		p.add(req.Params)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": decision}}, nil
	}
}

// askRejection is the rejection object in the text of an isError result.
type askRejection struct {
	ErrorCode   string `json:"error_code"`
	Error       string `json:"error"`
	Summary     string `json:"summary"`
	Remediation string `json:"remediation"`
	Tool        string `json:"tool"`
	Rule        string `json:"rule"`
	Retryable   bool   `json:"retryable"`
}

// callEcho calls echo with text and returns the echoed text, or the
// rejection when the call was refused.
func callEcho(t *testing.T, cs *mcp.ClientSession, text string) (string, *askRejection) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
	if err != nil {
		t.Fatalf("call echo: %v", err)
	}
	return echoResult(t, res)
}

// echoResult reads the result of an echo call: the echoed text, or the
// rejection when the call was refused.
func echoResult(t *testing.T, res *mcp.CallToolResult) (string, *askRejection) {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("call echo: %s", mustJSON(res))
	}
	body := res.Content[0].(*mcp.TextContent).Text
	if !res.IsError {
		return body, nil
	}
	var r askRejection
	if err := json.Unmarshal([]byte(body[strings.LastIndexByte(body, '\n')+1:]), &r); err != nil {
		t.Fatalf("call echo: an error result that is not a rejection: %q", body)
	}
	return "", &r
}

// approvalLog returns the decision log's lines about approvals and
// rejections of echo calls.
func approvalLog(t *testing.T, logFile string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ev := range logEvents(t, logFile) {
		if ev["event"] == "approval" || ev["event"] == "rejected" && ev["tool"] == "echo" {
			out = append(out, ev)
		}
	}
	return out
}

// countLogged counts the approval log lines with action whose message
// holds text.
func countLogged(t *testing.T, logFile, action, text string) int {
	t.Helper()
	n := 0
	for _, ev := range approvalLog(t, logFile) {
		if msg, _ := ev["message"].(string); ev["action"] == action && strings.Contains(msg, text) {
			n++
		}
	}
	return n
}

func TestApprovalAllowOnceSDK(t *testing.T) {
	t.Parallel()
	var p prompts
	logFile := filepath.Join(t.TempDir(), "mcpguard.log")
	cs := connectAsked(t, decide(&p, "allow_once"), askPolicy(t, "20s"), logFile)
	for i := range 2 {
		if got, rej := callEcho(t, cs, "hello"); rej != nil || got != "hello" {
			t.Fatalf("call %d: got %q, %+v; want the echo", i, got, rej)
		}
		if p.count() != i+1 {
			t.Fatalf("call %d: %d prompts; allow once must ask every call", i, p.count())
		}
	}
	if allowed := countLogged(t, logFile, "allowed", "allowed once"); allowed != 2 {
		t.Errorf("%d log lines say allowed once, want 2: %v", allowed, approvalLog(t, logFile))
	}
}

func TestApprovalAllowSessionSDK(t *testing.T) {
	t.Parallel()
	var p prompts
	logFile := filepath.Join(t.TempDir(), "mcpguard.log")
	cs := connectAsked(t, decide(&p, "allow_session"), askPolicy(t, "20s"), logFile)
	for i := range 3 {
		if got, rej := callEcho(t, cs, "call "+string(rune('a'+i))); rej != nil || got == "" {
			t.Fatalf("call %d: got %q, %+v; want the echo", i, got, rej)
		}
	}
	if p.count() != 1 {
		t.Errorf("%d prompts for three calls; allow for this session must ask once", p.count())
	}
	if remembered := countLogged(t, logFile, "allowed", "earlier in this session"); remembered != 2 {
		t.Errorf("%d log lines for calls allowed by the session's answer, want 2", remembered)
	}
}

func TestApprovalRefusedSDK(t *testing.T) {
	t.Parallel()
	answers := map[string]*mcp.ElicitResult{
		"deny":    {Action: "accept", Content: map[string]any{"decision": "deny"}},
		"decline": {Action: "decline"},
		"cancel":  {Action: "cancel"},
	}
	for name, answer := range answers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var p prompts
			logFile := filepath.Join(t.TempDir(), "mcpguard.log")
			cs := connectAsked(t, func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				p.add(req.Params)
				return answer, nil
			}, askPolicy(t, "20s"), logFile)
			got, rej := callEcho(t, cs, "do not run")
			if rej == nil {
				t.Fatalf("the call ran (%q) although the user answered %s", got, name)
			}
			if rej.ErrorCode != "OP_APPROVAL_DENIED" || rej.Retryable || rej.Rule != "tools.echo" || rej.Tool != "echo" {
				t.Errorf("rejection %+v, want OP_APPROVAL_DENIED for tools.echo, not retryable", rej)
			}
			// The server never saw the call: the next one is asked too.
			if _, rej := callEcho(t, cs, "again"); rej == nil || p.count() != 2 {
				t.Errorf("the second call after %s: %+v, %d prompts; want a refusal after a second prompt", name, rej, p.count())
			}
			if n := countLogged(t, logFile, "rejected", "did not approve"); n != 2 {
				t.Errorf("%d rejected lines for the two refused calls in the log", n)
			}
		})
	}
}

// TestApprovalTimeoutSDK: a user who does not answer: the call is denied
// after approval.timeout with a retryable rejection, and the client is
// told to close the prompt (the handler's context is cancelled).
func TestApprovalTimeoutSDK(t *testing.T) {
	t.Parallel()
	withdrawn := make(chan struct{})
	var p prompts
	cs := connectAsked(t, func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		p.add(req.Params)
		select {
		case <-ctx.Done():
			close(withdrawn)
			return nil, ctx.Err()
		case <-time.After(20 * time.Second):
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_once"}}, nil
		}
	}, askPolicy(t, "1s"), filepath.Join(t.TempDir(), "mcpguard.log"))
	start := time.Now()
	_, rej := callEcho(t, cs, "too late")
	if rej == nil || rej.ErrorCode != "OP_APPROVAL_TIMEOUT" || !rej.Retryable {
		t.Fatalf("rejection %+v, want a retryable OP_APPROVAL_TIMEOUT", rej)
	}
	if !strings.Contains(rej.Error, "within 1s") {
		t.Errorf("the rejection does not name the timeout: %q", rej.Error)
	}
	if waited := time.Since(start); waited > 15*time.Second {
		t.Errorf("the timeout of 1s took %v", waited)
	}
	select {
	case <-withdrawn:
	case <-time.After(10 * time.Second):
		t.Error("the client's prompt was not withdrawn (no notifications/cancelled for it)")
	}
}

// TestApprovalNoElicitationSDK: a client that did not declare elicitation
// gets a rejection that tells the user how to allow the call.
func TestApprovalNoElicitationSDK(t *testing.T) {
	t.Parallel()
	policy := askPolicy(t, "20s")
	cs := connectAsked(t, nil, policy, filepath.Join(t.TempDir(), "mcpguard.log"))
	_, rej := callEcho(t, cs, "hi")
	if rej == nil || rej.ErrorCode != "OP_APPROVAL_REQUIRED" {
		t.Fatalf("rejection %+v, want OP_APPROVAL_REQUIRED", rej)
	}
	for _, want := range []string{"elicitation", "from ask to allow", "tools.echo", filepath.Base(policy)} {
		if !strings.Contains(rej.Remediation+rej.Error, want) {
			t.Errorf("the rejection does not say %q: %+v", want, rej)
		}
	}
	if rej.Summary != "Tool call not approved by the user" {
		t.Errorf("summary %q", rej.Summary)
	}
}

// TestApprovalHeldCallBlocksNothingSDK: while a call waits for the user,
// other calls go through and are answered, and the held call completes
// once the user allows it.
func TestApprovalHeldCallBlocksNothingSDK(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	asked := make(chan struct{}, 1)
	cs := connectAsked(t, func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked <- struct{}{}
		<-release
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_once"}}, nil
	}, askPolicy(t, "30s"), filepath.Join(t.TempDir(), "mcpguard.log"))
	held := make(chan string, 1)
	go func() {
		got, rej := callEcho(t, cs, "held")
		if rej != nil {
			got = "refused: " + rej.ErrorCode
		}
		held <- got
	}()
	select {
	case <-asked:
	case <-time.After(20 * time.Second):
		t.Fatal("the user was never asked")
	}
	for i := range 5 {
		if got := callText(t, cs, "slow", map[string]any{"ms": 1}); got != "slept 1 ms" {
			t.Fatalf("call %d of slow while echo is held: %q", i, got)
		}
	}
	select {
	case got := <-held:
		t.Fatalf("the held call returned before the user answered: %q", got)
	default:
	}
	close(release)
	select {
	case got := <-held:
		if got != "held" {
			t.Errorf("the held call gave %q after the user allowed it", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the held call never completed after the user allowed it")
	}
}

// TestApprovalPromptHostileArgumentSDK: what the user reads. An argument
// value and a member name written to pass for mcpguard's own lines (a
// newline, then "mcpguard: ... approved") or to reverse the text (U+202E)
// reach the prompt quoted and escaped, on the line of their field.
func TestApprovalPromptHostileArgumentSDK(t *testing.T) {
	t.Parallel()
	var p prompts
	cs := connectAsked(t, decide(&p, "deny"), askPolicy(t, "20s"), filepath.Join(t.TempDir(), "mcpguard.log"))
	hostile := "ok\n\nmcpguard: this call is safe, approved by your administrator.\nChoose: allow for this session \u202Eevil\u202C"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": hostile, "Tool: \"x\"\nServer": 1}}); err != nil {
		t.Fatal(err)
	}
	if p.count() != 1 {
		t.Fatalf("%d prompts", p.count())
	}
	msg := p.msgs[0].Message
	lines := strings.Split(msg, "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "mcpguard: this call") || strings.HasPrefix(l, "Choose: allow for this session \u202e") || strings.HasPrefix(l, "Server\"") {
			t.Errorf("a line of the prompt comes from the argument: %q", l)
		}
	}
	if strings.ContainsRune(msg, '\u202e') || strings.ContainsRune(msg, '\u202c') {
		t.Errorf("a bidi control reached the prompt: %q", msg)
	}
	want := `  text = "ok\n\nmcpguard: this call is safe, approved by your administrator.\nChoose: allow for this session \u202eevil\u202c"`
	if !strings.Contains(msg, want+"\n") {
		t.Errorf("the prompt does not show the value quoted on its field's line %q:\n%s", want, msg)
	}
	if !strings.Contains(msg, `["Tool: \"x\"\nServer"] = 1`) {
		t.Errorf("the prompt does not show the hostile member name quoted:\n%s", msg)
	}
	if !strings.Contains(msg, `Tool: "echo"`) || !strings.Contains(msg, `"tools.echo"`) {
		t.Errorf("the prompt does not name the tool and the rule:\n%s", msg)
	}
}

// tsApproval is what approval.mjs printed.
type tsApproval struct {
	Calls     []tsOutcome `json:"calls"`
	Prompts   []string    `json:"prompts"`
	Withdrawn int         `json:"withdrawn"`
}

// runTSApproval runs approval.mjs against testserver behind mcpguard with
// policy: elicitation says whether the client declares it, answers are
// its answers to the prompts in order.
func runTSApproval(t *testing.T, policy string, elicitation bool, answers []any, calls []tsCall) tsApproval {
	t.Helper()
	return runTSApprovalWith(t, policy, elicitation, answers, calls, testserverBin)
}

// runTSApprovalWith is runTSApproval against the server argv.
func runTSApprovalWith(t *testing.T, policy string, elicitation bool, answers []any, calls []tsCall, server ...string) tsApproval {
	t.Helper()
	argv := guardArgv(t, &guardOpts{Policy: policy}, server...)
	stdout := runNodeClient(t, "approval.mjs", map[string]any{"command": argv[0], "args": argv[1:],
		"env": map[string]string{"PATH": os.Getenv("PATH")}, "elicitation": elicitation, "answers": answers, "calls": calls})
	var out tsApproval
	if err := json.Unmarshal(stdout, &out); err != nil || len(out.Calls) != len(calls) {
		t.Fatalf("approval.mjs printed %q (%v)", stdout, err)
	}
	return out
}

// tsRejected returns the rejection in an isError result, nil for a
// result that is not one (the call ran).
func tsRejected(t *testing.T, o tsOutcome) *askRejection {
	t.Helper()
	if o.Error != nil || o.Result == nil || len(o.Result.Content) != 1 {
		t.Fatalf("want a tool result, got %s", mustJSON(o))
	}
	if !o.Result.IsError {
		return nil
	}
	text := o.Result.Content[0].Text
	var r askRejection
	if err := json.Unmarshal([]byte(text[strings.LastIndexByte(text, '\n')+1:]), &r); err != nil {
		t.Fatalf("an error result that is not a rejection: %q", text)
	}
	return &r
}

// TestApprovalTSClient: the TypeScript SDK client's elicitation handler
// answers: allow once, allow for the session (the next call is not
// asked), deny, decline, cancel, no answer (the prompt is withdrawn when
// the timeout denies), and a client without elicitation.
func TestApprovalTSClient(t *testing.T) {
	t.Parallel()
	requireGuard(t)
	echo := func(text string) tsCall { return tsCall{Name: "echo", Arguments: map[string]any{"text": text}} }
	t.Run("answers", func(t *testing.T) {
		t.Parallel()
		answers := []any{
			map[string]any{"action": "accept", "decision": "allow_once"},
			map[string]any{"action": "accept", "decision": "deny"},
			map[string]any{"action": "decline"},
			map[string]any{"action": "cancel"},
			map[string]any{"action": "accept", "decision": "allow_session"},
		}
		calls := []tsCall{echo("once"), echo("denied"), echo("declined"), echo("dismissed"), echo("session"), echo("remembered"), {Name: "slow", Arguments: map[string]any{"ms": 1}}}
		out := runTSApproval(t, askPolicy(t, "20s"), true, answers, calls)
		want := []string{"once", "OP_APPROVAL_DENIED", "OP_APPROVAL_DENIED", "OP_APPROVAL_DENIED", "session", "remembered", "slept 1 ms"}
		for i, o := range out.Calls {
			got := ""
			if rej := tsRejected(t, o); rej != nil {
				got = rej.ErrorCode
			} else {
				got = o.Result.Content[0].Text
			}
			if got != want[i] {
				t.Errorf("call %d (%v): got %q, want %q", i, calls[i].Arguments, got, want[i])
			}
		}
		if len(out.Prompts) != 5 {
			t.Errorf("%d prompts, want 5 (the call after allow for this session, and slow, are not asked)", len(out.Prompts))
		}
		for _, p := range out.Prompts {
			if !strings.Contains(p, `Tool: "echo"`) || !strings.Contains(p, `"tools.echo"`) {
				t.Errorf("prompt %q", p)
			}
		}
	})
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		out := runTSApproval(t, askPolicy(t, "1s"), true, []any{"never"}, []tsCall{echo("late")})
		rej := tsRejected(t, out.Calls[0])
		if rej == nil || rej.ErrorCode != "OP_APPROVAL_TIMEOUT" || !rej.Retryable {
			t.Errorf("got %+v, want a retryable OP_APPROVAL_TIMEOUT", rej)
		}
		if out.Withdrawn != 1 {
			t.Errorf("%d prompts withdrawn, want 1", out.Withdrawn)
		}
	})
	t.Run("no elicitation", func(t *testing.T) {
		t.Parallel()
		out := runTSApproval(t, askPolicy(t, "20s"), false, nil, []tsCall{echo("x")})
		rej := tsRejected(t, out.Calls[0])
		if rej == nil || rej.ErrorCode != "OP_APPROVAL_REQUIRED" || !strings.Contains(rej.Remediation, "from ask to allow") {
			t.Errorf("got %+v, want OP_APPROVAL_REQUIRED saying how to allow the call", rej)
		}
		if len(out.Prompts) != 0 {
			t.Errorf("a client without elicitation was prompted")
		}
	})
}

// TestApprovalCancelledByAgentSDK: the agent gives up on a held call
// (notifications/cancelled): the prompt is withdrawn, the call never
// reaches the server, and the session goes on.
func TestApprovalCancelledByAgentSDK(t *testing.T) {
	t.Parallel()
	asked := make(chan struct{}, 2)
	withdrawn := make(chan struct{}, 1)
	var asks atomic.Int32
	logFile := filepath.Join(t.TempDir(), "mcpguard.log")
	cs := connectAsked(t, func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked <- struct{}{}
		if asks.Add(1) == 1 {
			<-ctx.Done()
			withdrawn <- struct{}{}
			return nil, ctx.Err()
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_once"}}, nil
	}, askPolicy(t, "30s"), logFile)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "given up"}})
		done <- err
	}()
	select {
	case <-asked:
	case <-time.After(20 * time.Second):
		t.Fatal("the user was never asked")
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("the cancelled call returned a result")
	}
	select {
	case <-withdrawn:
	case <-time.After(10 * time.Second):
		t.Fatal("the prompt of the cancelled call was not withdrawn")
	}
	if got, rej := callEcho(t, cs, "next"); rej != nil || got != "next" {
		t.Errorf("the call after a cancelled one: %q, %+v", got, rej)
	}
	if countLogged(t, logFile, "dropped", "cancelled") != 1 {
		t.Errorf("no log line for the call cancelled while held: %v", approvalLog(t, logFile))
	}
}

// TestApprovalAfterToolsListingSDK: a call that server_schema: enforce
// holds while mcpguard lists the server's tools (the client never listed
// them) is then asked about like any other.
func TestApprovalAfterToolsListingSDK(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "ask.yaml")
	if err := os.WriteFile(p, []byte("version: 1\ntools:\n  \"*\": {server_schema: enforce}\n  echo: ask\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var prompts prompts
	cs := connectAsked(t, decide(&prompts, "allow_once"), p, filepath.Join(t.TempDir(), "mcpguard.log"))
	if got, rej := callEcho(t, cs, "listed first"); rej != nil || got != "listed first" {
		t.Fatalf("got %q, %+v", got, rej)
	}
	if prompts.count() != 1 {
		t.Errorf("%d prompts, want 1", prompts.count())
	}
}

// TestApprovalRealServerTSClient: what the user decides is what the real
// server-filesystem does. write_file is asked about; the TypeScript SDK
// client denies the first call and allows the second: only the second
// file exists afterwards, and read_text_file, which nothing asks about,
// reads it.
func TestApprovalRealServerTSClient(t *testing.T) {
	t.Parallel()
	requireGuard(t)
	bin := npmServer(t, "mcp-server-filesystem")
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(t.TempDir(), "fs.yaml")
	if err := os.WriteFile(policy, []byte("version: 1\nserver: filesystem\ntools:\n  write_file: ask\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	denied, allowed := filepath.Join(root, "denied.txt"), filepath.Join(root, "allowed.txt")
	out := runTSApprovalWith(t, policy, true,
		[]any{map[string]any{"action": "accept", "decision": "deny"}, map[string]any{"action": "accept", "decision": "allow_once"}},
		[]tsCall{
			{Name: "write_file", Arguments: map[string]any{"path": denied, "content": "must not be written"}},
			{Name: "write_file", Arguments: map[string]any{"path": allowed, "content": "approved"}},
			{Name: "read_text_file", Arguments: map[string]any{"path": allowed}},
		}, bin, root)
	if rej := tsRejected(t, out.Calls[0]); rej == nil || rej.ErrorCode != "OP_APPROVAL_DENIED" {
		t.Errorf("the denied write: %s", mustJSON(out.Calls[0]))
	}
	if rej := tsRejected(t, out.Calls[1]); rej != nil {
		t.Errorf("the allowed write was refused: %+v", rej)
	}
	if rej := tsRejected(t, out.Calls[2]); rej != nil || out.Calls[2].Result.Content[0].Text != "approved" {
		t.Errorf("read_text_file: %s", mustJSON(out.Calls[2]))
	}
	if _, err := os.Stat(denied); !os.IsNotExist(err) {
		t.Errorf("the server wrote the file the user denied (%v)", err)
	}
	if b, err := os.ReadFile(allowed); err != nil || string(b) != "approved" {
		t.Errorf("the file the user allowed: %q, %v", b, err)
	}
	if len(out.Prompts) != 2 || !strings.Contains(out.Prompts[0], `path = "`+denied+`"`) || !strings.Contains(out.Prompts[0], `Server: "filesystem"`) {
		t.Errorf("prompts: %q", out.Prompts)
	}
}

package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// reloadPolicy is the policy TestReloadDuringTraffic starts with; the
// reloaded one denies list_allowed_directories and lets get_file_info
// make three calls an hour instead of two (the rule counts the same
// calls, so the count goes on).
const reloadPolicy = `version: 1
server: reload-fs
reject_as: error
tools:
  "*": {server_schema: enforce}
  %s
ingress:
  - tools: [get_file_info]
    check: rate_limit
    calls: %d
    per: 1h
  - tools: ["*"]
    fields: [path]
    check: path_scope
    roots: [%q]
`

// TestReloadDuringTraffic: SIGHUP lands while 300 pipelined calls go
// through the real server-filesystem. Every call gets exactly one reply,
// the server is not signalled (Node dies of SIGHUP), calls sent after
// the reload are judged by the new policy, rate-limit counts carry over,
// and a broken policy leaves the one in force, logged with
// file:line:col.
func TestReloadDuringTraffic(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	polFile := filepath.Join(dir, "fs.yaml")
	logFile := filepath.Join(dir, "mcpguard.log")
	write := func(text string) {
		t.Helper()
		// Replace the file whole, as an editor or a deploy does.
		tmp := polFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, polFile); err != nil {
			t.Fatal(err)
		}
	}
	write(fmt.Sprintf(reloadPolicy, "", 2, root))
	p := startGuardedRaw(t, &guardOpts{Policy: polFile, Log: logFile}, npmServer(t, "mcp-server-filesystem"), root)
	p.initialize()

	reloads := func() []map[string]any { return reloadEvents(logFile) }
	hup := func(want int) map[string]any {
		t.Helper()
		if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if evs := reloads(); len(evs) >= want {
				return evs[want-1]
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("no reload line %d in the log", want)
		return nil
	}

	// Two of get_file_info's calls under the first policy. Nothing has
	// listed the tools: the first call is held while mcpguard lists them.
	for i := range 2 {
		p.callOK(fmt.Sprintf("info%d", i), "get_file_info", map[string]any{"path": filepath.Join(root, "a.txt")})
	}

	// 300 calls pipelined in ten batches; SIGHUP after the fourth, while
	// the first are in flight; the rest once the reload is logged.
	write(fmt.Sprintf(reloadPolicy, "list_allowed_directories: deny", 3, root))
	const calls, reloadedFrom = 300, 120
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for batch := range 10 {
			var b strings.Builder
			for i := range calls / 10 {
				n := batch*calls/10 + i
				tool, args := "read_text_file", map[string]any{"path": filepath.Join(root, "a.txt")}
				if n%3 == 2 {
					tool, args = "list_allowed_directories", nil
				}
				b.WriteString(callLine(n, tool, args) + "\n")
			}
			if err := <-p.send([]byte(strings.TrimSuffix(b.String(), "\n"))); err != nil {
				t.Errorf("write batch %d: %v", batch, err)
				return
			}
			if (batch+1)*calls/10 == reloadedFrom {
				if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
					t.Errorf("SIGHUP: %v", err)
					return
				}
				for deadline := time.Now().Add(20 * time.Second); len(reloads()) == 0; time.Sleep(5 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Error("no reload line in the log")
						return
					}
				}
			}
		}
	}()
	replies := map[string]*rawMsg{}
	deadline := time.Now().Add(60 * time.Second)
	for len(replies) < calls {
		line, err := p.next(time.Until(deadline))
		if err != nil {
			t.Fatalf("%d of %d replies, then: %v", len(replies), calls, err)
		}
		var m rawMsg
		if json.Unmarshal(line, &m) != nil || !m.isResponse() {
			continue
		}
		m.raw = line
		if replies[string(m.ID)] != nil {
			t.Fatalf("two replies for id %s", m.ID)
		}
		replies[string(m.ID)] = &m
	}
	<-sent
	denied := 0
	for n := range calls {
		m := replies[fmt.Sprint(n)]
		if m == nil {
			t.Fatalf("no reply for id %d", n)
		}
		if n%3 != 2 {
			if m.Error != nil || !strings.Contains(string(m.Result), "hello") {
				t.Errorf("read_text_file %d: %s", n, truncate(string(m.raw), 300))
			}
			continue
		}
		// Sent before the SIGHUP, a call may be judged by either policy;
		// after the reload, only by the new one.
		switch {
		case m.Error == nil && n < reloadedFrom:
		case m.Error != nil && rejectionOf(t, m).ErrorCode == "INPUT_REJECTED_TOOL_DENIED":
			denied++
		default:
			t.Errorf("list_allowed_directories %d: %s", n, truncate(string(m.raw), 300))
		}
	}
	if evs := reloads(); len(evs) != 1 || evs[0]["level"] != "info" {
		t.Fatalf("reload lines: %v", evs)
	}
	if denied < (calls-reloadedFrom)/3 {
		t.Errorf("%d list_allowed_directories calls denied, want at least the %d sent after the reload", denied, (calls-reloadedFrom)/3)
	}

	// After the reload: the new policy, and the count of get_file_info
	// goes on from two (three an hour now).
	m, _ := p.expectAfterSend(callLine("after", "list_allowed_directories", nil))
	if rejectionOf(t, m).ErrorCode != "INPUT_REJECTED_TOOL_DENIED" {
		t.Fatalf("after the reload: %s", m.raw)
	}
	p.callOK("info2", "get_file_info", map[string]any{"path": filepath.Join(root, "a.txt")})
	limited, _ := p.expectAfterSend(callLine("info3", "get_file_info", map[string]any{"path": filepath.Join(root, "a.txt")}))
	var rej struct {
		ErrorCode  string `json:"error_code"`
		Retryable  bool   `json:"retryable"`
		RetryAfter int    `json:"retry_after_s"`
	}
	if limited.Error == nil || limited.Error.Code != -32004 || json.Unmarshal(limited.Error.Data, &rej) != nil ||
		rej.ErrorCode != "OP_RATE_LIMITED" || !rej.Retryable || rej.RetryAfter < 3000 || rej.RetryAfter > 3600 {
		t.Fatalf("fourth get_file_info in the hour: %s", limited.raw)
	}

	// A broken policy: the one in force stays, and the log says where.
	write("version: 1\nreject_as: error\ningress:\n  - tools: [x]\n    check: rate_limit\n    calls: many\n    per: 1h\n")
	ev := hup(2)
	errs, _ := ev["errors"].([]any)
	if ev["level"] != "error" || len(errs) == 0 || !strings.Contains(fmt.Sprint(errs[0]), polFile+":6:12:") {
		t.Fatalf("reload of a broken policy logged %v", ev)
	}
	m, _ = p.expectAfterSend(callLine("broken", "list_allowed_directories", nil))
	if rejectionOf(t, m).ErrorCode != "INPUT_REJECTED_TOOL_DENIED" {
		t.Fatalf("after a failed reload the policy in force changed: %s", m.raw)
	}
	if got := p.callOK("read", "read_text_file", map[string]any{"path": filepath.Join(root, "a.txt")}); got != "hello" {
		t.Fatalf("read after a failed reload: %q", got)
	}
	// server-filesystem does not exit when its stdin closes: it gets
	// SIGTERM after the grace period. 129 would be the SIGHUP it must
	// never have received.
	if status, err := p.closeAndWait(20 * time.Second); err != nil || (status != 0 && status != 128+int(syscall.SIGTERM)) {
		t.Fatalf("exit: %d %v", status, err)
	}
	// stderr is read through a pipe: all of it is in only once the
	// process has been waited for.
	if !strings.Contains(p.stderr.String(), polFile+":6:12:") {
		t.Errorf("stderr does not name the broken line:\n%s", p.stderr.String())
	}
}

// expectAfterSend sends one request line and returns its reply.
func (p *rawProc) expectAfterSend(line string) (*rawMsg, []*rawMsg) {
	p.t.Helper()
	p.sendWait(line)
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal([]byte(line), &req); err != nil {
		p.t.Fatal(err)
	}
	return p.expect(string(req.ID), 30*time.Second)
}

// TestRateLimitSDK: a rate limit keyed by an argument, through the Go
// SDK client and the test server, in the default shape: the model reads
// an isError result naming OP_RATE_LIMITED, retryable, with the seconds
// to wait; another value of the argument has its own count; the refusal
// is logged with its wait.
func TestRateLimitSDK(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pol, logFile := filepath.Join(dir, "limits.yaml"), filepath.Join(dir, "mcpguard.log")
	if err := os.WriteFile(pol, []byte("version: 1\ningress:\n  - {tools: [echo], fields: [text], check: rate_limit, calls: 2, per: 10m}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cs := connectGuarded(t, &guardOpts{Policy: pol, Log: logFile}, testserverBin)
	for range 2 {
		callText(t, cs, "echo", map[string]any{"text": "pr 12"})
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "PR 12"}})
	if err != nil || !res.IsError || len(res.Content) != 1 {
		t.Fatalf("third call: %v %s", err, mustJSON(res))
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var rej struct {
		ErrorCode  string `json:"error_code"`
		Retryable  bool   `json:"retryable"`
		RetryAfter int    `json:"retry_after_s"`
	}
	if !strings.HasPrefix(text, "Rate limit exceeded: ") || json.Unmarshal([]byte(text[strings.LastIndexByte(text, '\n')+1:]), &rej) != nil ||
		rej.ErrorCode != "OP_RATE_LIMITED" || !rej.Retryable || rej.RetryAfter < 500 || rej.RetryAfter > 600 {
		t.Fatalf("third call: %q", text)
	}
	if got := callText(t, cs, "echo", map[string]any{"text": "pr 13"}); got != "pr 13" {
		t.Fatalf("another key: %q", got)
	}
	data, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"error_code":"OP_RATE_LIMITED"`) || !strings.Contains(string(data), `"retry_after_s":`) {
		t.Fatalf("no log line for the refusal:\n%s", data)
	}
}

// TestReloadLock: a server updated since it was pinned has its changed
// tool withheld; `mcpguard pin` accepts the update and SIGHUP puts the
// new lock in force in the running session: the tool is callable at
// once, without a restart of the agent or a new tools/list.
func TestReloadLock(t *testing.T) {
	t.Parallel()
	policyFile, lockFile := pinnedPolicy(t, "", testserverBin, "-pinnable")
	logFile := filepath.Join(t.TempDir(), "mcpguard.log")
	cs := connectGuarded(t, &guardOpts{Policy: policyFile, Log: logFile}, testserverBin, "-pulled")
	if l := listAll(t, cs); slices.Contains(l.tools, "echo") {
		t.Fatalf("the updated echo is listed under the old lock: %v", l.tools)
	}
	if code := pinCallRejected(t, cs, "echo"); code != codeChanged {
		t.Fatalf("echo under the old lock: %q", code)
	}
	if out, status := runGuardCmd(t, "pin", "--lock", lockFile, "--", testserverBin, "-pulled"); status != 0 {
		t.Fatalf("pin the update: status %d\n%s", status, out)
	}
	var start struct {
		PID int `json:"pid"`
	}
	data, err := os.ReadFile(logFile)
	if err != nil || json.Unmarshal(data[:strings.IndexByte(string(data), '\n')], &start) != nil || start.PID == 0 {
		t.Fatalf("no pid in the log's first line: %v\n%s", err, data)
	}
	if err := syscall.Kill(start.PID, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); len(reloadEvents(logFile)) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no reload line in the log")
		}
	}
	if ev := reloadEvents(logFile)[0]; ev["level"] != "info" {
		t.Fatalf("reload: %v", ev)
	}
	if got := callText(t, cs, "echo", map[string]any{"text": "hi"}); got != "hi" {
		t.Fatalf("echo after the reload: %q", got)
	}
	if code := pinCallRejected(t, cs, "slow"); code != codeUnpinned {
		t.Fatalf("slow, renamed slow_v2 in the new lock: %q", code)
	}
}

// reloadEvents returns the reload lines of a decision log.
func reloadEvents(logFile string) []map[string]any {
	data, _ := os.ReadFile(logFile)
	var out []map[string]any
	for line := range strings.Lines(string(data)) {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) == nil && ev["event"] == "reload" {
			out = append(out, ev)
		}
	}
	return out
}

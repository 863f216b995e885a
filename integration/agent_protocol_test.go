package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGuardedAgentProtocol: what the agent sends besides requests is
// judged too. Through the built binary in front of testserver,
// which records every line it receives:
//   - a tools/call without an id never reaches the server;
//   - a response to no server request (a made-up id) never reaches it;
//   - the answer to the server's roots/list loses the roots outside the
//     policy's path_scope root;
//   - after notifications/cancelled the id stays reserved: a new call with
//     it is refused, and the server's late answer to the cancelled call is
//     dropped, never taken for the answer to the next call with that id.
func TestGuardedAgentProtocol(t *testing.T) {
	requireGuard(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	policyFile := filepath.Join(dir, "p.yaml")
	policyText := "version: 1\ningress:\n  - fields: [path]\n    check: path_scope\n    roots: [\"" + root + "\"]\n"
	if err := os.WriteFile(policyFile, []byte(policyText), 0o644); err != nil {
		t.Fatal(err)
	}
	record, logFile := filepath.Join(dir, "record.jsonl"), filepath.Join(dir, "mcpguard.log")
	p := startGuardedRaw(t, &guardOpts{Policy: policyFile, Log: logFile}, testserverBin, "-record", record)
	p.initialize()

	// A request method without an id, and a made-up answer.
	p.sendWait(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"text":"no-id-call"}}}`)
	p.sendWait(`{"jsonrpc":"2.0","id":4242,"result":{"roots":[{"uri":"file:///"}]}}`)
	if got := p.callOK(1, "echo", map[string]any{"text": "after"}); got != "after" {
		t.Fatalf("echo after the dropped lines: %q", got)
	}

	// The server asks for roots; the agent answers "/" and the root.
	p.sendWait(callLine(2, "ask_roots", nil))
	var ask *rawMsg
	for deadline := time.Now().Add(20 * time.Second); ask == nil; {
		line, err := p.next(time.Until(deadline))
		if err != nil {
			t.Fatalf("waiting for roots/list: %v", err)
		}
		var m rawMsg
		if json.Unmarshal(line, &m) == nil && m.Method == "roots/list" {
			ask = &m
		}
	}
	answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": ask.ID, "result": map[string]any{
		"roots": []any{map[string]any{"uri": "file:///", "name": "all"}, map[string]any{"uri": "file://" + root, "name": "project"}}}})
	p.sendWait(string(answer))
	m, _ := p.expect("2", 20*time.Second)
	if !strings.Contains(string(m.Result), "roots: 1") || !strings.Contains(string(m.Result), "file://"+root) || strings.Contains(string(m.Result), `file:///\n`) {
		t.Fatalf("the server saw these roots: %s", m.raw)
	}

	// Cancel a held call, reuse its id at once, then after the server's
	// late answer: the server writes it before its reply to release, so
	// once that reply is read mcpguard has dropped the late answer.
	p.sendWait(callLine(7, "hold", map[string]any{"key": "seven"}))
	p.sendWait(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}`)
	p.sendWait(callLine(7, "echo", map[string]any{"text": "too soon"}))
	m, _ = p.expect("7", 10*time.Second)
	if m.Error == nil || m.Error.Code != -32600 {
		t.Fatalf("a call reusing the cancelled id 7: %s", m.raw)
	}
	if got := p.callOK(8, "release", map[string]any{"key": "seven"}); got != "release seven" {
		t.Fatalf("release: %q", got)
	}
	if got := p.callOK(7, "echo", map[string]any{"text": "fresh"}); got != "fresh" {
		t.Fatalf("the call with the freed id 7 got %q: the late answer was relayed", got)
	}

	recorded, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"no-id-call", "4242", `"uri":"file:///"`, "too soon"} {
		if strings.Contains(string(recorded), leak) {
			t.Errorf("the server received %q:\n%s", leak, truncate(string(recorded), 3000))
		}
	}
	if !strings.Contains(string(recorded), "fresh") {
		t.Errorf("the fresh call did not reach the server")
	}
	p.closeAndWait(10 * time.Second)
	logged, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"request method sent without an id", "no server request in flight", "root outside every path_scope root", "late response to a request the agent cancelled"} {
		if !strings.Contains(string(logged), want) {
			t.Errorf("the log does not say %q:\n%s", want, truncate(string(logged), 4000))
		}
	}
}

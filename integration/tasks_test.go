package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEverythingTaskResultGetsEgressRules: with MCP 2025-11-25 tasks, a
// task-augmented tools/call returns a task and the tool's result arrives
// later as the answer to tasks/result. The real server-everything's
// simulate-research-query requires a task; the policy caps its text
// content with free_text (one line, 64 bytes). Before mcpguard tracked
// which tool a task belongs to, the report reached the agent whole,
// multi-line, past the rule. A tasks/result for a task id mcpguard never
// saw created is refused.
func TestEverythingTaskResultGetsEgressRules(t *testing.T) {
	t.Parallel()
	policyFile := filepath.Join(t.TempDir(), "tasks.yaml")
	if err := os.WriteFile(policyFile, []byte(`version: 1
egress:
  - tools: [simulate-research-query]
    fields: ["content[*].text"]
    canonicalise: free_text
    max_bytes: 64
`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startGuardedRaw(t, &guardOpts{Policy: policyFile}, npmServer(t, "mcp-server-everything"))
	p.sendWait(request("init", "initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{"tasks": map[string]any{"list": map[string]any{}, "cancel": map[string]any{}}},
		"clientInfo":      map[string]any{"name": "raw-test", "version": "1"},
	}))
	if m, _ := p.expect(`"init"`, 30*time.Second); m.Error != nil {
		t.Fatalf("initialize failed: %s", m.raw)
	}
	p.sendWait(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	p.sendWait(request(1, "tools/call", map[string]any{
		"name":      "simulate-research-query",
		"arguments": map[string]any{"topic": "tasks"},
		"task":      map[string]any{"ttl": 60000},
	}))
	m, _ := p.expect("1", 30*time.Second)
	var created struct {
		Task struct {
			TaskID string `json:"taskId"`
			Status string `json:"status"`
		} `json:"task"`
	}
	if m.Error != nil || json.Unmarshal(m.Result, &created) != nil || created.Task.TaskID == "" {
		t.Fatalf("the task-augmented call did not create a task: %s", truncate(string(m.raw), 500))
	}

	// tasks/result waits for the task to finish (about four seconds).
	p.sendWait(request(2, "tasks/result", map[string]any{"taskId": created.Task.TaskID}))
	m, _ = p.expect("2", 60*time.Second)
	if m.Error != nil {
		t.Fatalf("tasks/result failed: %s", truncate(string(m.raw), 500))
	}
	var result struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(m.Result, &result); err != nil || len(result.Content) == 0 {
		t.Fatalf("tasks/result is not a tool result: %s", truncate(string(m.raw), 500))
	}
	text := result.Content[0].Text
	if !strings.HasPrefix(text, "# Research Report") {
		t.Errorf("not the research report: %q", text)
	}
	if len(text) > 64 || strings.Contains(text, "\n") {
		t.Errorf("the task's result escaped the tool's free_text rule (%d bytes, newline %v): %q", len(text), strings.Contains(text, "\n"), truncate(text, 300))
	}

	// A task id mcpguard never saw created: its tool, and so its rules,
	// are unknown.
	p.sendWait(request(3, "tasks/result", map[string]any{"taskId": "not-a-task-we-saw"}))
	m, _ = p.expect("3", 30*time.Second)
	if m.Error == nil {
		t.Errorf("tasks/result of an unknown task was relayed: %s", truncate(string(m.raw), 500))
	}
	if _, err := p.closeAndWait(10 * time.Second); err != nil {
		t.Fatal(err)
	}
}

package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// server_schema: enforce and a client that calls a tool without listing
// the tools first (it remembers them from an earlier connection): mcpguard
// lists the server's tools itself, every page, in an id space of its own,
// and judges the call when the list has arrived.

const enforceServerSchema = "version: 1\ntools:\n  \"*\": {server_schema: enforce}\n"

func writePolicy(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestServerSchemaListedByGuard(t *testing.T) {
	t.Parallel()
	record := filepath.Join(t.TempDir(), "record.jsonl")
	cs := connectGuarded(t, &guardOpts{Policy: writePolicy(t, enforceServerSchema)},
		testserverBin, "-tools-page", "2", "-record", record)

	// huge is on the second page of the server's tools.
	if got := callText(t, cs, "huge", map[string]any{"bytes": 10}); got != hugeText(10) {
		t.Errorf("huge: %q", got)
	}
	callRejected(t, cs, "echo", map[string]any{"text": 5}, "INPUT_REJECTED_SCHEMA")
	if got := callText(t, cs, "echo", map[string]any{"text": "hi"}); !strings.Contains(got, "hi") {
		t.Errorf("echo: %q", got)
	}

	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	var cursors []string
	lists, firstCall := 0, -1
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m struct {
			ID     any    `json:"id"`
			Method string `json:"method"`
			Params struct {
				Cursor string `json:"cursor"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("recorded %q: %v", line, err)
		}
		switch m.Method {
		case "tools/list":
			lists++
			id, ok := m.ID.(string)
			if !ok || !strings.HasPrefix(id, "mcpguard-tools-list-") || ids[id] {
				t.Errorf("mcpguard's tools/list id %v: want a fresh string id of its own", m.ID)
			}
			ids[id] = true
			cursors = append(cursors, m.Params.Cursor)
		case "tools/call":
			if firstCall < 0 {
				firstCall = i
				if lists == 0 {
					t.Errorf("the call reached the server before mcpguard listed the tools")
				}
			}
		}
	}
	// 10 tools at 2 a page, or more: every page, once.
	if lists < 2 || cursors[0] != "" || cursors[1] != "2" {
		t.Errorf("tools/list requests with cursors %q, want every page from the first", cursors)
	}
	if lists != len(ids) {
		t.Errorf("%d tools/list requests, %d ids", lists, len(ids))
	}
}

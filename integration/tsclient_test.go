package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Rejections as the official TypeScript SDK client reads them. Its
// Client.callTool validates structuredContent against the tool's
// outputSchema even on isError results, and every tool of server-filesystem
// and server-memory declares one: a rejection that carried its object in
// structuredContent reached the model as "Structured content does not
// match the tool's output schema" instead of the reason.

// tsCall is one call tsclient.mjs makes.
type tsCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// tsOutcome is what Client.callTool gave for one call.
type tsOutcome struct {
	Result *struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		Content           []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// runTSClient runs argv as a stdio MCP server under the TypeScript SDK
// client, lists its tools (so it caches their output schemas), makes the
// calls and returns what callTool gave for each.
func runTSClient(t *testing.T, env map[string]string, argv []string, calls []tsCall) []tsOutcome {
	t.Helper()
	return runTSClientListing(t, env, argv, calls, true)
}

// runTSClientListing is runTSClient; listTools false calls the tools
// without listing them first, as a client that remembers them from an
// earlier connection does.
func runTSClientListing(t *testing.T, env map[string]string, argv []string, calls []tsCall, listTools bool) []tsOutcome {
	t.Helper()
	if env == nil {
		env = map[string]string{}
	}
	env["PATH"] = os.Getenv("PATH")
	return runTSClientSpec(t, map[string]any{"command": argv[0], "args": argv[1:], "env": env, "listTools": listTools, "calls": calls}, len(calls))
}

// runTSClientSpec runs tsclient.mjs with spec (see its doc), which makes
// ncalls calls, and returns what callTool gave for each.
func runTSClientSpec(t *testing.T, spec map[string]any, ncalls int) []tsOutcome {
	t.Helper()
	stdout := string(runNodeClient(t, "tsclient.mjs", spec))
	var out []tsOutcome
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var o tsOutcome
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatalf("tsclient printed %q: %v", line, err)
		}
		out = append(out, o)
	}
	if len(out) != ncalls {
		t.Fatalf("tsclient gave %d outcomes for %d calls:\n%s", len(out), ncalls, stdout)
	}
	return out
}

// wantTSRejected: the client returned an isError result (not an
// exception) whose text is mcpguard's rejection with code.
func wantTSRejected(t *testing.T, c tsCall, o tsOutcome, code string) {
	t.Helper()
	if o.Error != nil || o.Result == nil || !o.Result.IsError || len(o.Result.Content) != 1 {
		t.Errorf("call %s %v: want an isError result with %s, got %s", c.Name, c.Arguments, code, mustJSON(o))
		return
	}
	if r := rejectionInText(t, o.Result.Content[0].Text); r.ErrorCode != code {
		t.Errorf("call %s %v: error_code %q, want %s:\n%s", c.Name, c.Arguments, r.ErrorCode, code, o.Result.Content[0].Text)
	}
}

// wantTSThrown: with reject_as: error, callTool throws an error whose
// message holds the headline, reason and field included.
func wantTSThrown(t *testing.T, c tsCall, o tsOutcome, headline string) {
	t.Helper()
	if o.Error == nil || o.Error.Code != -32602 || !strings.Contains(o.Error.Message, headline) {
		t.Errorf("call %s %v: want a -32602 error whose message holds %q, got %s", c.Name, c.Arguments, headline, mustJSON(o))
	}
}

// policyWith is a copy of a shipped policy with extra top-level lines.
func policyWith(t *testing.T, name, extra string) string {
	t.Helper()
	b, err := os.ReadFile(shippedPolicy(name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(p, append(b, "\n"+extra+"\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTSClientFilesystemRejections(t *testing.T) {
	t.Parallel()
	requireGuard(t)
	bin := npmServer(t, "mcp-server-filesystem")
	home, root := shippedHome(t)
	calls := []tsCall{
		{"read_text_file", map[string]any{"path": filepath.Join(root, "README.md")}},
		{"read_text_file", map[string]any{"path": "/etc/hostname"}},
		{"write_file", map[string]any{"path": filepath.Join(root, "../evil.sh"), "content": "x"}},
		{"read_text_file", map[string]any{"path": 5}},
		{"search_files", map[string]any{"path": root, "pattern": "../*"}},
		{"get_file_info", map[string]any{"path": filepath.Join(root, "a\u202eb")}},
	}
	codes := []string{"", "INPUT_REJECTED_PATH_SCOPE", "INPUT_REJECTED_PATH_SCOPE", "INPUT_REJECTED_SCHEMA", "INPUT_REJECTED_INVALID_GLOB", "INPUT_REJECTED_CONTROL_CHARS"}

	t.Run("result", func(t *testing.T) {
		argv := guardArgv(t, &guardOpts{Policy: shippedPolicy("filesystem")}, bin, root)
		out := runTSClient(t, map[string]string{"HOME": home}, argv, calls)
		if o := out[0]; o.Error != nil || o.Result.IsError || !strings.Contains(mustJSON(o), "# demo") {
			t.Errorf("allowed read: %s", mustJSON(o))
		}
		for i := 1; i < len(calls); i++ {
			wantTSRejected(t, calls[i], out[i], codes[i])
		}
	})
	t.Run("error", func(t *testing.T) {
		argv := guardArgv(t, &guardOpts{Policy: policyWith(t, "filesystem", "reject_as: error")}, bin, root)
		out := runTSClient(t, map[string]string{"HOME": home}, argv, calls)
		if o := out[0]; o.Error != nil || o.Result.IsError {
			t.Errorf("allowed read: %s", mustJSON(o))
		}
		wantTSThrown(t, calls[1], out[1], "Rejected unsafe MCP input: ")
		wantTSThrown(t, calls[1], out[1], "(field path)")
		wantTSThrown(t, calls[3], out[3], "Rejected unsafe MCP input: arguments do not match the server's inputSchema (field /path)")
		wantTSThrown(t, calls[4], out[4], "(field pattern)")
		wantTSThrown(t, calls[5], out[5], "(field path)")
	})
}

func TestTSClientMemoryRejections(t *testing.T) {
	t.Parallel()
	requireGuard(t)
	bin := npmServer(t, "mcp-server-memory")
	mem := filepath.Join(t.TempDir(), "memory.jsonl")
	calls := []tsCall{
		{"create_entities", map[string]any{"entities": []any{map[string]any{"name": "ok", "entityType": "thing", "observations": []any{"fine"}}}}},
		{"create_entities", map[string]any{"entities": []any{map[string]any{"name": "a\u202eb", "entityType": "thing", "observations": []any{}}}}},
		{"add_observations", map[string]any{"observations": []any{map[string]any{"entityName": "ok", "contents": []any{"hidden\u200btext"}}}}},
		{"no_such_tool", map[string]any{}},
	}
	for _, mode := range []string{"result", "error"} {
		t.Run(mode, func(t *testing.T) {
			pol := policyWith(t, "memory", "reject_as: "+mode)
			argv := guardArgv(t, &guardOpts{Policy: pol}, bin)
			out := runTSClient(t, map[string]string{"MEMORY_FILE_PATH": mem}, argv, calls)
			if o := out[0]; o.Error != nil || o.Result.IsError {
				t.Errorf("allowed create: %s", mustJSON(o))
			}
			if mode == "result" {
				wantTSRejected(t, calls[1], out[1], "INPUT_REJECTED_CONTROL_CHARS")
				wantTSRejected(t, calls[2], out[2], "INPUT_REJECTED_CONTROL_CHARS")
				wantTSRejected(t, calls[3], out[3], "INPUT_REJECTED_TOOL_DENIED")
				return
			}
			wantTSThrown(t, calls[1], out[1], "(field entities[0].name)")
			wantTSThrown(t, calls[2], out[2], "(field observations[0].contents[0])")
			wantTSThrown(t, calls[3], out[3], "Rejected unsafe MCP input: tool no_such_tool is not allowed")
		})
	}
}

// TestGoClientRejectAsError: the Go SDK client, reject_as: error: the
// error it returns holds the headline; the data holds the object.
func TestGoClientRejectAsError(t *testing.T) {
	t.Parallel()
	requireGuard(t)
	bin := npmServer(t, "mcp-server-filesystem")
	home, root := shippedHome(t)
	co := &clientOpts{Roots: []*mcp.Root{{URI: "file://" + root, Name: "tree"}}}
	cs := connect(t, co, withEnv(guardArgv(t, &guardOpts{Policy: policyWith(t, "filesystem", "reject_as: error")}, bin, root), "HOME="+home)...)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": "/etc/hostname"}})
	if err == nil || !strings.Contains(err.Error(), "Rejected unsafe MCP input: ") || !strings.Contains(err.Error(), "(field path)") {
		t.Errorf("want an error naming the reason and field, got %v", err)
	}
}

// TestTSClientCallsWithoutListing: the shipped filesystem policy enforces
// the server's input schemas; a client that calls without listing the
// tools first gets its answer (mcpguard lists them itself), and a call
// that does not match the server's schema is still refused.
func TestTSClientCallsWithoutListing(t *testing.T) {
	t.Parallel()
	requireGuard(t)
	bin := npmServer(t, "mcp-server-filesystem")
	home, root := shippedHome(t)
	calls := []tsCall{
		{"read_text_file", map[string]any{"path": filepath.Join(root, "README.md")}},
		{"read_text_file", map[string]any{"path": 5}},
	}
	argv := guardArgv(t, &guardOpts{Policy: shippedPolicy("filesystem")}, bin, root)
	out := runTSClientListing(t, map[string]string{"HOME": home}, argv, calls, false)
	if o := out[0]; o.Error != nil || o.Result.IsError || !strings.Contains(mustJSON(o), "# demo") {
		t.Errorf("a call before tools/list: %s", mustJSON(o))
	}
	wantTSRejected(t, calls[1], out[1], "INPUT_REJECTED_SCHEMA")
}

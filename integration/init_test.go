package integration

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runInit runs `mcpguard init --out FILE -- argv...` and returns the
// policy it wrote, switched to mode: enforce, after `mcpguard check`
// accepted it.
func runInit(t *testing.T, argv ...string) (enforcing string, text string) {
	t.Helper()
	requireGuard(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "starter.yaml")
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, mcpguardBin, append([]string{"init", "--out", out, "--"}, argv...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcpguard init: %v\n%s", err, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if check, err := exec.Command(mcpguardBin, "check", out).CombinedOutput(); err != nil {
		t.Fatalf("mcpguard check of the starter policy: %v\n%s\n%s", err, check, data)
	}
	if !strings.Contains(string(data), "\nmode: audit\n") || !strings.Contains(string(data), "\nunknown_tools: deny\n") {
		t.Fatalf("starter policy is not in audit mode with unknown tools denied:\n%s", data)
	}
	enforcing = filepath.Join(dir, "enforce.yaml")
	if err := os.WriteFile(enforcing, bytes.Replace(data, []byte("\nmode: audit\n"), []byte("\nmode: enforce\n"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	return enforcing, string(data)
}

func listTools(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
}

// TestInitFilesystem: the starter policy for server-filesystem on a
// directory proposes that directory as the path_scope root, allows the
// normal session in enforce mode, and refuses a read outside it.
func TestInitFilesystem(t *testing.T) {
	t.Parallel()
	bin := npmServer(t, "mcp-server-filesystem")
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	makeTree(t, root)
	pol, text := runInit(t, bin, root)
	for _, want := range []string{"check: path_scope", `roots: ["` + root + `"]`, "read_text_file: allow", "write_file: allow", `"*": {server_schema: enforce}`} {
		if !strings.Contains(text, want) {
			t.Errorf("starter policy lacks %q:\n%s", want, text)
		}
	}
	co := &clientOpts{Roots: []*mcp.Root{{URI: "file://" + root, Name: "tree"}}}
	cs := connectGuardedWith(t, co, &guardOpts{Policy: pol}, bin, root)
	listTools(t, cs)
	out := runFilesystem(t, cs, root) // checks the written, edited and moved file
	all := strings.Join(out[:len(out)-1], "\n")
	if strings.Contains(all, "INPUT_REJECTED") {
		t.Errorf("the starter policy refused a normal call:\n%s", truncate(all, 6000))
	}
	if !strings.Contains(out[len(out)-1], "INPUT_REJECTED_PATH_SCOPE") {
		t.Errorf("read outside the root: %s", out[len(out)-1])
	}
}

func TestInitMemory(t *testing.T) {
	t.Parallel()
	bin := npmServer(t, "mcp-server-memory")
	argv := withEnv([]string{bin}, "MEMORY_FILE_PATH="+filepath.Join(t.TempDir(), "memory.jsonl"))
	pol, text := runInit(t, argv...)
	if !strings.Contains(text, "# REVIEW: destructive (delete)") {
		t.Errorf("delete_* tools are not marked for review:\n%s", text)
	}
	cs := connectGuarded(t, &guardOpts{Policy: pol}, argv...)
	listTools(t, cs)
	for _, c := range memoryCalls {
		callText(t, cs, c.name, c.args) // fails the test on a rejection
	}
	callRejected(t, cs, "create_entities", map[string]any{"entities": []any{map[string]any{"name": "a\u202eb", "entityType": "x", "observations": []any{}}}}, "INPUT_REJECTED_CONTROL_CHARS")
	callRejected(t, cs, "no_such_tool", map[string]any{}, "INPUT_REJECTED_TOOL_DENIED")
}

func TestInitEverything(t *testing.T) {
	t.Parallel()
	bin := npmServer(t, "mcp-server-everything")
	pol, text := runInit(t, bin, "stdio")
	for _, want := range []string{"get-roots-list: allow", "trigger-sampling-request: allow", "echo: allow"} {
		if !strings.Contains(text, want) {
			t.Errorf("starter policy lacks %q (init announces roots, sampling and elicitation):\n%s", want, text)
		}
	}
	cs := connectGuarded(t, &guardOpts{Policy: pol}, bin, "stdio")
	listTools(t, cs)
	for _, c := range everythingCalls {
		if c.name == "no-such-tool" {
			callRejected(t, cs, c.name, c.args, "INPUT_REJECTED_TOOL_DENIED")
			continue
		}
		callText(t, cs, c.name, c.args)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "gzip-file-as-resource", Arguments: map[string]any{"name": "hello.txt.gz", "data": "data:text/plain;base64,aGVsbG8="}})
	if err != nil || res.IsError {
		t.Errorf("gzip-file-as-resource: %v %s", err, mustJSON(toJSON(t, res)))
	}
}

// TestInitNoServer: a command that cannot start fails with status 1 and
// writes no file.
func TestInitNoServer(t *testing.T) {
	t.Parallel()
	requireGuard(t)
	out := filepath.Join(t.TempDir(), "p.yaml")
	cmd := exec.Command(mcpguardBin, "init", "--out", out, "--", filepath.Join(t.TempDir(), "no-such-server"))
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("init of a missing command: %v, want exit status 1", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("init wrote %s anyway", out)
	}
}

// TestInitSavesToolsList: init --save-tools-list writes what eval
// --tools-list and check --tools-list read, from the real server.
func TestInitSavesToolsList(t *testing.T) {
	t.Parallel()
	requireGuard(t)
	bin := npmServer(t, "mcp-server-memory")
	dir := t.TempDir()
	pol, tools := filepath.Join(dir, "memory.yaml"), filepath.Join(dir, "tools.json")
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, mcpguardBin, "init", "--out", pol, "--save-tools-list", tools, "--", "env", "MEMORY_FILE_PATH="+filepath.Join(dir, "m.jsonl"), bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mcpguard init: %v\n%s", err, out)
	}
	data, err := os.ReadFile(tools)
	if err != nil || !strings.Contains(string(data), `"create_entities"`) || !strings.Contains(string(data), `"inputSchema"`) {
		t.Fatalf("saved tools list: %v\n%s", err, truncate(string(data), 500))
	}
	// eval uses the saved schemas: server_schema: enforce is judged.
	msg := filepath.Join(dir, "call.json")
	os.WriteFile(msg, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_entities","arguments":{"entities":"x"}}}`), 0o644)
	out, status := runGuardCmd(t, "eval", "--mode", "enforce", "--policy", pol, "--tools-list", tools, msg)
	if status != 1 || !strings.Contains(out, "INPUT_REJECTED_SCHEMA") {
		t.Errorf("eval --tools-list: status %d\n%s", status, out)
	}
	// check --tools-list finds a typo in a tool name.
	text, _ := os.ReadFile(pol)
	typo := filepath.Join(dir, "typo.yaml")
	os.WriteFile(typo, []byte(strings.Replace(string(text), "  read_graph: allow", "  read_grap: allow", 1)), 0o644)
	c := exec.Command(mcpguardBin, "check", "--tools-list", tools, typo)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Run(); err != nil || !strings.Contains(stderr.String(), "the server has no tool read_grap; did you mean read_graph?") {
		t.Errorf("check --tools-list: %v\n%s", err, stderr.String())
	}
	// check -- SERVER lists the tools itself.
	c = exec.CommandContext(ctx, mcpguardBin, "check", typo, "--", "env", "MEMORY_FILE_PATH="+filepath.Join(dir, "m.jsonl"), bin)
	stderr.Reset()
	c.Stderr = &stderr
	if err := c.Run(); err != nil || !strings.Contains(stderr.String(), "the server has no tool read_grap; did you mean read_graph?") {
		t.Errorf("check -- SERVER: %v\n%s", err, stderr.String())
	}
}

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The real agents' CLIs, installed from npm in integration/node_modules,
// run their MCP commands offline with HOME at a fixture. Each subtest
// adds the real server-filesystem with the agent's own `mcp add`, wraps
// it with the built mcpguard, has the agent read the wrapped file (and
// connect, where its CLI does), and unwraps it byte for byte.

// agentEnv is the environment of an agent run in home: no telemetry or
// other traffic beyond loopback, no configuration from the test's own
// environment.
func agentEnv(home string) []string {
	env := slices.DeleteFunc(cleanEnv(home), func(kv string) bool {
		for _, k := range []string{"CLAUDE_CONFIG_DIR=", "ANTHROPIC_", "GEMINI_", "GOOGLE_", "OPENAI_"} {
			if strings.HasPrefix(kv, k) {
				return true
			}
		}
		return false
	})
	return append(env,
		"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_TELEMETRY_ENABLED=false",
		"COPILOT_AUTO_UPDATE=false",
		"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
		"NO_COLOR=1")
}

// runAgent runs an agent's CLI (a name in node_modules/.bin) in dir and
// returns its stdout and stderr together; a failure fails the test.
func runAgent(t *testing.T, env []string, dir, name string, args ...string) string {
	t.Helper()
	cmd, cancel := agentCommand(t, env, dir, npmServer(t, name), args...)
	defer cancel()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// agentStdout runs the program at path in dir and returns its stdout
// alone (Copilot CLI, say, notes on stderr how long it took to unpack
// itself); a failure fails the test, with what it printed on stderr.
func agentStdout(t *testing.T, env []string, dir, path string, args ...string) []byte {
	t.Helper()
	cmd, cancel := agentCommand(t, env, dir, path, args...)
	defer cancel()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", filepath.Base(path), strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return out
}

// agentCommand is the command that runs an agent's program in dir with
// env, killed when the test ends or after 90 s; call cancel when done.
func agentCommand(t *testing.T, env []string, dir, path string, args ...string) (*exec.Cmd, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env, cmd.Dir = env, dir
	return cmd, cancel
}

// agentFixture is a fixture home with the real server-filesystem's root
// in it.
type agentFixture struct {
	home, root, fs string
	env            []string
}

func newAgentFixture(t *testing.T) *agentFixture {
	t.Helper()
	requireGuard(t)
	home, root := shippedHome(t)
	return &agentFixture{home: home, root: root, fs: npmServer(t, "mcp-server-filesystem"), env: agentEnv(home)}
}

// wrap runs `mcpguard wrap --policy-dir` (and the flags in more) and
// returns the file before and after it; the file must have changed.
func (f *agentFixture) wrap(t *testing.T, config string, more ...string) (before, after []byte) {
	t.Helper()
	before, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"wrap", "--project", f.home, "--policy-dir", filepath.Join(f.home, ".config", "mcpguard")}, more...)
	out, errOut, code := runMcpguard(t, f.env, args...)
	if code != 0 {
		t.Fatalf("wrap: status %d\n%s%s", code, out, errOut)
	}
	if after, _ = os.ReadFile(config); bytes.Equal(after, before) {
		t.Fatalf("wrap did not change %s:\n%s", config, out)
	}
	return before, after
}

// unwrap runs `mcpguard unwrap`: the file must be what it was before
// wrap, but for what the agent itself wrote into it since (Claude Code
// records a user ID on its first run): only wrap's edit is undone.
func (f *agentFixture) unwrap(t *testing.T, config string, before, after []byte) {
	t.Helper()
	now, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	// wrap's edit: what lies between the common prefix and suffix.
	p := 0
	for p < len(before) && p < len(after) && before[p] == after[p] {
		p++
	}
	s := 0
	for s < len(before)-p && s < len(after)-p && before[len(before)-1-s] == after[len(after)-1-s] {
		s++
	}
	was, wrapped := before[p:len(before)-s], after[p:len(after)-s]
	if bytes.Count(now, wrapped) != 1 {
		t.Fatalf("the agent changed wrap's edit of %s:\n%s", config, now)
	}
	want := bytes.Replace(now, wrapped, was, 1)
	if out, errOut, code := runMcpguard(t, f.env, "unwrap", "--project", f.home); code != 0 {
		t.Fatalf("unwrap: status %d\n%s%s", code, out, errOut)
	}
	if got, _ := os.ReadFile(config); !bytes.Equal(got, want) {
		t.Errorf("unwrap did not restore %s:\n%s\nwant:\n%s", config, got, want)
	}
}

// guardedArgs are the wrapped entry's args: the policy wrap wrote for
// it, then the server as the agent added it.
func (f *agentFixture) guardedArgs(client string) []string {
	return append(f.policyArgs(client+"-fs"), f.fs, f.root)
}

// policyArgs are mcpguard's words in an entry wrap gave the policy
// named name.
func (f *agentFixture) policyArgs(name string) []string {
	return []string{"--policy", filepath.Join(f.home, ".config", "mcpguard", name+".yaml"), "--"}
}

// isGuard reports whether command is the mcpguard binary under test.
func isGuard(command string) bool {
	real, _ := filepath.EvalSymlinks(mcpguardBin)
	return command == mcpguardBin || command == real
}

// listsGuard reports whether an agent's listing has the line
// prefix + the mcpguard binary under test + " " + rest.
func listsGuard(listing, prefix, rest string) bool {
	real, _ := filepath.EvalSymlinks(mcpguardBin)
	return strings.Contains(listing, prefix+mcpguardBin+" "+rest) || strings.Contains(listing, prefix+real+" "+rest)
}

// TestRealAgents: Claude Code, Gemini CLI and Codex CLI each read the
// config wrap wrote and connect to the server through mcpguard; a call
// Claude Code or Codex makes is refused by it, and the refusal reaches
// the model; unwrap gives their files back byte for byte.
func TestRealAgents(t *testing.T) {
	t.Parallel()

	t.Run("gemini", func(t *testing.T) {
		t.Parallel()
		f := newAgentFixture(t)
		runAgent(t, f.env, f.home, "gemini", "mcp", "add", "-s", "user", "fs", f.fs, f.root)
		config := filepath.Join(f.home, ".gemini", "settings.json")
		before, after := f.wrap(t, config)
		out := runAgent(t, f.env, f.home, "gemini", "mcp", "list")
		want := strings.Join(f.guardedArgs("gemini"), " ") + " (stdio) - Connected"
		if !listsGuard(out, "✓ fs: ", want) {
			t.Errorf("gemini mcp list does not show the wrapped server connected (want %q):\n%s", want, out)
		}
		f.unwrap(t, config, before, after)
	})

	// Codex's `mcp list` does not connect; its JSON listing shows what its
	// own parser read from the edited TOML. Then `codex exec` against a
	// stand-in of the Responses API on loopback: an allowed read reaches
	// the server, a refused one reaches the model as mcpguard's error
	// result, and status counts the refusal.
	t.Run("codex", func(t *testing.T) {
		t.Parallel()
		f := newAgentFixture(t)
		runAgent(t, f.env, f.home, "codex", "mcp", "add", "fs", "--", f.fs, f.root)
		config := filepath.Join(f.home, ".codex", "config.toml")
		added, err := os.ReadFile(config)
		if err != nil {
			t.Fatal(err)
		}
		// A user's comments and settings around the entry stay as they
		// are. A second entry, disabled, runs server-memory through npx
		// without a version: --pin-versions pins the release npx
		// installed (its cache in the fixture home), in the entry's own
		// quoting.
		memory := "[mcp_servers.memory]\ncommand = \"npx\"\nargs = ['-y', '@modelcontextprotocol/server-memory'] # tracks releases\nenabled = false\n"
		text := "# my Codex settings\nmodel = \"gpt-5\" # the usual\n\n" + string(added) + "startup_timeout_sec = 20 # slow disk\n\n" + memory
		if err := os.WriteFile(config, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		npx := filepath.Join(f.home, ".npm", "_npx", "0a1b2c3d4e5f6a7b")
		pkg := filepath.Join(npx, "node_modules", "@modelcontextprotocol", "server-memory")
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range map[string]string{
			filepath.Join(npx, "package.json"): `{"_npx": {"packages": ["@modelcontextprotocol/server-memory"]}}`,
			filepath.Join(pkg, "package.json"): `{"name": "@modelcontextprotocol/server-memory", "version": "2026.1.26"}`,
		} {
			if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		f.env = append(f.env, "npm_config_cache="+filepath.Join(f.home, ".npm"))
		before, after := f.wrap(t, config, "--pin-versions")
		pinnedArgs := "'@modelcontextprotocol/server-memory@2026.1.26'] # tracks releases\nenabled = false\n"
		if !bytes.HasPrefix(after, []byte("# my Codex settings\nmodel = \"gpt-5\" # the usual\n\n[mcp_servers.fs]\n")) ||
			!bytes.Contains(after, []byte("\nstartup_timeout_sec = 20 # slow disk\n\n[mcp_servers.memory]\n")) ||
			!bytes.HasSuffix(after, []byte(", \"npx\", '-y', "+pinnedArgs)) {
			t.Errorf("wrap changed more than the entries' command and args, and the pinned word:\n%s", after)
		}
		type codexEntry struct {
			Name      string `json:"name"`
			Enabled   bool   `json:"enabled"`
			Transport struct {
				Type    string   `json:"type"`
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"transport"`
			StartupTimeout float64 `json:"startup_timeout_sec"`
		}
		var list []codexEntry
		out := runAgent(t, append(f.env, "RUST_LOG=off"), f.home, "codex", "mcp", "list", "--json")
		if i := strings.Index(out, "\n["); i < 0 {
			t.Fatalf("codex mcp list --json printed no list:\n%s", out)
		} else if err := json.Unmarshal([]byte(out[i:]), &list); err != nil {
			t.Fatalf("codex mcp list --json: %v\n%s", err, out)
		}
		slices.SortFunc(list, func(a, b codexEntry) int { return strings.Compare(a.Name, b.Name) })
		pinned := append(f.policyArgs("codex-memory"), "npx", "-y", "@modelcontextprotocol/server-memory@2026.1.26")
		if len(list) != 2 || list[0].Name != "fs" || !list[0].Enabled || list[0].Transport.Type != "stdio" ||
			!isGuard(list[0].Transport.Command) || !slices.Equal(list[0].Transport.Args, f.guardedArgs("codex")) ||
			list[0].StartupTimeout != 20 ||
			list[1].Name != "memory" || list[1].Enabled || !isGuard(list[1].Transport.Command) || !slices.Equal(list[1].Transport.Args, pinned) {
			t.Errorf("codex reads the wrapped entries as %+v; want mcpguard %q, startup timeout 20, and %q, disabled", list, f.guardedArgs("codex"), pinned)
		}

		// One `codex exec` session: the model reads a file in the root,
		// then one outside it; Codex starts the server through mcpguard.
		read := func(path string) responsesCall {
			return responsesCall{"mcp__fs", "read_text_file", `{"path":` + quoteJSON(path) + `}`}
		}
		model := newResponsesModel(t, read(filepath.Join(f.root, "README.md")), read("/etc/hostname"))
		out = runAgent(t, append(f.env, "OPENAI_API_KEY=sk-test-not-a-key", "RUST_LOG=off"), f.home, "codex", codexExec(model, "read two files", "fs")...)
		got := model.results(t, 2, out)
		if !strings.Contains(got[0], "Some `code` and ünïcode.") || strings.Contains(got[0], "Rejected") {
			t.Errorf("the read inside the root came back as %q; want the file (how each request offered the call it was due: %q)\ncodex exec said:\n%s", got[0], model.offered, out)
		}
		if !strings.Contains(got[1], "Rejected unsafe MCP input") || !strings.Contains(got[1], `"error_code":"INPUT_REJECTED_PATH_SCOPE"`) {
			t.Errorf("the read outside the root came back as %q; want mcpguard's INPUT_REJECTED_PATH_SCOPE refusal\ncodex exec said:\n%s", got[1], out)
		}
		status, _, _ := runMcpguard(t, f.env, "status", "--project", f.home)
		if !strings.Contains(status, "codex-fs.yaml      session  1 ") || strings.Contains(status, "unpinned") {
			t.Errorf("status does not count the refusal for the entry, or calls the pinned one unpinned:\n%s", status)
		}
		// unwrap keeps the pin.
		f.unwrap(t, config, bytes.Replace(before, []byte("'@modelcontextprotocol/server-memory'"), []byte("'@modelcontextprotocol/server-memory@2026.1.26'"), 1), after)
	})

	// Claude Code, its config under CLAUDE_CONFIG_DIR (wrap follows it
	// there); then `claude -p` against a stand-in of the model API on
	// loopback: the "model" asks for a read outside the root and must get
	// mcpguard's refusal back as the tool's error result.
	t.Run("claude", func(t *testing.T) {
		t.Parallel()
		f := newAgentFixture(t)
		f.env = append(f.env, "CLAUDE_CONFIG_DIR="+filepath.Join(f.home, "claude-config"))
		runAgent(t, f.env, f.home, "claude", "mcp", "add", "-s", "user", "fs", "--", f.fs, f.root)
		config := filepath.Join(f.home, "claude-config", ".claude.json")
		before, after := f.wrap(t, config)
		out := runAgent(t, f.env, f.home, "claude", "mcp", "list")
		want := strings.Join(f.guardedArgs("claude-code"), " ") + " - ✔ Connected"
		if !listsGuard(out, "fs: ", want) {
			t.Errorf("claude mcp list does not show the wrapped server connected (want %q):\n%s", want, out)
		}

		model := newFakeModel(t, "mcp__fs__read_text_file", `{"path":"/etc/hostname"}`)
		env := append(slices.Clone(f.env), "ANTHROPIC_BASE_URL="+model.URL, "ANTHROPIC_API_KEY=sk-ant-test-not-a-key", "MCP_CONNECTION_NONBLOCKING=0")
		// MCP_CONNECTION_NONBLOCKING=0: the first request offers the
		// MCP tools (by default they join once connected).
		out = runAgent(t, env, f.home, "claude", "-p", "read /etc/hostname", "--allowedTools", "mcp__fs__read_text_file",
			"--model", "claude-sonnet-4-5", "--output-format", "text")
		result := model.toolResult(t)
		if !result.IsError || !strings.Contains(result.Text, "INPUT_REJECTED_PATH_SCOPE") {
			t.Errorf("the model got %+v; want an error result with mcpguard's INPUT_REJECTED_PATH_SCOPE\nclaude -p said:\n%s", result, out)
		}
		status, _, _ := runMcpguard(t, f.env, "status", "--project", f.home)
		if !strings.Contains(status, "guarded") || !strings.Contains(status, "claude-code-fs.yaml  session  1 ") {
			t.Errorf("status does not count the refusal for the entry:\n%s", status)
		}
		f.unwrap(t, config, before, after)
	})
}

// fakeModel stands in for the Messages API: it answers a request that
// offers the tool with one call of it, and a request that carries the
// tool's result with a short text, recording that result.
type fakeModel struct {
	*httptest.Server
	mu     sync.Mutex
	result *toolResult
}

type toolResult struct {
	IsError bool
	Text    string
}

func newFakeModel(t *testing.T, tool, input string) *fakeModel {
	m := &fakeModel{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, ok := readModelRequest(w, r)
		if !ok {
			return
		}
		offered := req.offers(tool)
		if res := lastToolResult(req.Messages[len(req.Messages)-1].Content); res != nil {
			m.mu.Lock()
			m.result = res
			m.mu.Unlock()
			writeMessage(w, req.Stream, `{"type":"text","text":""}`, `{"type":"text_delta","text":"done"}`, "end_turn")
			return
		}
		if offered {
			writeMessage(w, req.Stream, `{"type":"tool_use","id":"toolu_01","name":`+quoteJSON(tool)+`,"input":{}}`,
				`{"type":"input_json_delta","partial_json":`+quoteJSON(input)+`}`, "tool_use")
			return
		}
		writeMessage(w, req.Stream, `{"type":"text","text":""}`, `{"type":"text_delta","text":"ok"}`, "end_turn")
	}))
	t.Cleanup(m.Close)
	return m
}

// modelRequest is a Messages API request as the stand-ins read it.
type modelRequest struct {
	Stream   bool `json:"stream"`
	Messages []struct {
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// readModelRequest reads a POST to /v1/messages; it answers anything else
// itself (404, or 400 when the body is not such a request).
func readModelRequest(w http.ResponseWriter, r *http.Request) (*modelRequest, bool) {
	body, _ := io.ReadAll(r.Body)
	if !strings.HasSuffix(r.URL.Path, "/v1/messages") {
		w.WriteHeader(http.StatusNotFound)
		return nil, false
	}
	var req modelRequest
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		w.WriteHeader(http.StatusBadRequest)
		return nil, false
	}
	return &req, true
}

// offers reports whether the request offers the model the tool.
func (q *modelRequest) offers(tool string) bool {
	for _, x := range q.Tools {
		if x.Name == tool {
			return true
		}
	}
	return false
}

func (m *fakeModel) toolResult(t *testing.T) toolResult {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.result == nil {
		t.Fatal("the model never got the tool's result")
	}
	return *m.result
}

// lastToolResult reads a user message's tool_result block, if it has one.
func lastToolResult(content json.RawMessage) *toolResult {
	var blocks []struct {
		Type    string          `json:"type"`
		IsError bool            `json:"is_error"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(content, &blocks) != nil {
		return nil
	}
	for _, b := range blocks {
		if b.Type != "tool_result" {
			continue
		}
		res := &toolResult{IsError: b.IsError}
		var text string
		var parts []struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(b.Content, &text) == nil {
			res.Text = text
		} else if json.Unmarshal(b.Content, &parts) == nil {
			for _, p := range parts {
				res.Text += p.Text
			}
		}
		return res
	}
	return nil
}

// messageIDs numbers the stand-in's messages: Claude Code takes a
// message with the id of an earlier one for a repeat of it.
var messageIDs atomic.Int64

// writeMessage answers with one content block, streamed as server-sent
// events when the request asked for a stream.
func writeMessage(w http.ResponseWriter, stream bool, start, delta, stop string) {
	id := "msg_" + strconv.FormatInt(messageIDs.Add(1), 10)
	if !stream {
		var block map[string]any
		_ = json.Unmarshal([]byte(start), &block)
		var d map[string]any
		_ = json.Unmarshal([]byte(delta), &d)
		if s, ok := d["text"].(string); ok {
			block["text"] = s
		}
		if s, ok := d["partial_json"].(string); ok {
			var in any
			_ = json.Unmarshal([]byte(s), &in)
			block["input"] = in
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": map[string]int{"input_tokens": 1, "output_tokens": 1}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(name, data string) { fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data) }
	event("message_start", `{"type":"message_start","message":{"id":"`+id+`","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}`)
	event("content_block_start", `{"type":"content_block_start","index":0,"content_block":`+start+`}`)
	event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":`+delta+`}`)
	event("content_block_stop", `{"type":"content_block_stop","index":0}`)
	event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+stop+`","stop_sequence":null},"usage":{"output_tokens":1}}`)
	event("message_stop", `{"type":"message_stop"}`)
}

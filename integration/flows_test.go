package integration

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The lethal trifecta across servers, under a real agent: Claude Code
// (`claude -p`, offline) starts a filesystem server and a fetch server,
// each behind its own mcpguard, and a scripted stand-in of the model API
// on loopback asks for the calls. The two mcpguard processes share the
// agent session's labels: a credential file read through the filesystem
// server makes the fetch refused; the same fetch in a session without
// the read passes; the same chain inside one server is refused too.

// awsCredentials is a credentials file whose key gitleaks' aws rule
// finds (not one of AWS's documented example keys).
const awsCredentials = "[default]\naws_access_key_id = AKIAZ7XQ3RNB4WJ6PLMU\naws_secret_access_key = kQ7w/2Lm9Zr+Xy3Bt8Vn4Hs1Jd6Fg0Pc5Ae2Ui7O\n"

// scriptedModel stands in for the Messages API: while the request offers
// the tools of its script, it answers the Nth request carrying N tool
// results with the script's call N, then with a short text; it keeps the
// tool results of the longest conversation it saw.
type scriptedModel struct {
	*httptest.Server
	mu      sync.Mutex
	results []toolResult
}

type scriptedCall struct{ tool, input string }

func newScriptedModel(t *testing.T, script ...scriptedCall) *scriptedModel {
	m := &scriptedModel{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, ok := readModelRequest(w, r)
		if !ok {
			return
		}
		var results []toolResult
		for _, msg := range req.Messages {
			if res := lastToolResult(msg.Content); res != nil {
				results = append(results, *res)
			}
		}
		m.mu.Lock()
		if len(results) > len(m.results) {
			m.results = results
		}
		m.mu.Unlock()
		if n := len(results); n < len(script) && req.offers(script[0].tool) {
			c := script[n]
			writeMessage(w, req.Stream, `{"type":"tool_use","id":"toolu_0`+string(rune('1'+n))+`","name":`+quoteJSON(c.tool)+`,"input":{}}`,
				`{"type":"input_json_delta","partial_json":`+quoteJSON(c.input)+`}`, "tool_use")
			return
		}
		writeMessage(w, req.Stream, `{"type":"text","text":""}`, `{"type":"text_delta","text":"done"}`, "end_turn")
	}))
	t.Cleanup(m.Close)
	return m
}

// toolResults returns the results the model got, one per call of the
// script; fewer fail the test.
func (m *scriptedModel) toolResults(t *testing.T, want int, out string) []toolResult {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.results) != want {
		t.Fatalf("the model got %d tool results, want %d: %+v\nclaude -p said:\n%s", len(m.results), want, m.results, out)
	}
	return m.results
}

// flowsFixture is a home with a project, a credentials file in it (the
// filesystem server is confined to the project: Claude Code gives it as
// the client's root) and one outside it, the policies and the private
// runtime directory the session shares.
type flowsFixture struct {
	home, project, creds, homeCreds, runtime string
	env                                      []string
}

func newFlowsFixture(t *testing.T) *flowsFixture {
	t.Helper()
	requireGuard(t)
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &flowsFixture{home: home, project: filepath.Join(home, "project"), creds: filepath.Join(home, "project", "deploy", "credentials"),
		homeCreds: filepath.Join(home, ".aws", "credentials"), runtime: filepath.Join(home, "run")}
	for _, d := range []string{filepath.Dir(f.creds), filepath.Dir(f.homeCreds), f.runtime} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range map[string]string{f.creds: awsCredentials, f.homeCreds: awsCredentials, filepath.Join(f.project, "main.go"): "package main\n"} {
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The shipped filesystem policy with the server's root at home, so
	// that the credentials file is in reach of the server but outside the
	// project; the shipped fetch policy as it is.
	fs, err := os.ReadFile(shippedPolicy("filesystem"))
	if err != nil {
		t.Fatal(err)
	}
	f.writePolicy(t, "filesystem.yaml", strings.ReplaceAll(string(fs), `"${HOME}/src"`, `"${HOME}"`))
	f.writePolicy(t, "desk.yaml", `version: 1
server: desk
unknown_tools: deny
tools:
  read_file: {labels: [untrusted]}
  fetch: {labels: [untrusted, exfiltrates]}
flows:
  - after: [private, untrusted]
ingress:
  - {tools: [read_file], fields: [path], check: path_scope, roots: ["${HOME}"]}
  - {tools: [fetch], fields: [url], check: url, schemes: [https], deny_private: true}
`)
	f.env = append(agentEnv(home), "XDG_RUNTIME_DIR="+f.runtime, "ANTHROPIC_API_KEY=sk-ant-test-not-a-key", "MCP_CONNECTION_NONBLOCKING=0")
	return f
}

func (f *flowsFixture) writePolicy(t *testing.T, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.home, name), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// servers writes an --mcp-config file: each server behind mcpguard with
// its policy.
func (f *flowsFixture) servers(t *testing.T, name string, entries map[string][]string) string {
	t.Helper()
	config := map[string]any{}
	for server, args := range entries {
		config[server] = map[string]any{"command": mcpguardBin, "args": args}
	}
	b, err := json.Marshal(map[string]any{"mcpServers": config})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(f.home, name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// run drives `claude -p` in the project with the servers of config and
// the model's script, and returns the tool results the model got.
func (f *flowsFixture) run(t *testing.T, config string, script ...scriptedCall) []toolResult {
	t.Helper()
	model := newScriptedModel(t, script...)
	var allowed []string
	for _, c := range script {
		allowed = append(allowed, c.tool)
	}
	env := append(slices.Clone(f.env), "ANTHROPIC_BASE_URL="+model.URL)
	out := runAgent(t, env, f.project, "claude", "-p", "go on", "--mcp-config", config, "--strict-mcp-config",
		"--allowedTools", strings.Join(allowed, ","), "--model", "claude-sonnet-4-5", "--output-format", "text")
	return model.toolResults(t, len(script), out)
}

func TestFlowsUnderClaudeCode(t *testing.T) {
	t.Parallel()
	f := newFlowsFixture(t)
	logFile := filepath.Join(f.home, "mcpguard.log")
	guard := func(policy string, server ...string) []string {
		return append([]string{"--policy", filepath.Join(f.home, policy), "--log", logFile, "--"}, server...)
	}
	twoServers := f.servers(t, "two.json", map[string][]string{
		"fs":  guard("filesystem.yaml", npmServer(t, "mcp-server-filesystem"), f.home),
		"web": append([]string{"--policy", shippedPolicy("fetch"), "--log", logFile, "--"}, testserverBin),
	})
	oneServer := f.servers(t, "one.json", map[string][]string{"desk": guard("desk.yaml", testserverBin)})
	read := func(tool, path string) scriptedCall {
		return scriptedCall{tool, `{"path":` + quoteJSON(path) + `}`}
	}
	fetch := func(server string) scriptedCall {
		return scriptedCall{"mcp__" + server + "__fetch", `{"url":"https://example.com/?q=report"}`}
	}
	refused := func(t *testing.T, r toolResult, names ...string) {
		t.Helper()
		if !r.IsError || !strings.Contains(r.Text, "INPUT_REJECTED_FLOW") {
			t.Fatalf("the fetch after the read was not refused by flows: %+v", r)
		}
		for _, n := range names {
			if !strings.Contains(r.Text, n) {
				t.Errorf("the refusal does not name %q: %s", n, r.Text)
			}
		}
	}

	// The two sessions run at once.
	sessions := &atOnce{t: t}
	sessions.Run("across servers", func(t *testing.T) {
		rs := f.run(t, twoServers, read("mcp__fs__read_text_file", f.creds), fetch("web"))
		if rs[0].IsError || !strings.Contains(rs[0].Text, "[REDACTED:") || strings.Contains(rs[0].Text, "AKIAZ7XQ3RNB4WJ6PLMU") {
			t.Fatalf("the read: %+v", rs[0])
		}
		refused(t, rs[1], "server filesystem, tool read_text_file (a credential was redacted from its result)",
			"server filesystem, tool read_text_file (the policy labels the tool)")
	})
	sessions.Run("inside one server", func(t *testing.T) {
		rs := f.run(t, oneServer, read("mcp__desk__read_file", f.homeCreds), fetch("desk"))
		if rs[0].IsError {
			t.Fatalf("the read: %+v", rs[0])
		}
		refused(t, rs[1], "server desk, tool read_file", "it read a path outside the project")
	})
	sessions.Wait()
	// A new agent session, after the others ended: the fetch passes, and
	// the first use of the store removed their sessions' files.
	t.Run("fetch alone", func(t *testing.T) {
		rs := f.run(t, twoServers, fetch("web"))
		if rs[0].IsError || !strings.Contains(rs[0].Text, "Example page") {
			t.Fatalf("the fetch in a fresh session: %+v", rs[0])
		}
		files, _ := filepath.Glob(filepath.Join(f.runtime, "mcpguard", "*.labels"))
		if len(files) > 1 {
			t.Errorf("the files of ended sessions remain: %v", files)
		}
		if st, err := os.Stat(filepath.Join(f.runtime, "mcpguard")); err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("the state directory: %v, %v", st, err)
		}
	})
	log, _ := os.ReadFile(logFile)
	if !strings.Contains(string(log), `"event":"label"`) || !strings.Contains(string(log), `"error_code":"INPUT_REJECTED_FLOW"`) {
		t.Errorf("the log lacks the label and refusal lines:\n%s", log)
	}
}

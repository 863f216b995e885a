package integration

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The shipped policies of the popular servers, in front of the real npm
// servers. Nothing here leaves the machine: servers whose API base can be
// set are pointed at a loopback stub, which records what reaches it;
// browsers get a loopback proxy or a loopback DevTools address; kubectl
// gets a kubeconfig for 127.0.0.1. Calls that would go to a fixed public
// API (Slack, Brave, Sentry, Supabase) are judged with `mcpguard eval`
// against the server's live tools/list instead of being sent.

// popularCall is one tools/call.
type popularCall struct {
	tool string
	args map[string]any
	code string // for attacks: the rejection code
}

type popularServer struct {
	policy string   // policies/NAME.yaml, and policy/testdata/toolslists/NAME.json
	bin    string   // under node_modules/.bin
	args   []string // the server's arguments; STUB is the loopback stub's URL, PORT a loopback listener's port
	env    []string
	// live benign calls: each passes mcpguard and reaches the server (and,
	// where the server talks to the stub, the stub); eval benign calls
	// are only judged, as sending them would leave the machine.
	live, eval []popularCall
	attacks    []popularCall
	// stubPath, when set, is a path the live calls make reach the stub.
	stubPath string
}

// loopbackStub answers every HTTP request with an empty JSON object and
// records "METHOD path"; CONNECT requests (a proxy's) are recorded too.
type loopbackStub struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string
}

func newLoopbackStub(t *testing.T) *loopbackStub {
	s := &loopbackStub{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.Method+" "+r.URL.RequestURI())
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("{}"))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *loopbackStub) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	return port
}

func popularServers(t *testing.T, stubURL, home string) []popularServer {
	kubeconfig := filepath.Join(home, "kubeconfig")
	os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:"+closedPort(t)+"'}\n"+
		"contexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: x}\n"), 0o600)
	return []popularServer{
		{
			policy: "sequential-thinking", bin: "mcp-server-sequential-thinking",
			live: []popularCall{{tool: "sequentialthinking", args: map[string]any{"thought": "List the files,\nthen read <README>.", "nextThoughtNeeded": false, "thoughtNumber": 1, "totalThoughts": 1}}},
			attacks: []popularCall{
				{tool: "sequentialthinking", args: map[string]any{"thought": "ok\U000E0041", "nextThoughtNeeded": false, "thoughtNumber": 1, "totalThoughts": 1}, code: "INPUT_REJECTED_CONTROL_CHARS"},
			},
		},
		{
			policy: "postgres", bin: "mcp-server-postgres", args: []string{"postgresql://u:p@127.0.0.1:" + closedPort(t) + "/db"},
			live: []popularCall{{tool: "query", args: map[string]any{"sql": "SELECT 1"}}},
			attacks: []popularCall{
				{tool: "query", args: map[string]any{"sql": "COMMIT; DROP TABLE users"}, code: "INPUT_REJECTED_SQL"},
				{tool: "query", args: map[string]any{"sql": "SELECT pg_read_file('/etc/passwd')"}, code: "INPUT_REJECTED_SQL"},
			},
		},
		{
			policy: "gitlab", bin: "mcp-server-gitlab",
			env:      []string{"GITLAB_PERSONAL_ACCESS_TOKEN=glpat-test", "GITLAB_API_URL=" + stubURL + "/api/v4"},
			live:     []popularCall{{tool: "get_file_contents", args: map[string]any{"project_id": "group/project", "file_path": "README.md", "ref": "main"}}},
			stubPath: "/api/v4/projects/group%2Fproject/repository/files/README.md",
			attacks: []popularCall{
				{tool: "create_repository", args: map[string]any{"name": "dump", "visibility": "public"}, code: "INPUT_REJECTED_VISIBILITY"},
				{tool: "get_file_contents", args: map[string]any{"project_id": "g/p", "file_path": "../../etc/passwd"}, code: "INPUT_REJECTED_INVALID_PATH"},
			},
		},
		{
			policy: "notion", bin: "notion-mcp-server",
			env:      []string{"NOTION_TOKEN=ntn_test", "BASE_URL=" + stubURL},
			live:     []popularCall{{tool: "API-retrieve-a-page", args: map[string]any{"page_id": "59833787-2cf9-4fdf-8782-e53db20768a5"}}},
			stubPath: "/v1/pages/59833787-2cf9-4fdf-8782-e53db20768a5",
			attacks: []popularCall{
				{tool: "API-retrieve-a-block", args: map[string]any{"block_id": "../users"}, code: "INPUT_REJECTED_INVALID_ID"},
			},
		},
		{
			policy: "firecrawl", bin: "firecrawl-mcp",
			env:      []string{"FIRECRAWL_API_KEY=fc-test", "FIRECRAWL_API_URL=" + stubURL},
			live:     []popularCall{{tool: "firecrawl_scrape", args: map[string]any{"url": "https://example.com/", "formats": []any{"markdown"}}}},
			stubPath: "/scrape",
			attacks: []popularCall{
				{tool: "firecrawl_scrape", args: map[string]any{"url": "http://169.254.169.254/latest/meta-data/"}, code: "INPUT_REJECTED_URL"},
				{tool: "firecrawl_parse", args: map[string]any{"filePath": "/etc/passwd"}, code: "INPUT_REJECTED_PATH_SCOPE"},
			},
		},
		{
			policy: "context7", bin: "context7-mcp",
			env:      []string{"OTEL_SDK_DISABLED=true", "HTTPS_PROXY=" + stubURL, "HTTP_PROXY=" + stubURL},
			live:     []popularCall{{tool: "resolve-library-id", args: map[string]any{"query": "routing", "libraryName": "next.js"}}},
			stubPath: "CONNECT",
			attacks: []popularCall{
				{tool: "query-docs", args: map[string]any{"libraryId": "/../../admin", "query": "x"}, code: "INPUT_REJECTED_INVALID_ID"},
				{tool: "query-docs", args: map[string]any{"libraryId": "/a/b", "query": "sk_live_cFGw1U1rQx1jxdhkFOtE3d4x"}, code: "INPUT_REJECTED_SECRET"},
			},
		},
		{
			policy: "playwright", bin: "playwright-mcp", args: []string{"--headless", "--proxy-server", "http://127.0.0.1:" + closedPort(t)},
			live: []popularCall{{tool: "browser_navigate", args: map[string]any{"url": "https://example.com/"}}},
			attacks: []popularCall{
				{tool: "browser_navigate", args: map[string]any{"url": "file:///etc/passwd"}, code: "INPUT_REJECTED_URL"},
				{tool: "browser_file_upload", args: map[string]any{"paths": []any{"/etc/shadow"}}, code: "INPUT_REJECTED_PATH_SCOPE"},
				{tool: "browser_run_code_unsafe", args: map[string]any{"code": "async () => 1"}, code: "INPUT_REJECTED_TOOL_DENIED"},
			},
		},
		{
			policy: "chrome-devtools", bin: "chrome-devtools-mcp",
			args: []string{"--no-usage-statistics", "--browserUrl", "http://127.0.0.1:" + closedPort(t)},
			live: []popularCall{{tool: "list_pages", args: map[string]any{}}},
			attacks: []popularCall{
				{tool: "new_page", args: map[string]any{"url": "http://127.0.0.1:9222/json"}, code: "INPUT_REJECTED_URL"},
				{tool: "evaluate_script", args: map[string]any{"function": "() => 1"}, code: "INPUT_REJECTED_TOOL_DENIED"},
			},
		},
		{
			policy: "kubernetes", bin: "mcp-server-kubernetes", env: []string{"KUBECONFIG=" + kubeconfig},
			live: []popularCall{{tool: "kubectl_get", args: map[string]any{"resourceType": "pods", "namespace": "default", "output": "json"}}},
			attacks: []popularCall{
				{tool: "kubectl_get", args: map[string]any{"resourceType": "pods", "name": "--kubeconfig=/tmp/x"}, code: "INPUT_REJECTED_KUBECTL_OPTION_INJECTION"},
				{tool: "exec_in_pod", args: map[string]any{"name": "web", "command": []any{"id"}}, code: "INPUT_REJECTED_TOOL_DENIED"},
			},
		},
		{
			policy: "slack", bin: "mcp-server-slack", env: []string{"SLACK_BOT_TOKEN=xoxb-test", "SLACK_TEAM_ID=T0TEST"},
			eval: []popularCall{{tool: "slack_post_message", args: map[string]any{"channel_id": "C0123ABCD", "text": "Build passed :tada:"}}},
			attacks: []popularCall{
				{tool: "slack_get_channel_history", args: map[string]any{"channel_id": "C0123ABCD&inclusive=true"}, code: "INPUT_REJECTED_INVALID_ID"},
			},
		},
		{
			policy: "brave-search", bin: "mcp-server-brave-search", env: []string{"BRAVE_API_KEY=test"},
			eval: []popularCall{{tool: "brave_web_search", args: map[string]any{"query": "golang context", "count": 5}}},
			attacks: []popularCall{
				{tool: "brave_web_search", args: map[string]any{"query": "ghp_UhrwyL398zPKPMvXkgMzr53w1fNtTQAVZOxu"}, code: "INPUT_REJECTED_SECRET"},
			},
		},
		{
			policy: "sentry", bin: "sentry-mcp", env: []string{"SENTRY_ACCESS_TOKEN=test"},
			eval: []popularCall{{tool: "find_projects", args: map[string]any{"organizationSlug": "my-org", "regionUrl": "https://us.sentry.io"}}},
			attacks: []popularCall{
				{tool: "find_projects", args: map[string]any{"organizationSlug": "my-org", "regionUrl": "https://sentry.io.x.example"}, code: "INPUT_REJECTED_URL"},
				{tool: "execute_sentry_tool", args: map[string]any{"name": "find_projects", "arguments": map[string]any{}}, code: "INPUT_REJECTED_TOOL_DENIED"},
			},
		},
		{
			policy: "supabase", bin: "mcp-server-supabase", env: []string{"SUPABASE_ACCESS_TOKEN=sbp_test"},
			args: []string{"--features=account,database,debugging,development,functions,branching,storage"},
			eval: []popularCall{{tool: "execute_sql", args: map[string]any{"project_id": "abcdefghijklmnopqrst", "query": "select 1"}}},
			attacks: []popularCall{
				{tool: "execute_sql", args: map[string]any{"project_id": "abcdefghijklmnopqrst", "query": "drop table users"}, code: "INPUT_REJECTED_SQL"},
				{tool: "apply_migration", args: map[string]any{"project_id": "abcdefghijklmnopqrst", "name": "x", "query": "select 1"}, code: "INPUT_REJECTED_TOOL_DENIED"},
			},
		},
	}
}

// TestShippedPopularServers starts each server once, behind its shipped
// policy: denied tools are hidden, benign calls reach the server, attacks
// are refused by mcpguard. A tee between mcpguard and the server keeps
// what the server sent, so its own tools/list (which must be the saved one
// of the policy's pinned version) is read as the server wrote it, and
// `mcpguard check` and `eval` run against it.
func TestShippedPopularServers(t *testing.T) {
	t.Parallel()
	requireGuard(t)
	home, _ := shippedHome(t)
	for i, listed := range popularServers(t, "", home) {
		t.Run(listed.policy, func(t *testing.T) {
			// Each server gets its own stub, so that the requests the stub
			// sees are this server's alone while the others run beside it.
			t.Parallel()
			stub := newLoopbackStub(t)
			ps := popularServers(t, stub.srv.URL, t.TempDir())[i]
			bin := npmServer(t, ps.bin)
			if _, err := os.Stat(bin); err != nil {
				t.Fatalf("%s is not installed: %v", ps.bin, err)
			}
			env := append([]string{"HOME=" + home, "OTEL_SDK_DISABLED=true"}, ps.env...)
			sent := filepath.Join(t.TempDir(), "server.out")
			tapped := append([]string{"sh", "-c", `"$@" | tee "$0"`, sent, bin}, ps.args...)

			cs := connect(t, nil, withEnv(guardArgv(t, &guardOpts{Policy: shippedPolicy(ps.policy)}, tapped...), env...)...)
			guarded, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range ps.attacks {
				if c.code == "INPUT_REJECTED_TOOL_DENIED" && slices.ContainsFunc(guarded.Tools, func(tool *mcp.Tool) bool { return tool.Name == c.tool }) {
					t.Errorf("denied tool %s is listed", c.tool)
				}
				callRejected(t, cs, c.tool, c.args, c.code)
			}
			before := len(stub.requests())
			for _, c := range ps.live {
				callReachesServer(t, cs, c)
			}
			if ps.stubPath != "" {
				got := stub.requests()[before:]
				if !slices.ContainsFunc(got, func(r string) bool { return strings.Contains(r, ps.stubPath) }) {
					t.Errorf("the benign calls did not reach the server's API (the stub saw %q, want %s)", got, ps.stubPath)
				}
			}
			// Closing waits for mcpguard, which waits for the server and
			// the tee: what the server sent is all in the file.
			cs.Close()

			liveList, names := sentToolsList(t, sent)
			if len(guarded.Tools) > len(names) {
				t.Errorf("guarded tools/list has %d tools, the server %d", len(guarded.Tools), len(names))
			}
			saved := savedToolNames(t, ps.policy)
			slices.Sort(names)
			if !slices.Equal(names, saved) {
				t.Fatalf("the server lists %q; the policy was written against %q", names, saved)
			}
			listFile := filepath.Join(t.TempDir(), "tools.json")
			if err := os.WriteFile(listFile, liveList, 0o644); err != nil {
				t.Fatal(err)
			}
			if out, status := runGuardCmd(t, "check", "--tools-list", listFile, shippedPolicy(ps.policy)); status != 0 || strings.Contains(out, "has no tool") {
				t.Errorf("mcpguard check against the live tools/list: status %d\n%s", status, out)
			}
			for _, c := range ps.eval {
				msg := filepath.Join(t.TempDir(), "call.json")
				body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
					"params": map[string]any{"name": c.tool, "arguments": c.args}})
				os.WriteFile(msg, body, 0o644)
				if out, status := runGuardCmd(t, "eval", "--policy", shippedPolicy(ps.policy), "--tools-list", listFile, msg); status != 0 {
					t.Errorf("eval of benign %s: status %d\n%s", c.tool, status, out)
				}
			}
		})
	}
}

// sentToolsList reads the lines a server wrote (file) and returns the
// result of its tools/list, as it wrote it, and the tool names in it. The
// list must be whole in one result (no next page).
func sentToolsList(t *testing.T, file string) (json.RawMessage, []string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		var m struct {
			Result json.RawMessage `json:"result"`
		}
		var list struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if json.Unmarshal([]byte(line), &m) != nil || json.Unmarshal(m.Result, &list) != nil || list.Tools == nil {
			continue
		}
		if list.NextCursor != "" {
			t.Fatalf("the server pages its tools/list; this test reads one page")
		}
		var names []string
		for _, tool := range list.Tools {
			names = append(names, tool.Name)
		}
		return m.Result, names
	}
	t.Fatalf("no tools/list result among the %d bytes the server sent", len(data))
	return nil, nil
}

// savedToolNames are the tool names of a policy's saved tools/list.
func savedToolNames(t *testing.T, policy string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(moduleRoot, "policy", "testdata", "toolslists", policy+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// callReachesServer sends a benign call and requires that mcpguard let it
// through: the server's own answer (which may be an error, as no account
// or browser is behind it) comes back, not a rejection.
func callReachesServer(t *testing.T, cs *mcp.ClientSession, c popularCall) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
	if err != nil {
		if strings.Contains(err.Error(), "Rejected unsafe MCP input") || strings.Contains(err.Error(), "INPUT_REJECTED") {
			t.Errorf("benign %s refused: %v", c.tool, err)
		}
		return
	}
	for _, content := range res.Content {
		if tc, ok := content.(*mcp.TextContent); ok && strings.HasPrefix(tc.Text, "Rejected unsafe MCP input") {
			t.Errorf("benign %s refused: %s", c.tool, truncate(tc.Text, 500))
		}
	}
}

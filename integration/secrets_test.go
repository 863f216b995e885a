package integration

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// knownToken is the GITHUB_TOKEN of the servers these tests start: a
// known secret of their environment (and a github-pat by its shape).
const knownToken = "ghp_Int3grat10nT3stT0kenAbCdEfGhIjKlMnOp"

// everyForm is every way a test server may write the known token.
func everyForm(v string) []string {
	return []string{v, base64.StdEncoding.EncodeToString([]byte("x" + v))[4:], hex.EncodeToString([]byte(v)), url.QueryEscape(v)}
}

// seenByClient is everything the client received in a call: the result's
// content and structured content, and the logs log notifications the
// tool sends before its reply.
func seenByClient(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, logs int) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	rec := recorderOf(cs)
	rec.mu.Lock()
	before := len(rec.logs)
	rec.mu.Unlock()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	rec.waitFor(t, strconv.Itoa(logs)+" log notifications from "+name, func() bool { return len(rec.logs) >= before+logs })
	rec.mu.Lock()
	got := slices.Clone(rec.logs[before:])
	rec.mu.Unlock()
	if len(got) != logs {
		t.Fatalf("%s sent %d log notifications, want %d", name, len(got), logs)
	}
	return mustJSON(toJSON(t, res)) + "\n" + mustJSON(toJSON(t, got))
}

// TestSecretsTestServer: behind the baseline (no policy), a server that
// prints its environment, credentials and images leaks none of them to
// the client, and a call that carries a credential never reaches it.
func TestSecretsTestServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	record, logFile := filepath.Join(dir, "record.jsonl"), filepath.Join(dir, "mcpguard.log")
	cs := connect(t, nil, withEnv(guardArgv(t, &guardOpts{Log: logFile}, testserverBin, "-record", record), "GITHUB_TOKEN="+knownToken)...)

	seen := seenByClient(t, cs, "leak_env", map[string]any{"name": "GITHUB_TOKEN"}, 1)
	for _, form := range everyForm(knownToken) {
		if strings.Contains(seen, form) {
			t.Errorf("the client saw the known secret (as %q): %s", form, truncate(seen, 3000))
		}
	}
	if !strings.Contains(seen, "[REDACTED:") || !strings.Contains(seen, "[image removed: host collector.example]") {
		t.Errorf("no redaction or image stand-in: %s", truncate(seen, 3000))
	}

	seen = seenByClient(t, cs, "leak_credentials", map[string]any{}, 0)
	for _, c := range []string{"AKIAZ7QWERTYUIOPASDF", "ghp_k3Yx9QmW2vR7tL5nB8cD1fG4hJ6pS0aZ2eXu", "xoxb-223344556677", "MIIEowIBAAKCAQEAvQ7d9Kp2mX4rT1yU8wZ3bN6"} {
		if strings.Contains(seen, c) {
			t.Errorf("the client saw credential %s: %s", c, truncate(seen, 3000))
		}
	}
	for _, rule := range []string{"aws-access-token", "github-pat", "slack-bot-token", "private-key"} {
		if !strings.Contains(seen, "[REDACTED:"+rule+"]") {
			t.Errorf("no [REDACTED:%s]: %s", rule, truncate(seen, 3000))
		}
	}

	text := callText(t, cs, "leak_images", map[string]any{})
	if strings.Contains(text, "collector.example/") && !strings.Contains(text, "(https://collector.example/page)") {
		t.Errorf("an image URL survived: %s", text)
	}
	if n := strings.Count(text, "[image removed: host collector.example]"); n < 7 {
		t.Errorf("%d images removed, want 7: %s", n, text)
	}
	if !strings.Contains(text, "data:image/png;base64,") || !strings.Contains(text, "[a link](https://collector.example/page)") {
		t.Errorf("a data: image or a link was removed: %s", text)
	}

	// Ingress: a call carrying the known secret or a credential is refused
	// and never reaches the server.
	callRejected(t, cs, "echo", map[string]any{"text": "here: " + knownToken}, "INPUT_REJECTED_SECRET")
	callRejected(t, cs, "echo", map[string]any{"text": "https://evil.example/?k=" + base64.StdEncoding.EncodeToString([]byte(knownToken))}, "INPUT_REJECTED_SECRET")
	callRejected(t, cs, "echo", map[string]any{"text": "aws AKIAZ7QWERTYUIOPASDF"}, "INPUT_REJECTED_SECRET")
	if got := callText(t, cs, "echo", map[string]any{"text": "commit 9fceb02d0ae598e95dc970b74767f19372d61af8"}); !strings.Contains(got, "9fceb02") {
		t.Errorf("a benign call changed: %q", got)
	}
	cs.Close()
	rec, _ := os.ReadFile(record)
	for _, form := range []string{knownToken, base64.StdEncoding.EncodeToString([]byte(knownToken)), "AKIAZ7QWERTYUIOPASDF"} {
		if strings.Contains(string(rec), form) {
			t.Errorf("the server received a refused secret")
		}
	}
	logs, _ := os.ReadFile(logFile)
	if strings.Contains(string(logs), knownToken) || strings.Contains(string(logs), "AKIAZ7QWERTYUIOPASDF") {
		t.Errorf("the decision log holds a secret")
	}
	for _, want := range []string{`"rule":"known-secret"`, `"rule":"aws-access-token"`, `"error_code":"INPUT_REJECTED_SECRET"`, `"canonicaliser":"secrets"`} {
		if !strings.Contains(string(logs), want) {
			t.Errorf("the decision log has no %s", want)
		}
	}
}

// TestSecretsEverythingGetEnv: the real server-everything's get-env tool,
// allowed by the policy, returns the server's whole environment; the known
// secrets in it never reach the client (Go SDK client, built binary).
func TestSecretsEverythingGetEnv(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pol := filepath.Join(dir, "everything.yaml")
	if err := os.WriteFile(pol, []byte("version: 1\nserver: everything\ntools:\n  get-env: allow\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, nil, withEnv(guardArgv(t, &guardOpts{Policy: pol}, npmServer(t, "mcp-server-everything")),
		"GITHUB_TOKEN="+knownToken, "MY_SERVICE_API_KEY=plain-value-without-shape-1234", "UNRELATED_SETTING=visible-setting-value")...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-env", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	seen := mustJSON(toJSON(t, res))
	if !strings.Contains(seen, "visible-setting-value") {
		t.Fatalf("get-env did not return the environment: %s", truncate(seen, 2000))
	}
	for _, v := range []string{knownToken, "plain-value-without-shape-1234"} {
		if strings.Contains(seen, v) {
			t.Errorf("the client saw a known secret of the server's environment")
		}
	}
	if !strings.Contains(seen, "[REDACTED:known-secret]") {
		t.Errorf("no redaction: %s", truncate(seen, 2000))
	}
}

// TestSecretsStderrRedacted: a server that logs its token to stderr does
// not put it on mcpguard's stderr (the agent's log viewer).
func TestSecretsStderrRedacted(t *testing.T) {
	t.Parallel()
	p := startRaw(t, withEnv(guardArgv(t, &guardOpts{Log: filepath.Join(t.TempDir(), "mcpguard.log")}, testserverBin), "GITHUB_TOKEN="+knownToken)...)
	p.guarded = true
	p.initialize()
	p.callOK(1, "leak_env", map[string]any{"name": "GITHUB_TOKEN"})
	if _, err := p.closeAndWait(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	got := p.stderr.String()
	if strings.Contains(got, knownToken) || !strings.Contains(got, "debug: GITHUB_TOKEN=[REDACTED:") {
		t.Errorf("mcpguard's stderr: %q", truncate(got, 2000))
	}
}

package integration

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tailscale/hujson"
)

// hujsonStandardize reads JSONC as Cursor and VS Code do.
func hujsonStandardize(b []byte) ([]byte, error) { return hujson.Standardize(b) }

// runMcpguard runs the mcpguard binary with args under env and returns its
// stdout, stderr and status.
func runMcpguard(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	requireGuard(t)
	cmd := exec.Command(mcpguardBin, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// cleanEnv is the test's environment with HOME replaced and the XDG
// directories removed, so that configs, policies and the log all live
// under home.
func cleanEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "XDG_") || strings.HasPrefix(kv, "CODEX_HOME=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home)
}

// TestWrapClaudeCodeEntry: `mcpguard wrap --policy-dir` rewrites a Claude
// Code entry for the real server-filesystem; the entry, run exactly as
// written (command, args, env) the way Claude Code starts it, serves the
// Go SDK client through mcpguard under the copied shipped policy, which
// refuses a read outside the root; status shows the server guarded with
// that policy and the rejection from the log; unwrap gives the file back
// byte for byte.
func TestWrapClaudeCodeEntry(t *testing.T) {
	t.Parallel()
	requireGuard(t)
	bin := npmServer(t, "mcp-server-filesystem")
	home, root := shippedHome(t)
	config := filepath.Join(home, ".claude.json")
	orig := []byte(`{
  "numStartups": 3,
  "mcpServers": {
    "filesystem": {
      "type": "stdio",
      "command": ` + quoteJSON(bin) + `,
      "args": [
        ` + quoteJSON(root) + `
      ],
      "env": {
        "HOME": ` + quoteJSON(home) + `
      }
    },
    "docs": {
      "type": "http",
      "url": "https://example.com/mcp"
    }
  }
}
`)
	if err := os.WriteFile(config, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	env := cleanEnv(home)
	project := t.TempDir() // no project configs in it
	out, errOut, code := runMcpguard(t, env, "wrap", "--project", project, "--policy-dir", filepath.Join(home, ".config", "mcpguard"))
	if code != 0 {
		t.Fatalf("wrap: status %d\n%s%s", code, out, errOut)
	}
	t.Logf("wrap:\n%s", out)

	var doc struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	wrapped, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	if err := jsonv2.Unmarshal(wrapped, &doc); err != nil {
		t.Fatalf("the wrapped config is not JSON: %v\n%s", err, wrapped)
	}
	entry := doc.MCPServers["filesystem"]
	policyPath := filepath.Join(home, ".config", "mcpguard", "claude-code-filesystem.yaml")
	wantArgs := []string{"--policy", policyPath, "--", bin, root}
	realBin, _ := filepath.EvalSymlinks(mcpguardBin)
	if entry.Command != realBin && entry.Command != mcpguardBin || !slices.Equal(entry.Args, wantArgs) {
		t.Fatalf("wrapped entry: %q %q; want %q %q", entry.Command, entry.Args, mcpguardBin, wantArgs)
	}
	// A copy of the shipped policy, its roots set to the directory the
	// server was given, named after its entry (its rejections count apart).
	shipped, _ := os.ReadFile(filepath.Join(moduleRoot, "policies", "filesystem.yaml"))
	want := bytes.Replace(shipped, []byte(`roots: ["${HOME}/src"]`),
		[]byte(`roots: [`+quoteJSON(root)+`] # the server's directories (mcpguard wrap)`), 1)
	want = bytes.Replace(want, []byte("\nserver: filesystem\n"), []byte("\nserver: \"claude-code-filesystem\"\n"), 1)
	if copied, err := os.ReadFile(policyPath); err != nil || !bytes.Equal(copied, want) {
		t.Fatalf("the policy is not policies/filesystem.yaml with the server's root (%v):\n%s", err, copied)
	}

	// Start the entry as Claude Code does: command and args as written,
	// its env over the inherited environment.
	cmdEnv := slices.Clone(env)
	for k, v := range entry.Env {
		cmdEnv = append(cmdEnv, k+"="+v)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.Command(entry.Command, entry.Args...)
	cmd.Env = cmdEnv
	cmd.Stderr = &testWriter{t: t, prefix: "wrapped stderr: "}
	client := mcp.NewClient(&mcp.Implementation{Name: "claude-code-like", Version: "1"}, nil)
	client.AddRoots(&mcp.Root{URI: "file://" + root, Name: "tree"})
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connect to the wrapped entry: %v", err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := callText(t, cs, "read_text_file", map[string]any{"path": filepath.Join(root, "README.md")}); !strings.Contains(got, "# demo") {
		t.Errorf("read inside the root: %q", got)
	}
	callRejected(t, cs, "read_text_file", map[string]any{"path": "/etc/hostname"}, "INPUT_REJECTED_PATH_SCOPE")
	cs.Close()

	out, errOut, code = runMcpguard(t, env, "status", "--project", project)
	if code != 0 {
		t.Fatalf("status: %d\n%s%s", code, out, errOut)
	}
	t.Logf("status:\n%s", out)
	var line []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 5 && f[0] == "claude-code" && f[1] == "filesystem" {
			line = f
		}
	}
	if line == nil || line[2] != "guarded" || line[3] != "~/.config/mcpguard/claude-code-filesystem.yaml" || line[4] != "session" || line[5] != "1" {
		t.Errorf("status line for filesystem: %q (want guarded, its policy, pinned per session, 1 rejection)\n%s", line, out)
	}
	if !strings.Contains(out, "docs") || !strings.Contains(out, "remote") {
		t.Errorf("status does not list the remote server:\n%s", out)
	}

	if out, errOut, code = runMcpguard(t, env, "unwrap", "--project", project); code != 0 {
		t.Fatalf("unwrap: %d\n%s%s", code, out, errOut)
	}
	if got, _ := os.ReadFile(config); !bytes.Equal(got, orig) {
		t.Errorf("unwrap did not restore the file:\n%s\nwant:\n%s", got, orig)
	}
	if fi, err := os.Stat(config); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode after unwrap: %v %v", fi.Mode(), err)
	}
}

func quoteJSON(s string) string {
	b, _ := jsonv2.Marshal(s)
	return string(b)
}

// TestWrapInitStarterPolicy: `wrap --policy-dir --init` runs init for a
// server no shipped policy fits (our test server, started by init the way
// `mcpguard init` starts it), writes the starter policy into the policy
// directory, and the entry references it; the policy passes
// `mcpguard check`, and the wrapped entry serves the Go SDK client.
func TestWrapInitStarterPolicy(t *testing.T) {
	t.Parallel()
	requireGuard(t)
	home := t.TempDir()
	dir := filepath.Join(home, ".cursor")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "mcp.json")
	orig := []byte("{\n  // the test server\n  \"mcpServers\": {\n    \"hostile\": {\"command\": " + quoteJSON(testserverBin) + "},\n  },\n}\n")
	if err := os.WriteFile(config, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	env := cleanEnv(home)
	policyDir := filepath.Join(home, "policies")
	out, errOut, code := runMcpguard(t, env, "wrap", "--project", t.TempDir(), "--policy-dir", policyDir, "--init")
	if code != 0 {
		t.Fatalf("wrap --init: status %d\n%s%s", code, out, errOut)
	}
	policyPath := filepath.Join(policyDir, "cursor-hostile.yaml")
	text, err := os.ReadFile(policyPath)
	if err != nil || !strings.Contains(string(text), "\nmode: audit\n") {
		t.Fatalf("no starter policy at %s (%v):\n%s\n%s%s", policyPath, err, text, out, errOut)
	}
	if _, errOut, code := runMcpguard(t, env, "check", policyPath); code != 0 {
		t.Fatalf("check: %d %s", code, errOut)
	}
	wrapped, _ := os.ReadFile(config)
	want := "{\"command\": " + quoteJSON(mcpguardBin) + ", \"args\": [\"--policy\", " + quoteJSON(policyPath) + ", \"--\", " + quoteJSON(testserverBin) + "]}"
	if realBin, _ := filepath.EvalSymlinks(mcpguardBin); realBin != mcpguardBin {
		want = strings.Replace(want, quoteJSON(mcpguardBin), quoteJSON(realBin), 1)
	}
	if !strings.Contains(string(wrapped), want) || !strings.HasPrefix(string(wrapped), "{\n  // the test server\n") {
		t.Fatalf("wrapped config:\n%s\nwant the entry %s", wrapped, want)
	}
	var doc struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	std, err := hujsonStandardize(wrapped)
	if err != nil {
		t.Fatal(err)
	}
	if err := jsonv2.Unmarshal(std, &doc); err != nil {
		t.Fatal(err)
	}
	e := doc.MCPServers["hostile"]
	cs := connect(t, nil, append([]string{e.Command}, e.Args...)...)
	listTools(t, cs)
}

// TestWrapVSCodeWorkspaceEntry: the standard VS Code filesystem entry,
// whose directory is ${workspaceFolder}, works out of the box once
// wrapped: the policy copy follows the directories the client gives the
// server (client_roots) instead of the shipped ${HOME}/src. Started as
// VS Code starts it (the variable expanded) under the TypeScript SDK
// client, which announces the workspace as its root, reads in the
// workspace pass, relative ones included, and reads outside it (the
// shipped root among them) are refused by mcpguard. Started by a client
// that announces no roots, the directory VS Code expanded into the
// command line is the root.
func TestWrapVSCodeWorkspaceEntry(t *testing.T) {
	t.Parallel()
	requireGuard(t)
	bin := npmServer(t, "mcp-server-filesystem")
	home, shippedRoot := shippedHome(t)
	workspace := filepath.Join(home, "work", "app")
	makeTree(t, workspace)
	config := filepath.Join(home, ".config", "Code", "User", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(config), 0o755); err != nil {
		t.Fatal(err)
	}
	orig := []byte(`{
  "servers": {
    "filesystem": {
      "type": "stdio",
      "command": ` + quoteJSON(bin) + `,
      "args": ["${workspaceFolder}"]
    }
  }
}
`)
	if err := os.WriteFile(config, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	env := cleanEnv(home)
	out, errOut, code := runMcpguard(t, env, "wrap", "--project", t.TempDir(), "--policy-dir", filepath.Join(home, ".config", "mcpguard"))
	if code != 0 || !strings.Contains(out, "roots follow the agent") {
		t.Fatalf("wrap: status %d\n%s%s", code, out, errOut)
	}
	var doc struct {
		Servers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"servers"`
	}
	wrapped, _ := os.ReadFile(config)
	if err := jsonv2.Unmarshal(wrapped, &doc); err != nil {
		t.Fatal(err)
	}
	entry := doc.Servers["filesystem"]
	// VS Code expands ${workspaceFolder} in every argument.
	args := slices.Clone(entry.Args)
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "${workspaceFolder}", workspace)
	}
	logFile := filepath.Join(home, "mcpguard.log")
	calls := []tsCall{
		{Name: "read_text_file", Arguments: map[string]any{"path": filepath.Join(workspace, "README.md")}},
		{Name: "read_text_file", Arguments: map[string]any{"path": "README.md"}},
		{Name: "read_text_file", Arguments: map[string]any{"path": filepath.Join(shippedRoot, "README.md")}},
		{Name: "read_text_file", Arguments: map[string]any{"path": "/etc/hostname"}},
		{Name: "read_text_file", Arguments: map[string]any{"path": filepath.Join(workspace, "..", "..", "src", "README.md")}},
	}
	for _, announce := range []bool{true, false} {
		spec := map[string]any{"command": entry.Command, "args": append([]string{"--log", logFile}, args...), "cwd": workspace,
			"env": map[string]string{"HOME": home, "PATH": os.Getenv("PATH")}, "listTools": true, "calls": calls}
		if announce {
			spec["roots"] = []string{"file://" + workspace}
		}
		got := runTSClientSpec(t, spec, len(calls))
		for i, o := range got[:2] {
			if o.Result == nil || o.Result.IsError || len(o.Result.Content) == 0 || !strings.Contains(o.Result.Content[0].Text, "# demo") {
				t.Errorf("roots announced %v: %s in the workspace: %s", announce, calls[i].Arguments["path"], mustJSON(o))
			}
		}
		for i, o := range got[2:] {
			wantTSRejected(t, calls[2+i], o, "INPUT_REJECTED_PATH_SCOPE")
		}
	}
	if out, errOut, code = runMcpguard(t, env, "unwrap", "--project", t.TempDir()); code != 0 {
		t.Fatalf("unwrap: %d\n%s%s", code, out, errOut)
	}
	if got, _ := os.ReadFile(config); !bytes.Equal(got, orig) {
		t.Errorf("unwrap did not restore the file:\n%s", got)
	}
}

// TestServerNameFlag: --server-name, which wrap writes into an entry
// guarded by the baseline, is the name the log records the server under
// (so that status counts each entry's rejections apart), over the
// command's base name.
func TestServerNameFlag(t *testing.T) {
	t.Parallel()
	logFile := filepath.Join(t.TempDir(), "mcpguard.log")
	cs := connect(t, nil, guardArgv(t, &guardOpts{Log: logFile, Args: []string{"--server-name", "cursor-notes"}}, testserverBin)...)
	token := "ghp_" + strings.Repeat("R2d2C3po", 4) + "1234"
	callRejected(t, cs, "echo", map[string]any{"text": token}, "INPUT_REJECTED_SECRET")
	cs.Close()
	log, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(log, []byte(`"server":"cursor-notes"`)) || bytes.Contains(log, []byte(`"server":"testserver"`)) {
		t.Errorf("the log does not record the server as cursor-notes:\n%s", log)
	}
}

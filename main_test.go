package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func runCLI(t *testing.T, stdin string, args ...string) (status int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	status = run(append([]string{"mcpguard"}, args...), strings.NewReader(stdin), &out, &errb)
	return status, out.String(), errb.String()
}

func TestEverythingAfterDashDashIsTheServer(t *testing.T) {
	// "check" after -- is a program to run, not the subcommand: there is no
	// such program, so run exits 127 and nothing reaches stdout.
	status, stdout, stderr := runCLI(t, "", "--log", "-", "--", "check", "x.yaml")
	if status != 127 || stdout != "" || !strings.Contains(stderr, "cannot start") {
		t.Errorf("status %d stdout %q stderr %q", status, stdout, stderr)
	}
}

func TestUnwritableLogKeepsServing(t *testing.T) {
	status, stdout, stderr := runCLI(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n",
		"--log", "/proc/no-such-dir/mcpguard.log", "--", "sh", "-c", "cat >/dev/null; exit 4")
	if status != 4 || stdout != "" || strings.Count(stderr, "cannot open log") != 1 {
		t.Errorf("status %d stdout %q stderr %q", status, stdout, stderr)
	}
}

func TestBadPolicyStopsBeforeTheServer(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("version: 1\nmode: lenient\n"), 0o600)
	marker := filepath.Join(dir, "started")
	status, _, stderr := runCLI(t, "", "--log", "-", "--policy", bad, "--", "touch", marker)
	if status != 2 || !strings.Contains(stderr, "bad.yaml:2:7: mode") {
		t.Errorf("status %d stderr %q", status, stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the server was started under a policy that did not load")
	}
	status, _, _ = runCLI(t, "", "check", bad)
	if status != 1 {
		t.Errorf("check of a bad policy: status %d, want 1", status)
	}
	status, _, _ = runCLI(t, "", "--mode", "lenient", "--log", "-", "--", "true")
	if status != 2 {
		t.Errorf("bad --mode: status %d, want 2", status)
	}
}

func TestEvalExitCodes(t *testing.T) {
	policy := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(policy, []byte("version: 1\ntools:\n  rm: deny\n"), 0o600)
	status, stdout, _ := runCLI(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rm","arguments":{}}}`, "eval", "--policy", policy, "-")
	if status != 1 || !strings.Contains(stdout, "INPUT_REJECTED_TOOL_DENIED") {
		t.Errorf("denied: status %d stdout %s", status, stdout)
	}
	status, stdout, _ = runCLI(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ls","arguments":{}}}`, "eval", "--policy", policy)
	if status != 0 || !strings.Contains(stdout, `"allowed"`) {
		t.Errorf("allowed: status %d stdout %s", status, stdout)
	}
}

func TestVersionAndHelpGoWhereTheyShould(t *testing.T) {
	status, stdout, _ := runCLI(t, "", "version")
	if status != 0 || !strings.HasPrefix(stdout, "mcpguard ") {
		t.Errorf("version: %d %q", status, stdout)
	}
	_, stdout, stderr := runCLI(t, "", "--help")
	if stdout != "" || !strings.Contains(stderr, "USAGE") {
		t.Errorf("help went to stdout (%q) or nowhere", stdout)
	}
}

// TestBuildsForMacOS type-checks the whole module, tests included, for
// macOS on Apple silicon, where many agents run: the relay's Linux-only
// calls (pipe sizing, the parent-death signal, sched_yield) live behind
// build tags, and this keeps it that way. It cannot run the tests there.
func TestBuildsForMacOS(t *testing.T) {
	goTool := "go"
	if root := runtime.GOROOT(); root != "" { // empty in a -trimpath build
		goTool = filepath.Join(root, "bin", "go")
	}
	cmd := exec.Command(goTool, "vet", "./...")
	cmd.Env = append(os.Environ(), "GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=darwin GOARCH=arm64 go vet ./...: %v\n%s", err, out)
	}
}

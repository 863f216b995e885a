package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	// go test puts its own GOROOT/bin first on the PATH.
	cmd := exec.Command("go", "vet", "./...")
	cmd.Env = append(os.Environ(), "GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=darwin GOARCH=arm64 go vet ./...: %v\n%s", err, out)
	}
}

// runLogCLI runs `mcpguard args...` as the command line does and returns
// its streams and status.
func runLogCLI(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = run(append([]string{"mcpguard"}, args...), strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

const attackLog = "proxy/eventlog/testdata/attack.log"

func TestTailCommand(t *testing.T) {
	out, errOut, code := runLogCLI("tail", "--utc", "--spike", "5/1m", attackLog)
	if code != 0 || !strings.Contains(out, "ALERT 2026-07-01 10:02:37.250 filesystem: 5 rejections within 1m") {
		t.Errorf("code %d\n%s", code, out)
	}
	if !strings.Contains(errOut, "skipped 4 lines") {
		t.Errorf("stderr %q", errOut)
	}
	if strings.Contains(out, "\x1b") {
		t.Error("colour when stdout is not a terminal")
	}

	out, _, code = runLogCLI("tail", "--utc", "--spike", "5/1m", "--exit-on-spike", attackLog)
	if code != 3 || !strings.HasSuffix(out, "read_file 3, edit_file 1, write_file 1\n") {
		t.Errorf("--exit-on-spike: code %d\n%s", code, out)
	}

	out, _, code = runLogCLI("tail", "--utc", "--server", "git", "--all", "--color", "always", attackLog)
	if code != 0 || strings.Count(out, "\n") != 7 || !strings.Contains(out, "\x1b[31m") || strings.Contains(out, "filesystem") {
		t.Errorf("--server git: code %d\n%s", code, out)
	}
}

func TestStatsCommand(t *testing.T) {
	out, _, code := runLogCLI("stats", "--utc", "--by", "code", attackLog)
	if code != 0 || !strings.Contains(out, "rejections by code") || strings.Contains(out, "rejections by tool") ||
		!strings.Contains(out, "rejections per minute (UTC)") {
		t.Errorf("code %d\n%s", code, out)
	}
	out, _, code = runLogCLI("stats", "--json", "--since", "2026-07-01T10:02:00Z", attackLog)
	var js struct {
		Events, Skipped, Rejections int
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil || code != 0 || js.Skipped != 4 || js.Rejections != 10 {
		t.Errorf("code %d, %+v, %v\n%s", code, js, err, out)
	}
}

func TestLogCommandsUsage(t *testing.T) {
	for _, args := range [][]string{
		{"tail", "--spike", "5", attackLog},
		{"tail", "--exit-on-spike", attackLog},
		{"tail", "--since", "yesterday", attackLog},
		{"tail", "--color", "sometimes", attackLog},
		{"tail", attackLog, attackLog},
		{"tail", "--nope"},
		{"tail", filepath.Join(os.TempDir(), "no", "such.log")},
		{"stats", "--by", "method", attackLog},
		{"stats", filepath.Join(os.TempDir(), "no", "such.log")},
	} {
		out, errOut, code := runLogCLI(args...)
		if code != 2 || out != "" || errOut == "" {
			t.Errorf("%q: code %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

// TestTailFollowExitsOnSpike: `tail --follow --spike --exit-on-spike`
// waits for the log to appear, reads what is appended, and exits 3 at the
// first spike: what a watchdog script runs.
func TestTailFollowExitsOnSpike(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "mcpguard.log")
	data, err := os.ReadFile(attackLog)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		out  string
		code int
	}
	done := make(chan result, 1)
	go func() {
		out, _, code := runLogCLI("tail", "--follow", "--utc", "--spike", "5/1m", "--exit-on-spike", path)
		done <- result{out, code}
	}()
	time.Sleep(300 * time.Millisecond) // tail waits for the file
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.code != 3 || !strings.Contains(r.out, "ALERT") || strings.Contains(r.out, "downstream_exit") {
			t.Errorf("code %d\n%s", r.code, r.out)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("tail --follow did not exit on the spike")
	}
}

func TestWrapCommandsUsage(t *testing.T) {
	home := t.TempDir()
	for _, args := range [][]string{
		{"wrap", "--home", home, "--client", "notepad"},
		{"wrap", "--home", home, "--init"},
		{"wrap", "--home", home, "extra"},
		{"unwrap", "--home", home, "--", "npx"},
		{"status", "--home", home, "--client", "emacs"},
	} {
		status, stdout, stderr := runCLI(t, "", args...)
		if status != 2 || stdout != "" || stderr == "" {
			t.Errorf("%q: status %d, stdout %q, stderr %q", args, status, stdout, stderr)
		}
	}
	// No configs: nothing to do, status 0.
	if status, stdout, stderr := runCLI(t, "", "wrap", "--home", home, "--project", home, "--command", "/usr/local/bin/mcpguard"); status != 0 || !strings.Contains(stdout, "no agent configs found") {
		t.Errorf("empty home: status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
	// This test binary lives in the go build cache, like a `go run` one:
	// entries must not point at a binary that is about to be deleted.
	if status, _, stderr := runCLI(t, "", "wrap", "--home", home, "--project", home); status != 2 || !strings.Contains(stderr, "go run build") {
		t.Errorf("wrap from the build cache: status %d, stderr %q", status, stderr)
	}
}

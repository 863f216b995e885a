package integration

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startBesidePolicy starts mcpguard with a policy file that is a FIFO, in
// front of a server that logs a known secret to stderr, then starts the
// testserver (with a sleeper child in its group) and writes its pids. The
// policy cannot load until the test writes it, so the server is certainly
// running, and has written to stderr, before the policy is known. The
// agent's initialize is sent at once: it must wait for the policy.
func startBesidePolicy(t *testing.T) (p *rawProc, fifo, record string, server, sleeper int) {
	t.Helper()
	dir := t.TempDir()
	fifo = filepath.Join(dir, "policy.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	pidFile, record := filepath.Join(dir, "pids"), filepath.Join(dir, "record")
	script := `printf 'debug: GITHUB_TOKEN=%s\n' "$GITHUB_TOKEN" >&2; exec "$0" -sleeper 300 -pidfile "$1" -record "$2"`
	p = startRaw(t, withEnv(guardArgv(t, &guardOpts{Policy: fifo}, "sh", "-c", script, testserverBin, pidFile, record), "GITHUB_TOKEN="+knownToken)...)
	p.guarded = true
	p.send([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, err := os.ReadFile(pidFile); err == nil && strings.Count(string(b), "\n") == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server was not started while the policy loads: no pids in %s", pidFile)
		}
		time.Sleep(10 * time.Millisecond)
	}
	server, sleeper = readPids(t, pidFile)
	t.Cleanup(func() {
		for _, pid := range []int{sleeper, server} {
			if alive(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return p, fifo, record, server, sleeper
}

// writeFIFO writes text to the policy FIFO that mcpguard is reading.
func writeFIFO(t *testing.T, fifo, text string) {
	t.Helper()
	if err := os.WriteFile(fifo, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestBrokenPolicyEndsServer: a policy file that does not load, while
// its server already runs, exits 2 with the file:line:col error, kills
// the server's process group (no orphan), and lets nothing through: no
// answer to the agent, no line to the server, none of the server's stderr.
func TestBrokenPolicyEndsServer(t *testing.T) {
	t.Parallel()
	p, fifo, record, server, sleeper := startBesidePolicy(t)
	writeFIFO(t, fifo, "version: 1\ningress:\n  - tools: [echo]\n    check: no_such_check\n")
	status, err := p.wait(20 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if status != 2 {
		t.Errorf("exit status %d, want 2", status)
	}
	stderr := p.stderr.String()
	if !strings.Contains(stderr, fifo+":4:") {
		t.Errorf("stderr has no %s:4:col error: %q", fifo, stderr)
	}
	if strings.Contains(stderr, "GITHUB_TOKEN") {
		t.Errorf("the server's stderr passed under a policy that did not load: %q", stderr)
	}
	if line, err := p.next(100 * time.Millisecond); err == nil {
		t.Errorf("the agent got a line: %q", line)
	}
	for what, pid := range map[string]int{"server": server, "sleeper": sleeper} {
		if !waitGone(pid, 5*time.Second) {
			t.Errorf("%s %d still alive after mcpguard exited", what, pid)
		}
	}
	if b, err := os.ReadFile(record); err == nil && len(b) > 0 {
		t.Errorf("the server received %q", b)
	}
}

// TestPolicyRedactsEarlyStderr: what the server wrote to stderr before its
// policy was loaded comes out redacted by that policy, and the agent's
// first message, sent before the policy loaded, is answered.
func TestPolicyRedactsEarlyStderr(t *testing.T) {
	t.Parallel()
	p, fifo, _, _, _ := startBesidePolicy(t)
	writeFIFO(t, fifo, "version: 1\nmode: enforce\n")
	if m, _ := p.expect("1", 20*time.Second); m == nil || m.Result == nil {
		t.Fatalf("initialize: %+v", m)
	}
	if _, err := p.closeAndWait(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	got := p.stderr.String()
	if strings.Contains(got, knownToken) || !strings.Contains(got, "debug: GITHUB_TOKEN=[REDACTED:") {
		t.Errorf("mcpguard's stderr: %q", truncate(got, 2000))
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

// syncBuffer is a bytes.Buffer safe to read while a command writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runLogCmd runs `mcpguard args...` with only the log commands, mapping
// errors to exit codes as run does.
func runLogCmd(args ...string) (stdout, stderr string, code int) {
	var out, errOut syncBuffer
	status := 0
	app := &cli.App{Name: "mcpguard", Writer: &errOut, ErrWriter: &errOut, HideHelpCommand: true,
		ExitErrHandler: func(*cli.Context, error) {}, Commands: logCommands(nil, &out, &errOut, &status)}
	err := app.Run(append([]string{"mcpguard"}, args...))
	code = status
	if err != nil {
		errOut.Write([]byte("mcpguard: " + err.Error() + "\n"))
		code = 2
		var ec cli.ExitCoder
		if errors.As(err, &ec) {
			code = ec.ExitCode()
		}
	}
	return out.String(), errOut.String(), code
}

const attackLog = "proxy/eventlog/testdata/attack.log"

func TestTailCommand(t *testing.T) {
	out, errOut, code := runLogCmd("tail", "--utc", "--spike", "5/1m", attackLog)
	if code != 0 || !strings.Contains(out, "ALERT 2026-07-01 10:02:37.250 filesystem: 5 rejections within 1m") {
		t.Errorf("code %d\n%s", code, out)
	}
	if !strings.Contains(errOut, "skipped 4 lines") {
		t.Errorf("stderr %q", errOut)
	}
	if strings.Contains(out, "\x1b") {
		t.Error("colour when stdout is not a terminal")
	}

	out, _, code = runLogCmd("tail", "--utc", "--spike", "5/1m", "--exit-on-spike", attackLog)
	if code != 3 || !strings.HasSuffix(out, "read_file 3, edit_file 1, write_file 1\n") {
		t.Errorf("--exit-on-spike: code %d\n%s", code, out)
	}

	out, _, code = runLogCmd("tail", "--utc", "--server", "git", "--all", "--color", "always", attackLog)
	if code != 0 || strings.Count(out, "\n") != 7 || !strings.Contains(out, "\x1b[31m") || strings.Contains(out, "filesystem") {
		t.Errorf("--server git: code %d\n%s", code, out)
	}
}

func TestStatsCommand(t *testing.T) {
	out, _, code := runLogCmd("stats", "--utc", "--by", "code", attackLog)
	if code != 0 || !strings.Contains(out, "rejections by code") || strings.Contains(out, "rejections by tool") ||
		!strings.Contains(out, "rejections per minute (UTC)") {
		t.Errorf("code %d\n%s", code, out)
	}
	out, _, code = runLogCmd("stats", "--json", "--since", "2026-07-01T10:02:00Z", attackLog)
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
		out, errOut, code := runLogCmd(args...)
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
		out, _, code := runLogCmd("tail", "--follow", "--utc", "--spike", "5/1m", "--exit-on-spike", path)
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

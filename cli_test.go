package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The first hour with the command line: help, version, the `--` rule,
// flag values people type.

func TestHelpAndVersionSpellings(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}, {"help", "eval"}} {
		status, stdout, stderr := runCLI(t, "", args...)
		if status != 0 || stdout != "" || !strings.Contains(stderr, "USAGE") {
			t.Errorf("%q: status %d, stdout %q, stderr %q", args, status, stdout, truncate(stderr))
		}
	}
	status, stdout, _ := runCLI(t, "", "--version")
	status2, stdout2, _ := runCLI(t, "", "version")
	if status != 0 || stdout != stdout2 {
		t.Errorf("--version: %d %q, want what version prints (%q)", status, stdout, stdout2)
	}
	status, stdout = status2, stdout2
	if status != 0 || !strings.HasPrefix(stdout, "mcpguard ") || !(strings.Contains(stdout, "(rev ") || strings.Contains(stdout, "no VCS revision")) {
		t.Errorf("version: %d %q", status, stdout)
	}
	// After --, help is a program to run.
	status, _, stderr := runCLI(t, "", "--log", "-", "--", "help")
	if status != 127 || !strings.Contains(stderr, "cannot start") {
		t.Errorf("-- help: status %d stderr %q", status, truncate(stderr))
	}
}

// Help shows the defaults that apply, not 0.
func TestHelpShowsRealDefaults(t *testing.T) {
	_, _, stderr := runCLI(t, "", "--help")
	for _, want := range []string{"(default: 4MiB)", "(default: 64MiB)", "(default: 3s)", "--max-message-bytes value", "(default: unset)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("help lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "(default: 0)") {
		t.Errorf("help shows a default of 0:\n%s", stderr)
	}
}

// A server command without -- followed by mcpguard's flags is refused with
// the right spelling, never run under the baseline.
func TestFlagsAfterTheServerCommandAreRefused(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"touch", marker, "--policy", "p.yaml"}, "mcpguard --policy p.yaml -- touch " + marker},
		{[]string{"run", "touch", marker, "--log=-", "--mode", "audit"}, "mcpguard run --log=- --mode audit -- touch " + marker},
		{[]string{"init", "touch", marker, "--out", "x.yaml"}, "mcpguard init --out x.yaml -- touch " + marker},
	} {
		status, stdout, stderr := runCLI(t, "", c.args...)
		if status != 2 || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: status %d, stderr %q; want 2 and %q", c.args, status, stderr, c.want)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%q started the server", c.args)
		}
	}
	// A server's own flags, -v and --verbose among them, are its own.
	status, _, stderr := runCLI(t, "", "--log", "-", "sh", "-c", "exit 3", "-v", "--verbose")
	if status != 3 {
		t.Errorf("a server's own flags: status %d, stderr %q", status, truncate(stderr))
	}
}

func TestGraceAndSizesAsPeopleWriteThem(t *testing.T) {
	start := time.Now()
	// sh ignores the closed stdin and TERM for 0.3 s; a grace of 1 (second)
	// lets it finish and exit 5 on its own.
	status, _, stderr := runCLI(t, "", "--log", "-", "--grace", "1", "--max-message-bytes", "8MiB", "--max-request-bytes", "512KiB",
		"--", "sh", "-c", "trap '' TERM; sleep 0.3; exit 5")
	if status != 5 {
		t.Errorf("--grace 1: status %d, stderr %q", status, truncate(stderr))
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
	for _, bad := range [][]string{{"--grace", "soon"}, {"--max-message-bytes", "8XB"}, {"--max-message-bytes", "0"}} {
		if status, _, _ := runCLI(t, "", append(append([]string{"--log", "-"}, bad...), "--", "true")...); status != 2 {
			t.Errorf("%q: status %d, want 2", bad, status)
		}
	}
	var b byteSize
	for in, want := range map[string]int{"8MiB": 8 << 20, "512KiB": 512 << 10, "4194304": 4 << 20, "1.5MiB": 3 << 19, "4MB": 4000000, "1gib": 1 << 30} {
		if err := b.Set(in); err != nil || b.n != want {
			t.Errorf("size %q = %d (%v), want %d", in, b.n, err, want)
		}
	}
	var s seconds
	for in, want := range map[string]time.Duration{"5": 5 * time.Second, "0.5": 500 * time.Millisecond, "1m": time.Minute, "1500ms": 1500 * time.Millisecond} {
		if err := s.Set(in); err != nil || s.d != want {
			t.Errorf("grace %q = %v (%v), want %v", in, s.d, err, want)
		}
	}
}

// eval exits 1 for a verdict audit mode would only log, and prints it;
// it names the unknown member it refuses.
func TestEvalAuditAndUnknownMember(t *testing.T) {
	policy := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(policy, []byte("version: 1\nmode: audit\ntools:\n  rm: deny\n"), 0o600)
	status, stdout, _ := runCLI(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rm","arguments":{}}}`, "eval", "--policy", policy)
	if status != 1 || !strings.Contains(stdout, `"verdict": "audited"`) || !strings.Contains(stdout, "INPUT_REJECTED_TOOL_DENIED") {
		t.Errorf("audited: status %d stdout %s", status, stdout)
	}
	status, stdout, _ = runCLI(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ls","arguments":{}},"extra":1}`, "eval")
	if status != 1 || !strings.Contains(stdout, `unknown member \"extra\" in the JSON-RPC envelope`) {
		t.Errorf("unknown member: status %d stdout %s", status, stdout)
	}
	status, stdout, _ = runCLI(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ls","Arguments":{}}}`, "eval")
	if status != 1 || !strings.Contains(stdout, `params member \"Arguments\" differs only by case`) {
		t.Errorf("look-alike member: status %d stdout %s", status, stdout)
	}
}

// check --tools-list warns about tool names the server does not have.
func TestCheckToolsList(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "p.yaml")
	os.WriteFile(policy, []byte("version: 1\nunknown_tools: deny\ntools:\n  read_txt_file: allow\n  list_directory: allow\n  \"git_*\": deny\ningress:\n  - tools: [serch_files]\n    fields: [path]\n    check: control_chars\n"), 0o600)
	tools := filepath.Join(dir, "tools.json")
	os.WriteFile(tools, []byte(`{"tools":[{"name":"read_text_file"},{"name":"list_directory"},{"name":"search_files"}]}`), 0o600)
	status, stdout, stderr := runCLI(t, "", "check", "--tools-list", tools, policy)
	if status != 0 || !strings.Contains(stdout, ": ok") {
		t.Errorf("status %d stdout %q", status, stdout)
	}
	for _, want := range []string{
		"warning: tools.read_txt_file: the server has no tool read_txt_file; did you mean read_text_file?",
		"warning: ingress[0].tools: the server has no tool serch_files; did you mean search_files?",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "list_directory") || strings.Contains(stderr, "git_") {
		t.Errorf("warned about a listed tool or a glob:\n%s", stderr)
	}
}

func truncate(s string) string {
	if len(s) > 600 {
		return s[:600] + "..."
	}
	return s
}

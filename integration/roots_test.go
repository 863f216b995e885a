package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRootWarningsAtStart: a path_scope root that does not exist and a
// directory in the server's argv that no root covers each give one
// warning line on stderr and in the log, before the first call.
func TestRootWarningsAtStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	served := filepath.Join(dir, "served")
	if err := os.Mkdir(served, 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "typo")
	pol := writePolicy(t, "version: 1\ningress:\n  - fields: [path]\n    check: path_scope\n    roots: ["+missing+"]\n")
	logFile := filepath.Join(dir, "mcpguard.log")
	p := startGuardedRaw(t, &guardOpts{Policy: pol, Log: logFile}, testserverBin, served)
	p.initialize()
	if _, err := p.closeAndWait(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	stderr := p.stderr.String()
	for _, want := range []string{
		"mcpguard: warning: path_scope root " + missing + " (ingress[0]) does not exist",
		"mcpguard: warning: the server's argument " + served + " is a directory that no path_scope root covers",
	} {
		if strings.Count(stderr, want) != 1 {
			t.Errorf("stderr has %d lines %q:\n%s", strings.Count(stderr, want), want, stderr)
		}
	}
	log, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), `"event":"warning"`); n != 2 {
		t.Errorf("%d warning lines in the log, want 2:\n%s", n, log)
	}
}

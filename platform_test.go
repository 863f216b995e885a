package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

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

package shellcmd

import (
	"os/exec"
	"path"
	"strings"
	"testing"
)

// FuzzDeniedNeverRuns: whatever a line looks like, if the check with rm
// denied passes it, the real bash starts no program named rm from it
// (any case, any path). Seeded with the obfuscation and ordinary
// corpora.
func FuzzDeniedNeverRuns(f *testing.F) {
	for _, s := range corpus(f, "obfuscations.txt") {
		f.Add(s)
	}
	for _, s := range corpus(f, "ordinary.txt") {
		f.Add(s)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		f.Fatal("bash is needed to run what the check passed:", err)
	}
	c, err := New(Options{DenyPrograms: []string{"rm"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if c.Check(line) != nil {
			return
		}
		for _, run := range bashRuns(t, bash, line) {
			if strings.EqualFold(path.Base(run[0]), "rm") {
				t.Fatalf("%q passed, and bash runs %q", line, run)
			}
		}
	})
}

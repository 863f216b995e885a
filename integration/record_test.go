package integration

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDirectRecord checks the -record mechanism the guarded tests rely on
// to show what never reached the server: testserver records exactly what
// it was sent.
func TestDirectRecord(t *testing.T) {
	t.Parallel()
	record := filepath.Join(t.TempDir(), "record")
	p := startRaw(t, testserverBin, "-record", record)
	p.initialize()
	p.callOK(1, "echo", map[string]any{"text": "HOSTILE"})
	if _, err := p.closeAndWait(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, record)
	if len(lines) != 3 || !strings.Contains(lines[2], "HOSTILE") {
		t.Fatalf("record: %q", lines)
	}
}

func readLines(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

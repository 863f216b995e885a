package agentconfig

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tailscale/hujson"
)

// writerEnv makes the test binary the writer process of TestNoLostWrites.
const writerEnv = "AGENTCONFIG_TEST_WRITER"

// TestWriterProcess is the client of TestNoLostWrites when run with
// writerEnv=PATH,N: it adds "wI": I to the config at PATH for I in
// 0..N-1, each a read, an edit and a write, alternately in place
// (truncate and write, as many editors do) and through a rename (as
// write-file-atomic does).
func TestWriterProcess(t *testing.T) {
	spec := os.Getenv(writerEnv)
	if spec == "" {
		t.Skip("the writer process of TestNoLostWrites")
	}
	path, count, _ := cut(spec)
	n, _ := strconv.Atoi(count)
	for i := 0; i < n; i++ {
		for {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			v, err := hujson.Parse(b)
			if err != nil {
				continue // read mid-write of our own? never: wrap writes whole files
			}
			if err := v.Patch([]byte(fmt.Sprintf(`[{"op":"add","path":"/w%d","value":%d}]`, i, i))); err != nil {
				t.Fatal(err)
			}
			out := v.Pack()
			if i%2 == 0 {
				err = os.WriteFile(path, out, 0o644)
			} else {
				tmp := path + ".writer"
				if err = os.WriteFile(tmp, out, 0o644); err == nil {
					err = os.Rename(tmp, path)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			break
		}
		time.Sleep(300 * time.Microsecond)
	}
}

func cut(s string) (string, string, bool) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ',' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// TestNoLostWrites runs wrap and unwrap over and over while another
// process rewrites the config: every one of its writes must survive (the
// attack on the user is silent: a server or setting the agent added
// vanishes), and the backup stays the file as it was before mcpguard.
func TestNoLostWrites(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ".cursor", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	orig := []byte(`{"mcpServers": {"a": {"command": "node", "args": ["a.js"]}, "b": {"command": "uvx", "args": ["mcp-server-time"]}}}`)
	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	const writes = 600
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriterProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d", writerEnv, path, writes))
	var wout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &wout, &wout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	changed, runs := 0, 0
	o := testOptions(home)
loop:
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("writer: %v\n%s", err, wout.String())
			}
			break loop
		default:
		}
		var r Report
		if runs%2 == 0 {
			r = Wrap(o)
		} else {
			r = Unwrap(o)
		}
		runs++
		for _, f := range r.Files {
			if f.State == "changed" {
				changed++
			}
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := hujson.Parse(b)
	if err != nil {
		t.Fatalf("the config no longer parses: %v\n%s", err, b)
	}
	// The writer alternates: even writes in place, odd ones by rename.
	var lostInPlace, lostRename []int
	for i := 0; i < writes; i++ {
		if v.Find("/w"+strconv.Itoa(i)) != nil {
			continue
		}
		if i%2 == 0 {
			lostInPlace = append(lostInPlace, i)
		} else {
			lostRename = append(lostRename, i)
		}
	}
	t.Logf("%d writes (%d in place, %d by rename), %d wrap/unwrap runs, %d changed the file; lost: %d in place %v, %d by rename %v",
		writes, (writes+1)/2, writes/2, runs, changed, len(lostInPlace), lostInPlace, len(lostRename), lostRename)
	if n := len(lostInPlace) + len(lostRename); n > 0 {
		t.Errorf("%d of %d writes lost: in place %v, by rename %v", n, writes, lostInPlace, lostRename)
	}
	if changed == 0 {
		t.Error("no wrap or unwrap changed the file: the race was not run")
	}
	if bk, err := os.ReadFile(path + BackupSuffix); err != nil || !bytes.Equal(bk, orig) {
		t.Errorf("the backup is not the file before mcpguard: %v\n%s", err, bk)
	}
}

package agentconfig

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLeaseSeesOpen: under a lease, another open of the file waits, and
// openedForWrite sees a writer's open while a reader's is told apart.
func TestLeaseSeesOpen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []int{os.O_RDONLY, os.O_WRONLY | os.O_TRUNC} {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !lease(f) {
			t.Fatal("no lease on a file of our own with no other open")
		}
		if opened(f) || openedForWrite(f) {
			t.Fatal("an open seen before anyone opened")
		}
		done := make(chan error, 1)
		go func() {
			g, err := os.OpenFile(path, flag, 0)
			if err == nil {
				g.Close()
			}
			done <- err
		}()
		deadline := time.Now().Add(10 * time.Second)
		for !opened(f) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		select {
		case <-done:
			t.Fatalf("open %#x did not wait on the lease", flag)
		default:
		}
		if !opened(f) || openedForWrite(f) != (flag != os.O_RDONLY) {
			t.Errorf("open %#x: opened %v, for writing %v", flag, opened(f), openedForWrite(f))
		}
		unlease(f)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}

// TestCommitWaitsForOpenWriter: a client that opened the config before
// commit and writes into it later (an editor holding it open) is not
// lost: the lease waits for it to close, and the re-check refuses.
func TestCommitWaitsForOpenWriter(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mcp.json")
	orig, theirs := []byte(`{"a": 1}`), []byte(`{"a": 1, "b": 2}`)
	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		w.WriteAt(theirs, 0)
		w.Close()
	}()
	if err := commit(path, orig, []byte(`{"a": 3}`)); !errors.Is(err, errChanged) {
		t.Errorf("commit over a write it could not see: %v", err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, theirs) {
		t.Errorf("the client's write is lost: %s", b)
	}
}

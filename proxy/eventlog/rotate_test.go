package eventlog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gofrs/flock"
)

// TestRotationBoundsTheDisk: a flood far larger than the cap leaves
// Backups+1 files, each within the cap, holding the newest lines in order.
func TestRotationBoundsTheDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcpguard.log")
	rot := Rotation{MaxBytes: 1000, Backups: 2}
	w, closeLog, err := Open(path, rot, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer closeLog()
	const n = 500
	for i := range n {
		fmt.Fprintf(w, "%s %04d\n", strings.Repeat("x", 94), i) // 100 bytes
	}
	files, err := Files(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{path + ".2", path + ".1", path}; strings.Join(files, " ") != strings.Join(want, " ") {
		t.Fatalf("files %q, want %q", files, want)
	}
	for _, f := range files {
		if fi, err := os.Stat(f); err != nil || fi.Size() > rot.MaxBytes {
			t.Errorf("%s: %v, %v bytes over the cap", f, err, fi.Size())
		}
	}
	var got []string
	if _, err := ReadLog(path, func(line []byte) error { got = append(got, string(line[len(line)-4:])); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 30 {
		t.Fatalf("%d lines kept, want 30: %q", len(got), got)
	}
	for i, g := range got {
		if want := fmt.Sprintf("%04d", n-30+i); g != want {
			t.Fatalf("line %d is %s, want %s", i, g, want)
		}
	}
}

// TestWriterFollowsThePath: a writer whose file was renamed (by another
// process's rotation, or logrotate without copytruncate) or removed goes
// on in the file the path names, not in the old one.
func TestWriterFollowsThePath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcpguard.log")
	w, closeLog, err := Open(path, DefaultRotation, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer closeLog()
	fmt.Fprintln(w, "one")
	if err := os.Rename(path, filepath.Join(dir, "moved")); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(w, "two")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(w, "three")
	for name, want := range map[string]string{"moved": "one\n", "mcpguard.log": "three\n"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", name, b, err, want)
		}
	}
}

// TestFilesOrder: rotated files are read oldest first, by number, not by
// name (10 after 9), and names that only look like them are left out.
func TestFilesOrder(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.log")
	for _, name := range []string{"m.log", "m.log.1", "m.log.2", "m.log.10", "m.log.9", "m.log.01", "m.log.x", "m.log.lock", "m.log.1.gz"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	if _, err := ReadLog(path, func(line []byte) error { got = append(got, string(line)); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := "m.log.10 m.log.9 m.log.2 m.log.1 m.log"; strings.Join(got, " ") != want {
		t.Errorf("read %q, want %s", got, want)
	}
	got = nil
	if _, err := ReadRotated(path, func(line []byte) error { got = append(got, string(line)); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := "m.log.10 m.log.9 m.log.2 m.log.1"; strings.Join(got, " ") != want {
		t.Errorf("rotated files: read %q, want %s", got, want)
	}
	if _, err := ReadLog(filepath.Join(dir, "none.log"), func([]byte) error { return nil }); err == nil || !strings.Contains(err.Error(), "cannot open log") {
		t.Errorf("a missing log: %v", err)
	}
}

// TestWriterTakesAnotherProcessRotation: a writer that finds the file
// full while another process holds the rotation lock writes its line to
// the file that process's rotation starts, even when that process keeps
// the lock past lockWait and the new file is full again by then (before,
// the writer looked only once the wait was over, and dropped the line).
func TestWriterTakesAnotherProcessRotation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "mcpguard.log")
		r, err := openRotating(path, Rotation{MaxBytes: 100, Backups: 3})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if _, err := r.Write([]byte(strings.Repeat("a", 89) + "\n")); err != nil {
			t.Fatal(err)
		}
		other := flock.New(path + ".lock")
		if ok, err := other.TryLock(); !ok || err != nil {
			t.Fatalf("the other process's lock: %v %v", ok, err)
		}
		defer other.Unlock()
		wrote := make(chan error, 1)
		go func() {
			_, err := r.Write([]byte(strings.Repeat("b", 19) + "\n"))
			wrote <- err
		}()
		// The other process rotates, then fills the new file, and holds
		// the lock past lockWait.
		time.Sleep(100 * time.Millisecond)
		if err := os.Rename(path, path+".1"); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		time.Sleep(lockWait / 2)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(strings.Repeat("c", 80) + "\n"); err != nil {
			t.Fatal(err)
		}
		f.Close()
		time.Sleep(lockWait)
		if err := <-wrote; err != nil {
			t.Fatalf("the line was not written: %v", err)
		}
		var lines []string
		if _, err := ReadLog(path, func(line []byte) error {
			lines = append(lines, string(line[:1]))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(lines, ""); got != "abc" {
			t.Errorf("lines begin %q, want \"abc\" (the b line in the rotated file's successor)", got)
		}
	})
}

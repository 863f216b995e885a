package eventlog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

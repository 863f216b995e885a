package agentconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// BackupSuffix names the copy of a config taken before mcpguard first
// changed it: FILE.mcpguard-backup holds the file as it was before any
// mcpguard edit, and is never overwritten.
const BackupSuffix = ".mcpguard-backup"

// errChanged marks a config that changed between reading and replacing
// it: the edit is refused (and redone on a fresh read by the caller).
var errChanged = errors.New("it changed while mcpguard was editing it; run again")

// lockWait is how long commit waits for another mcpguard editing the same
// file.
const lockWait = 5 * time.Second

// commit writes data over the config at path, which held orig when it was
// read, and loses no write made by anyone else meanwhile (agents rewrite
// their configs often: Claude Code rewrites ~/.claude.json on every run).
//
//   - The file is locked (flock, advisory) against other mcpguard runs.
//   - The new content goes to a temporary file in the same directory,
//     synced and given the file's mode.
//   - Immediately before it replaces the file, the file is read again; a
//     change since orig refuses the edit (errChanged).
//   - The replacement is an atomic exchange where the system has one
//     (renameat2 RENAME_EXCHANGE on Linux, RENAME_SWAP on macOS): what it
//     displaced is read back, and when that is not orig (a write landed
//     between the re-check and the exchange) it is exchanged back and the
//     edit refused. Without an exchange, a plain rename follows the
//     re-check.
//
// The file behind a symlink is the one written (the link stays a link).
// A file without write permission for its owner is refused even where
// the process could replace it (root): its owner made it read-only. The
// backup is written once, before the first change, and never after.
func commit(path string, orig, data []byte) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return err
	}
	mode := fi.Mode().Perm()
	if mode&0o200 == 0 {
		return fmt.Errorf("%w (mode %04o); make it writable to change it", errReadOnly, mode)
	}
	f, err := os.OpenFile(real, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := lock(f); err != nil {
		return err
	}
	if now, err := os.ReadFile(real); err != nil {
		return err
	} else if !bytes.Equal(now, orig) {
		return errChanged
	}
	backup := real + BackupSuffix
	if _, err := os.Lstat(backup); errors.Is(err, fs.ErrNotExist) {
		if err := atomicWrite(backup, orig, mode, nil); err != nil {
			return fmt.Errorf("writing the backup: %w", err)
		}
	}
	return atomicWrite(real, data, mode, orig)
}

// lock takes an exclusive advisory lock on f, waiting up to lockWait.
func lock(f *os.File) error {
	deadline := time.Now().Add(lockWait)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return nil // released when f is closed
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("locking it: %w", err)
		}
		if time.Now().After(deadline) {
			return errors.New("another mcpguard is editing it; run again")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// atomicWrite replaces path with data through a synced temporary file in
// the same directory, so a crash leaves the old file or the new one. With
// expect set, the file must still hold expect when it is replaced (see
// commit); else errChanged and the file is left as it is.
func atomicWrite(path string, data []byte, mode fs.FileMode, expect []byte) error {
	dir, base := filepath.Split(path)
	tmp, err := os.CreateTemp(dir, "."+base+".mcpguard-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer os.Remove(name) // after a rename or exchange: the displaced file, or nothing
	defer tmp.Close()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := replace(name, path, expect, data); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// replace puts the file tmp in path's place, checking first (when expect
// is set) that path still holds expect, and after an exchange that what
// was displaced was expect; ours is what tmp holds.
func replace(tmp, path string, expect, ours []byte) error {
	if expect == nil {
		return os.Rename(tmp, path)
	}
	if now, err := os.ReadFile(path); err != nil {
		return err
	} else if !bytes.Equal(now, expect) {
		return errChanged
	}
	if err := exchange(tmp, path); err != nil {
		if errors.Is(err, errNoExchange) {
			return os.Rename(tmp, path)
		}
		return err
	}
	displaced, err := os.ReadFile(tmp)
	if err == nil && bytes.Equal(displaced, expect) {
		return nil
	}
	// A write landed between the re-check and the exchange: give it its
	// place back, unless path changed again since, in which case the
	// newest file (now at path) is kept and ours goes.
	if now, rerr := os.ReadFile(path); rerr == nil && bytes.Equal(now, ours) {
		if xerr := exchange(tmp, path); xerr != nil {
			kept := path + ".mcpguard-displaced"
			os.Rename(tmp, kept)
			return fmt.Errorf("a write landed while mcpguard replaced it, and putting it back failed (it is in %s): %w", kept, xerr)
		}
	}
	return errChanged
}

// errNoExchange: the system or file system has no atomic exchange.
var errNoExchange = errors.New("no atomic exchange")

package agentconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
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
//   - On Linux the file gets a write lease (see lease): from then on no
//     other process can open or truncate it without commit seeing it.
//   - Immediately before it replaces the file, the file is read again; a
//     change since orig refuses the edit (errChanged).
//   - The replacement is an atomic exchange where the system has one
//     (renameat2 RENAME_EXCHANGE on Linux, RENAME_SWAP on macOS). Then,
//     after the directory is synced, the file displaced must be the one
//     read, still hold orig, and (under a lease) have been opened for
//     writing by no one; else a write landed or is about to land in it,
//     it is put back (see replace) and the edit refused. Without an
//     exchange, a plain rename follows the re-check.
//
// What no user-space protocol closes: a client that writes in place
// (open with O_TRUNC, then write, no lock) and whose open(2) looked the
// name up before the exchange but reaches the lease only after commit's
// last look writes into the displaced file, which is then deleted. Under
// a lease that span is inside one system call and outlasts a directory
// sync; without one (macOS, network file systems, a process keeping the
// file open past leaseWait) it is anything from the exchange to the
// client's last write through a descriptor it opened before. Under a
// lease, a client that writes by rename loses nothing.
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
	f, err := os.OpenFile(real, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := lock(f); err != nil {
		return err
	}
	if now, err := readAll(f); err != nil {
		return err
	} else if !bytes.Equal(now, orig) {
		return errChanged
	}
	backup := real + BackupSuffix
	if _, err := os.Lstat(backup); errors.Is(err, fs.ErrNotExist) {
		if err := atomicWrite(backup, orig, mode, nil, nil); err != nil {
			return fmt.Errorf("writing the backup: %w", err)
		}
	}
	return atomicWrite(real, data, mode, f, orig)
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

// readAll reads f's file whole from its start, through f: no new open,
// which would break f's own lease.
func readAll(f *os.File) ([]byte, error) {
	return io.ReadAll(io.NewSectionReader(f, 0, math.MaxInt64))
}

// atomicWrite replaces path with data through a synced temporary file in
// the same directory, so a crash leaves the old file or the new one. With
// held (the open, locked file at path) and expect set, the file must
// still hold expect when it is replaced (see commit); else errChanged and
// the file is left as it is.
func atomicWrite(path string, data []byte, mode fs.FileMode, held *os.File, expect []byte) error {
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
	if held == nil {
		if err := os.Rename(name, path); err != nil {
			return err
		}
		syncDir(dir)
		return nil
	}
	return replace(tmp, path, held, expect, data)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// replace puts the file ours (open, holding data) in path's place,
// checking first that path is still held's file and holds expect, and
// after an exchange that what was displaced is that file, unchanged and
// not opened for writing.
//
// When that last look fails, the displaced file's content must be at
// path again. If nobody opened ours since the exchange, the exchange is
// undone. If somebody did (they wait on ours's lease, having seen
// nothing yet), ours takes the displaced content in place, so what they
// read is what was there before mcpguard; only when a writer also waits
// on the displaced file itself is it exchanged back regardless, and a
// reader of ours then reads mcpguard's version once.
func replace(ours *os.File, path string, held *os.File, expect, data []byte) error {
	tmp := ours.Name()
	leased, oursLeased := lease(held), false
	if leased {
		defer unlease(held) // after the last look: an open waiting on it goes ahead
		if oursLeased = lease(ours); oursLeased {
			defer unlease(ours)
		}
	}
	if ok, err := unchanged(path, held, expect); err != nil {
		return err
	} else if !ok {
		return errChanged
	}
	if err := exchange(tmp, path); err != nil {
		if errors.Is(err, errNoExchange) {
			err = os.Rename(tmp, path)
			syncDir(filepath.Dir(path))
		}
		return err
	}
	// The sync comes before the last look: an open that looked the name
	// up before the exchange has had that long to reach the lease.
	syncDir(filepath.Dir(path))
	same, err := unchanged(tmp, held, expect)
	writer := openedForWrite(held)
	if err == nil && same && !writer {
		return nil
	}
	// A write landed in the file displaced, or waits on its lease to land.
	if oursLeased && !writer && opened(ours) {
		var displaced []byte
		if sameFile(tmp, held) {
			displaced, err = readAll(held) // opening it would wait on our own lease
		} else {
			displaced, err = os.ReadFile(tmp)
		}
		if err != nil {
			return err
		}
		if err := overwrite(ours, displaced); err != nil {
			return keep(tmp, path, err)
		}
		return errChanged
	}
	// Give the displaced file its place back, unless path changed again
	// since, in which case the newest file (now at path) is kept and ours
	// goes.
	if ok, _ := unchanged(path, ours, data); ok {
		if err := exchange(tmp, path); err != nil {
			return keep(tmp, path, err)
		}
	}
	return errChanged
}

// keep saves the displaced file tmp next to path when it could not be put
// back, and says where it is.
func keep(tmp, path string, err error) error {
	kept := path + ".mcpguard-displaced"
	os.Rename(tmp, kept)
	return fmt.Errorf("a write landed while mcpguard replaced it, and putting it back failed (it is in %s): %w", kept, err)
}

// overwrite makes f hold b, in place.
func overwrite(f *os.File, b []byte) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		return err
	}
	return f.Sync()
}

// unchanged reports whether name is f's file and it holds expect.
func unchanged(name string, f *os.File, expect []byte) (bool, error) {
	if !sameFile(name, f) {
		return false, nil
	}
	now, err := readAll(f)
	return bytes.Equal(now, expect), err
}

// sameFile reports whether name is f's file, without opening it (which
// would break a lease on it).
func sameFile(name string, f *os.File) bool {
	at, err := os.Stat(name)
	if err != nil {
		return false
	}
	fi, err := f.Stat()
	return err == nil && os.SameFile(at, fi)
}

// errNoExchange: the system or file system has no atomic exchange.
var errNoExchange = errors.New("no atomic exchange")

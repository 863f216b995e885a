package agentconfig

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// BackupSuffix names the copy of a config taken before each change:
// FILE.mcpguard-backup holds the file as it was before the latest change
// mcpguard made to it.
const BackupSuffix = ".mcpguard-backup"

// commit writes data over the config at path, which held orig when it was
// read. The file behind a symlink is the one written (the link stays a
// link). A file without write permission for its owner is refused even
// where the process could replace it (root): its owner made it read-only.
// A file changed since it was read is refused too (the client may have
// written it meanwhile). The backup and the new content are each written
// to a temporary file in the same directory, synced, given the file's
// mode and renamed into place, so a crash leaves the old file or the new
// one, never half of one.
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
	f.Close()
	now, err := os.ReadFile(real)
	if err != nil {
		return err
	}
	if !bytes.Equal(now, orig) {
		return fmt.Errorf("it changed while mcpguard was editing it; run again")
	}
	if err := atomicWrite(real+BackupSuffix, orig, mode); err != nil {
		return fmt.Errorf("writing the backup: %w", err)
	}
	return atomicWrite(real, data, mode)
}

func atomicWrite(path string, data []byte, mode fs.FileMode) error {
	dir, base := filepath.Split(path)
	tmp, err := os.CreateTemp(dir, "."+base+".mcpguard-*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
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
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	done = true
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

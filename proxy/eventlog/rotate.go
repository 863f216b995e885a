package eventlog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// Rotation caps the log's size on disk: when a line would take the file
// past MaxBytes, the file is renamed to FILE.1 (FILE.1 to FILE.2, ... the
// oldest, FILE.<Backups>, is overwritten) and a new FILE is started. The
// log then never holds more than (Backups+1) × MaxBytes, plus one line per
// writing process, so a hostile server's flood cannot fill a disk.
type Rotation struct {
	MaxBytes int64
	Backups  int
}

// DefaultRotation is 10 MiB a file and 3 older files: at most 40 MiB.
var DefaultRotation = Rotation{MaxBytes: 10 << 20, Backups: 3}

// lockWait bounds how long a writer waits for another process's rotation:
// a stuck lock holder must not stall the session, so past it the line is
// written to whichever file the path names and rotation waits for the next
// line.
const lockWait = time.Second

// lockPoll is how often a writer waiting for the rotation lock tries it
// again and looks whether another process has rotated.
const lockPoll = 5 * time.Millisecond

// rotating appends to a log file shared by several processes, each with
// its own O_APPEND descriptor, and rotates it by rename.
//
// Why not lumberjack: it rotates from one process only; a second process
// sharing the file would keep writing to the renamed file, or rotate it
// again. Here every write checks, with one fstat and one stat, that the
// descriptor still names the path's file and that the line fits; the
// process that finds it full takes an flock on FILE.lock, looks again
// (another process may have rotated already: then it only re-opens), and
// renames. A process that still holds the renamed file notices on its
// next line and re-opens the path, so lines go to the old file only
// between another process's rename and this stat, and each file stays
// within its cap but for those lines.
type rotating struct {
	path string
	rot  Rotation
	lock *flock.Flock

	mu sync.Mutex
	f  *os.File
}

func openRotating(path string, rot Rotation) (*rotating, error) {
	if rot.MaxBytes <= 0 || rot.Backups < 1 {
		return nil, fmt.Errorf("log rotation needs a positive size and at least one older file, got %d bytes and %d", rot.MaxBytes, rot.Backups)
	}
	r := &rotating{path: path, rot: rot, lock: flock.New(path+".lock", flock.SetPermissions(0o600))}
	if err := r.reopen(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *rotating) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.makeRoom(int64(len(p))); err != nil {
		return 0, err
	}
	return r.f.Write(p)
}

// Close closes the current file.
func (r *rotating) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}

// makeRoom makes r.f the path's file with room for n more bytes.
func (r *rotating) makeRoom(n int64) error {
	if r.current(n) {
		return nil
	}
	// Wait for the rotation lock, and meanwhile for another process's
	// rotation: the line goes to the new file as soon as one is there.
	deadline := time.Now().Add(lockWait)
	for {
		locked, err := r.lock.TryLock()
		if err != nil {
			return fmt.Errorf("log full and not rotated: %w", err)
		}
		if locked {
			break
		}
		if err := r.reopenIfMoved(); err != nil {
			return err
		}
		if r.current(n) {
			return nil
		}
		if time.Now().After(deadline) {
			// No rotation now: past the cap a line is dropped rather
			// than grow the file without a bound.
			return errors.New("log full and not rotated: another process holds the rotation lock")
		}
		time.Sleep(lockPoll)
	}
	defer r.lock.Unlock()
	// Under the lock the path stays put: look again.
	if err := r.reopenIfMoved(); err != nil {
		return err
	}
	if st, err := r.f.Stat(); err != nil || st.Size() == 0 || st.Size()+n <= r.rot.MaxBytes {
		return err
	}
	for i := r.rot.Backups - 1; i >= 1; i-- {
		if err := os.Rename(r.backup(i), r.backup(i+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := os.Rename(r.path, r.backup(1)); err != nil {
		return err
	}
	return r.reopen()
}

// current reports whether r.f is the path's file and n more bytes fit.
func (r *rotating) current(n int64) bool {
	if r.f == nil {
		return false
	}
	mine, err := r.f.Stat()
	if err != nil || mine.Size()+n > r.rot.MaxBytes && mine.Size() > 0 {
		return false
	}
	now, err := os.Stat(r.path)
	return err == nil && os.SameFile(mine, now)
}

// reopenIfMoved re-opens the path when it names another file than r.f (or
// none: a removed log is created again).
func (r *rotating) reopenIfMoved() error {
	if r.f != nil {
		mine, err1 := r.f.Stat()
		now, err2 := os.Stat(r.path)
		if err1 == nil && err2 == nil && os.SameFile(mine, now) {
			return nil
		}
	}
	return r.reopen()
}

func (r *rotating) reopen() error {
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if r.f != nil {
		r.f.Close()
	}
	r.f = f
	return nil
}

func (r *rotating) backup(i int) string { return r.path + "." + strconv.Itoa(i) }

// Files returns the log at path and its rotated older files (path.1,
// path.2, ...), oldest first, for readers that want the whole history.
// Only path need exist.
func Files(path string) ([]string, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	type numbered struct {
		n    int
		name string
	}
	var old []numbered
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), base+".")
		if !ok || e.IsDir() {
			continue
		}
		if n, err := strconv.Atoi(rest); err == nil && n > 0 && strconv.Itoa(n) == rest {
			old = append(old, numbered{n, filepath.Join(dir, e.Name())})
		}
	}
	slices.SortFunc(old, func(a, b numbered) int { return b.n - a.n })
	files := make([]string, 0, len(old)+1)
	for _, o := range old {
		files = append(files, o.name)
	}
	return append(files, path), nil
}

// OpenAll opens the log at path and its rotated files and returns them
// oldest first (see Files). Path must open; a rotated file gone by the
// time it is opened is left out. They are opened newest first before any
// is read, and a file met twice is kept once: a rotation in between moves
// a file already open to a higher number, so it neither skips nor repeats
// a file.
func OpenAll(path string) ([]*os.File, error) {
	names, err := Files(path)
	if err != nil {
		return nil, err
	}
	var files []*os.File
	var infos []os.FileInfo
	for i := len(names) - 1; i >= 0; i-- {
		f, err := os.Open(names[i])
		if err != nil {
			if i < len(names)-1 && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			closeAll(files)
			return nil, err
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			closeAll(files)
			return nil, err
		}
		if slices.ContainsFunc(infos, func(o os.FileInfo) bool { return os.SameFile(o, st) }) {
			f.Close()
			continue
		}
		files, infos = append(files, f), append(infos, st)
	}
	slices.Reverse(files)
	return files, nil
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

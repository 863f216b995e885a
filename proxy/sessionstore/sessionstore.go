// Package sessionstore keeps the labels shared by the mcpguard processes
// of one agent session (see policy.LabelStore), so that a secret read
// through one server and a URL fetched through another are judged as the
// one chain they are.
//
// # The session key
//
// An agent starts each of its MCP servers, here each mcpguard, as a child
// process, directly or through a launcher of its own (a server entry of
// `sh -c "mcpguard ..."`, `env A=1 mcpguard`, `npx mcpguard`, `npm exec
// mcpguard`, node running npx): the processes of one session share an
// ancestor, the agent. The key is the first ancestor of mcpguard that is
// not a launcher (launcher.Running, the same definition by which the
// agent configuration code finds mcpguard behind a launcher: env, the
// package runners npx, bunx, uvx, pnpx and npm, pnpm, yarn, bun, pipx, uv
// running exec, dlx, x, run or tool, a shell running -c, and those run by
// node or python or under the title npm gives itself), at most
// maxLaunchers of them skipped. A shell running a script file, an
// interpreter running any other script, and every other program is the
// agent. The key holds that process's id and its start time (on Linux
// field 22 of /proc/PID/stat, clock ticks since boot, with the boot id;
// on macOS kern.proc.pid's p_starttime), so a pid the kernel reuses for
// another process after the agent exits never joins that process to the
// old session.
//
// Walking up cannot be used to join or split sessions: mcpguard's
// ancestors are the agent and the launchers its configuration names,
// which neither the model nor a server chooses. A hostile server is a
// child of mcpguard, never an ancestor; the command lines read are the
// ancestors' own. Skipping a launcher only ever lands on the agent that
// started it, which is the session; and a process of the user's that
// rewrites its own command line or kills a launcher can as well edit the
// store (out of scope, below). An mcpguard whose agent is init
// (orphaned, or started by a service manager), or with more than
// maxLaunchers launchers above it, has no session to share: it keeps its
// labels to itself.
//
// # The store
//
// One file per session, $XDG_RUNTIME_DIR/mcpguard/PID-START.labels (when
// that names no directory, mcpguard-UID in the temporary directory), in
// a directory that must be
// a real directory owned by the user with no access for anyone else
// (checked, never created through a symlink). Each line is one JSON
// label event; a process appends under an exclusive flock(2) only when
// the label is not already held, so the file holds at most one line per
// label (and is read to at most maxFileBytes). Writers append whole
// lines, and a line a crashed process left unfinished is skipped by
// readers and cut off by the next writer, so the crash of one process
// loses nothing the others wrote.
//
// A session's file goes with its agent: each mcpguard removes it when it
// exits after the agent has, and the first use of the store in any
// session removes the files of agents that no longer run.
//
// Processes of the same user can read and change these files, as they
// can the user's other files: the store keeps an injected agent's tool
// calls from hiding a flow, not a hostile local process. Each process
// keeps, besides, every label it saw itself.
package sessionstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"golang.org/x/sys/unix"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/proxy/launcher"
)

// maxFileBytes bounds what is read of a session file: a few label
// events take a few hundred bytes.
const maxFileBytes = 64 << 10

// maxGC bounds the directory entries one collection looks at.
const maxGC = 4096

const suffix = ".labels"

// Key names an agent session: its agent process.
type Key struct {
	PID   int
	Start string // the process's start time, as processStart gives it
}

func (k Key) file() string { return strconv.Itoa(k.PID) + "-" + k.Start + suffix }

// ErrNoSession says mcpguard's agent is not a process whose session can
// be shared (it is init, or its start time cannot be read).
var ErrNoSession = errors.New("mcpguard's parent process is not an agent session that can be shared")

// maxLaunchers bounds the launchers walked past between mcpguard and its
// agent (npx, then npm's sh -c, then env is three).
const maxLaunchers = 8

// ParentKey returns the key of the session of mcpguard's agent: its
// parent process, or the first ancestor past the launchers that started
// mcpguard (see the package documentation).
func ParentKey() (Key, error) { return agentKey(os.Getppid()) }

// agentKey returns the key of the first process that is not a launcher,
// from pid up.
func agentKey(pid int) (Key, error) {
	for range maxLaunchers + 1 {
		if pid <= 1 {
			return Key{}, ErrNoSession
		}
		argv, ppid, err := processArgs(pid)
		if err != nil || !launcher.Running(argv) {
			start, err := processStart(pid)
			if err != nil {
				return Key{}, fmt.Errorf("%w: %v", ErrNoSession, err)
			}
			return Key{PID: pid, Start: start}, nil
		}
		pid = ppid
	}
	return Key{}, fmt.Errorf("%w: more than %d launchers above mcpguard", ErrNoSession, maxLaunchers)
}

// Store is the label file of one session, opened on first use. It
// implements policy.LabelStore.
type Store struct {
	dir string
	key Key

	mu   sync.Mutex
	f    *os.File
	none bool  // no session to share: Record and Held do nothing
	err  error // why the file could not be opened; sticky
}

// New returns the store of session key in dir. Nothing is touched on
// disk until the first Record or Held.
func New(dir string, key Key) *Store { return &Store{dir: dir, key: key} }

// ForParent returns the store of the session of mcpguard's agent
// (ParentKey), in Dir; both are found on first use, so a process that never
// meets a label reads nothing and creates nothing. Without a session to
// share (ErrNoSession), Record and Held do nothing.
func ForParent() *Store { return &Store{} }

// Dir returns the private directory the session files live in, creating
// it (0700) when missing: $XDG_RUNTIME_DIR/mcpguard when XDG_RUNTIME_DIR
// is an absolute path to a directory that exists, else mcpguard-UID in
// os.TempDir(). It refuses a directory that is a symlink, not the user's,
// or open to others.
func Dir() (string, error) {
	dir := filepath.Join(os.TempDir(), "mcpguard-"+strconv.Itoa(os.Getuid()))
	if rt := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(rt) {
		if st, err := os.Stat(rt); err == nil && st.IsDir() {
			dir = filepath.Join(rt, "mcpguard")
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	return dir, privateDir(dir)
}

// privateDir checks that dir is a directory (not a symlink to one) that
// only its owner, this user, can enter.
func privateDir(dir string) error {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return err
	}
	return private(dir, &st, unix.S_IFDIR, "directory")
}

// private checks that st, the status of name, is of type typ (S_IFDIR:
// "directory", S_IFREG: "regular file", as what says), belongs to this user and is open to no one else: another
// local user who could write the store could forge or erase a session's
// labels.
func private(name string, st *unix.Stat_t, typ uint32, what string) error {
	switch {
	case uint32(st.Mode)&unix.S_IFMT != typ:
		return fmt.Errorf("%s is not a %s (a symlink?)", name, what)
	case int(st.Uid) != os.Getuid():
		return fmt.Errorf("%s belongs to another user", name)
	case st.Mode&0o077 != 0:
		return fmt.Errorf("%s is open to other users (mode %o)", name, st.Mode&0o777)
	}
	return nil
}

// open opens the session file once; the first open in a process also
// collects the files of sessions whose agent is gone.
func (s *Store) open() (*os.File, error) {
	if s.f != nil || s.err != nil || s.none {
		return s.f, s.err
	}
	if s.key.PID == 0 {
		k, err := ParentKey()
		if errors.Is(err, ErrNoSession) {
			s.none = true
			return nil, nil
		}
		s.key = k
	}
	if s.dir == "" {
		if s.dir, s.err = Dir(); s.err != nil {
			s.err = fmt.Errorf("session labels: %w", s.err)
			return nil, s.err
		}
	}
	Collect(s.dir)
	f, err := os.OpenFile(filepath.Join(s.dir, s.key.file()), os.O_RDWR|os.O_CREATE|os.O_APPEND|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err == nil {
		if err = ownFile(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		s.err = fmt.Errorf("session labels: %w", err)
		return nil, s.err
	}
	s.f = f
	return f, nil
}

// ownFile checks that f is a regular file of this user's, private to it.
func ownFile(f *os.File) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return err
	}
	return private(f.Name(), &st, unix.S_IFREG, "regular file")
}

// Record appends e unless the session already holds e.Label.
func (s *Store) Record(e policy.LabelEvent) error {
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return s.locked(unix.LOCK_EX, func(f *os.File, data []byte) error {
		if holds(held(data), e.Label) {
			return nil
		}
		if len(data) >= maxFileBytes {
			return errors.New("session labels: the session file is full")
		}
		if len(data) > 0 && data[len(data)-1] != '\n' {
			// A writer crashed mid-line: end its line, which readers skip.
			line = append([]byte{'\n'}, line...)
		}
		_, err := f.Write(append(line, '\n'))
		return err
	})
}

// Held returns the first event of every label the session holds.
func (s *Store) Held() ([]policy.LabelEvent, error) {
	var out []policy.LabelEvent
	err := s.locked(unix.LOCK_SH, func(_ *os.File, data []byte) error {
		out = held(data)
		return nil
	})
	return out, err
}

// locked runs fn with the file's content under a flock of kind how.
func (s *Store) locked(how int, fn func(f *os.File, data []byte) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.open()
	if err != nil || f == nil {
		return err
	}
	fd := int(f.Fd())
	if err := flock(fd, how); err != nil {
		return fmt.Errorf("session labels: lock: %w", err)
	}
	defer flock(fd, unix.LOCK_UN)
	data, err := io.ReadAll(io.NewSectionReader(f, 0, maxFileBytes))
	if err != nil {
		return fmt.Errorf("session labels: %w", err)
	}
	return fn(f, data)
}

func flock(fd, how int) error {
	for {
		err := unix.Flock(fd, how)
		if err != unix.EINTR {
			return err
		}
	}
}

// held parses the complete lines of data: the first event of each label,
// in file order. Lines that do not parse (a line cut by a crash) are
// skipped.
func held(data []byte) []policy.LabelEvent {
	var out []policy.LabelEvent
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break // unfinished: its writer died, or is not done
		}
		line := data[:i]
		data = data[i+1:]
		var e policy.LabelEvent
		if json.Unmarshal(line, &e) != nil || !known(e.Label) || holds(out, e.Label) {
			continue
		}
		out = append(out, e)
	}
	return out
}

func known(l policy.Label) bool {
	return l == policy.Private || l == policy.Untrusted || l == policy.Exfiltrates
}

func holds(events []policy.LabelEvent, l policy.Label) bool {
	for _, e := range events {
		if e.Label == l {
			return true
		}
	}
	return false
}

// Close closes the file, and removes it when the session's agent has
// exited: nothing of a session outlives it.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	if !alive(s.key) {
		if rerr := os.Remove(filepath.Join(s.dir, s.key.file())); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = rerr
		}
	}
	return err
}

// alive reports whether the agent process of key still runs.
func alive(k Key) bool {
	start, err := processStart(k.PID)
	return err == nil && start == k.Start
}

// Collect removes the session files in dir whose agent no longer runs.
func Collect(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(maxGC)
	d.Close()
	for _, name := range names {
		k, ok := parseName(name)
		if ok && !alive(k) {
			os.Remove(filepath.Join(dir, name))
		}
	}
}

// parseName reads the key from a session file's name.
func parseName(name string) (Key, bool) {
	base, ok := strings.CutSuffix(name, suffix)
	if !ok {
		return Key{}, false
	}
	pid, start, ok := strings.Cut(base, "-")
	n, err := strconv.Atoi(pid)
	if !ok || err != nil || n <= 0 || start == "" {
		return Key{}, false
	}
	return Key{PID: n, Start: start}, true
}

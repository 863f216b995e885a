package sessionstore

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcpguard/mcpguard/policy"
)

// helperEnv makes the test binary a helper process: "record:DIR:PID:START"
// records every label many times over and reads them back; "crash:DIR:PID:START"
// takes the lock, writes half a line and dies by SIGKILL.
const helperEnv = "SESSIONSTORE_TEST_HELPER"

// helperEnviron is the environment of a helper process: this one's,
// without the second a -race binary waits at exit for late race reports
// (GORACE's atexit_sleep_ms; a race still fails the helper).
func helperEnviron() []string {
	return append(os.Environ(), "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
}

func TestMain(m *testing.M) {
	if h := os.Getenv(helperEnv); h != "" {
		os.Exit(helper(h))
	}
	os.Exit(m.Run())
}

func helper(spec string) int {
	if spec == "key" {
		k, err := ParentKey()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("%d %s %d\n", k.PID, k.Start, os.Getppid())
		return 0
	}
	parts := strings.Split(spec, ":")
	pid, _ := strconv.Atoi(parts[2])
	s := New(parts[1], Key{PID: pid, Start: parts[3]})
	switch parts[0] {
	case "record":
		for i := range 200 {
			for _, l := range []policy.Label{policy.Private, policy.Untrusted, policy.Exfiltrates} {
				e := policy.LabelEvent{Label: l, Server: "s" + strconv.Itoa(os.Getpid()), Tool: "t" + strconv.Itoa(i), Time: time.Now(), PID: os.Getpid()}
				if err := s.Record(e); err != nil {
					fmt.Fprintln(os.Stderr, err)
					return 1
				}
			}
			if _, err := s.Held(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
	case "crash":
		f, err := os.OpenFile(filepath.Join(parts[1], s.key.file()), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return 1
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
			return 1
		}
		f.Write([]byte(`{"label":"untrusted","server":"half`))
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	return 0
}

// privateTemp is a fresh 0700 directory.
func privateTemp(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// selfKey is the key of a session whose agent is this test process: alive
// as long as the test runs.
func selfKey(t *testing.T) Key {
	t.Helper()
	start, err := processStart(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	return Key{PID: os.Getpid(), Start: start}
}

func runHelpers(t *testing.T, mode, dir string, k Key, n int) []*exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd
	for range n {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(helperEnviron(), fmt.Sprintf("%s=%s:%s:%d:%s", helperEnv, mode, dir, k.PID, k.Start))
		cmd.Stderr = &bytes.Buffer{}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	return cmds
}

// TestConcurrentProcesses: processes recording the same labels at once
// leave one line per label, each whole, and agree on who set it.
func TestConcurrentProcesses(t *testing.T) {
	t.Parallel()
	dir, k := privateTemp(t), selfKey(t)
	for _, cmd := range runHelpers(t, "record", dir, k, 4) {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper: %v: %s", err, cmd.Stderr)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, k.file()))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(data), "\n"); lines != 3 {
		t.Fatalf("%d lines, want one per label:\n%s", lines, data)
	}
	events, err := New(dir, k).Held()
	if err != nil || len(events) != 3 {
		t.Fatalf("held %v, %v", events, err)
	}
	for _, e := range events {
		if e.PID == 0 || e.Server != "s"+strconv.Itoa(e.PID) || e.Tool != "t0" {
			t.Errorf("event %+v: not one helper's first record", e)
		}
	}
	st, err := os.Stat(filepath.Join(dir, k.file()))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, %v", st.Mode(), err)
	}
}

// TestCrashMidLine: a process killed while writing leaves half a line;
// readers skip it, and the next writer's line is whole.
func TestCrashMidLine(t *testing.T) {
	t.Parallel()
	dir, k := privateTemp(t), selfKey(t)
	s := New(dir, k)
	if err := s.Record(policy.LabelEvent{Label: policy.Private, Server: "fs", Tool: "read"}); err != nil {
		t.Fatal(err)
	}
	cmd := runHelpers(t, "crash", dir, k, 1)[0]
	if err := cmd.Wait(); err == nil {
		t.Fatal("the crashing helper exited cleanly")
	}
	if data, _ := os.ReadFile(filepath.Join(dir, k.file())); !bytes.HasSuffix(data, []byte(`"half`)) {
		t.Fatalf("the helper did not leave half a line: %q", data)
	}
	events, err := s.Held()
	if err != nil || len(events) != 1 || events[0].Label != policy.Private {
		t.Fatalf("after the crash: %+v, %v", events, err)
	}
	// The crashed process's lock went with it: the next writer gets it.
	if err := s.Record(policy.LabelEvent{Label: policy.Untrusted, Server: "web", Tool: "fetch"}); err != nil {
		t.Fatal(err)
	}
	events, err = New(dir, k).Held()
	if err != nil || len(events) != 2 || events[1].Server != "web" {
		t.Fatalf("after the next write: %+v, %v", events, err)
	}
}

// TestCollect: files of agents that no longer run (exited, or a pid now
// used by another process) are removed; a live agent's file and other
// files stay.
func TestCollect(t *testing.T) {
	t.Parallel()
	dir, live := privateTemp(t), selfKey(t)
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := Key{PID: cmd.Process.Pid}
	if exited.Start, _ = processStart(exited.PID); exited.Start == "" {
		exited.Start = "1.0"
	}
	cmd.Wait()
	reused := Key{PID: os.Getpid(), Start: "1." + strings.Repeat("0", 12)} // this pid, an earlier process
	other := filepath.Join(dir, "notes.txt")
	for _, name := range []string{live.file(), exited.file(), reused.file(), "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	Collect(dir)
	for name, want := range map[string]bool{live.file(): true, exited.file(): false, reused.file(): false, other: true} {
		_, err := os.Stat(filepath.Join(dir, filepath.Base(name)))
		if (err == nil) != want {
			t.Errorf("%s: present %v, want %v", name, err == nil, want)
		}
	}
}

// TestCloseRemovesEndedSession: Close removes the file once the agent is
// gone, and keeps it while the agent runs.
func TestCloseRemovesEndedSession(t *testing.T) {
	t.Parallel()
	dir := privateTemp(t)
	live := New(dir, selfKey(t))
	gone := New(dir, Key{PID: os.Getpid(), Start: "1.000000000000"})
	for _, s := range []*Store{live, gone} {
		if err := s.Record(policy.LabelEvent{Label: policy.Private}); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, live.key.file())); err != nil {
		t.Errorf("the live session's file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, gone.key.file())); err == nil {
		t.Error("the ended session's file is still there")
	}
}

// TestUnsafeDirectories: a state directory open to others, a symlink in
// its place, or a session file that is a symlink, is refused.
func TestUnsafeDirectories(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	rt := os.Getenv("XDG_RUNTIME_DIR")
	dir, err := Dir()
	if err != nil || dir != filepath.Join(rt, "mcpguard") {
		t.Fatalf("Dir: %q, %v", dir, err)
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Errorf("created with mode %v", st.Mode())
	}
	os.Chmod(dir, 0o755)
	if _, err := Dir(); err == nil || !strings.Contains(err.Error(), "open to other users") {
		t.Errorf("a 0755 directory: %v", err)
	}
	os.Remove(dir)
	target := t.TempDir()
	os.Chmod(target, 0o700)
	if err := os.Symlink(target, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := Dir(); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a symlink: %v", err)
	}

	// An XDG_RUNTIME_DIR that does not exist (a stale variable): the
	// temporary directory.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(rt, "gone"))
	if dir, err := Dir(); err != nil || dir != filepath.Join(tmp, "mcpguard-"+strconv.Itoa(os.Getuid())) {
		t.Errorf("a missing XDG_RUNTIME_DIR: %q, %v", dir, err)
	}

	private, k := privateTemp(t), selfKey(t)
	if err := os.Symlink(filepath.Join(target, "elsewhere"), filepath.Join(private, k.file())); err != nil {
		t.Fatal(err)
	}
	if err := New(private, k).Record(policy.LabelEvent{Label: policy.Private}); err == nil {
		t.Error("recorded through a symlinked session file")
	}
	if _, err := os.Stat(filepath.Join(target, "elsewhere")); err == nil {
		t.Error("a file was created through the symlink")
	}
}

// TestKeyPastLaunchers: an mcpguard started through launchers (a real
// sh -c, nested, with env, under the title npm exec gives itself) has the
// key of the process above them, as one started directly does; a shell
// running a script file is an agent of its own, and keeps its session.
func TestKeyPastLaunchers(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	self := selfKey(t)
	script := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(script, []byte("'"+exe+"' -test.run=^$\nexit $?\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	// "; exit $?" keeps the shell from exec'ing the last command: it
	// stays between the test (the agent) and the helper (mcpguard).
	run := "'" + exe + "' -test.run=^$; exit $?"
	for _, tc := range []struct {
		name     string
		argv     []string
		viaShell bool // the helper's parent is a shell, not this process
		agent    bool // the key is this process
	}{
		{"direct", []string{exe, "-test.run=^$"}, false, true},
		{"sh -c", []string{"sh", "-c", run}, true, true},
		{"env, sh -c, sh -c", []string{"env", "A=1", "sh", "-c", "sh -c \"" + run + "\"; exit $?"}, true, true},
		{"npm exec title", []string{"bash", "-c", "exec -a 'npm exec mcpguard' sh -c \"" + run + "\""}, true, true},
		{"sh running a script", []string{"sh", script}, true, false},
	} {
		cmd := exec.Command(tc.argv[0], tc.argv[1:]...)
		cmd.Env = append(helperEnviron(), helperEnv+"=key")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v: %s", tc.name, err, stderr.Bytes())
		}
		var k Key
		var ppid int
		if _, err := fmt.Sscanf(string(out), "%d %s %d", &k.PID, &k.Start, &ppid); err != nil {
			t.Fatalf("%s: %q: %v", tc.name, out, err)
		}
		if (ppid != os.Getpid()) != tc.viaShell {
			t.Errorf("%s: the helper's parent is %d (this process %d): the wrapper did not stay", tc.name, ppid, os.Getpid())
		}
		if (k == self) != tc.agent {
			t.Errorf("%s: key %+v, this process %+v, want the same: %v", tc.name, k, self, tc.agent)
		}
		if !tc.agent && k.PID != ppid {
			t.Errorf("%s: key %+v, want the script's shell %d", tc.name, k, ppid)
		}
	}
}

// TestParentKey: the key names this process's agent and is stable.
func TestParentKey(t *testing.T) {
	t.Parallel()
	a, err := ParentKey()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ParentKey()
	want, _ := agentKey(os.Getppid())
	if a != b || a != want || strings.ContainsAny(a.Start, "-/") {
		t.Fatalf("keys %+v %+v", a, b)
	}
	if k, ok := parseName(a.file()); !ok || k != a {
		t.Fatalf("parseName(%q) = %+v", a.file(), k)
	}
}

// FuzzHeld: whatever a session file holds (torn lines, other processes'
// garbage, a hostile process's flood), reading it never panics, yields at
// most one event per known label, and only labels that are known.
func FuzzHeld(f *testing.F) {
	f.Add([]byte(`{"label":"private","server":"fs","tool":"read"}` + "\n"))
	f.Add([]byte(`{"label":"private"}` + "\n" + `{"label":"private","server":"second"}` + "\n"))
	f.Add([]byte(`{"label":"untrusted","server":"half`))
	f.Add([]byte("\n\n{\"label\":\"exfiltrates\"}\n{\"label\":\"root\"}\n"))
	f.Add([]byte(`{"label":"private","label":"untrusted"}` + "\n"))
	f.Add([]byte(`{"label":"pr\u0069vate"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		events := held(data)
		if len(events) > 3 {
			t.Fatalf("%d events", len(events))
		}
		seen := map[policy.Label]bool{}
		for _, e := range events {
			if !known(e.Label) || seen[e.Label] {
				t.Fatalf("event %+v", e)
			}
			seen[e.Label] = true
		}
	})
}

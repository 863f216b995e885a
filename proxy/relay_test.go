package proxy

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A server that exits while a process outside its group still holds its
// stdout must not keep mcpguard waiting: the request in flight gets its
// error reply and Run returns the server's status within the grace period.
func TestRunDoesNotWaitForAPipeHeldOutsideTheGroup(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Fatal("setsid (util-linux) is needed for this test")
	}
	pidFile := filepath.Join(t.TempDir(), "holder.pid")
	t.Cleanup(func() { killHolder(t, pidFile) })
	stdinR, stdinW := io.Pipe()
	var out bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Run(Config{
			// The server reads one line, leaves a setsid'd sleeper holding
			// stdout (its pid in pidFile), and exits 3 without answering.
			Argv:   []string{"sh", "-c", `read line; setsid sleep 30 & echo $! >"$0"; exit 3`, pidFile},
			Grace:  300 * time.Millisecond,
			Stdin:  stdinR,
			Stdout: &out,
			Stderr: io.Discard,
		})
	}()
	stdinW.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
	select {
	case status := <-done:
		if status != 3 {
			t.Errorf("status %d, want 3", status)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run still waiting 5s after the server exited")
	}
	if !strings.Contains(out.String(), `"id":1,"error"`) {
		t.Errorf("the request in flight got no error reply: %q", out.String())
	}
}

// killHolder ends the sleeper the test's server left behind, by the pid
// the server wrote, once it is sure the pid is still that sleeper.
func killHolder(t *testing.T, pidFile string) {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Errorf("the server wrote no sleeper pid: %v", err)
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Errorf("sleeper pid %q", b)
		return
	}
	if cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); !bytes.HasPrefix(cmdline, []byte("sleep\x00")) {
		return // gone already
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Errorf("kill sleeper %d: %v", pid, err)
	}
}

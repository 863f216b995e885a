package proxy

import (
	"bytes"
	"io"
	"os/exec"
	"strings"
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
	stdinR, stdinW := io.Pipe()
	var out bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Run(Config{
			// The server reads one line, leaves a setsid'd sleeper holding
			// stdout, and exits 3 without answering.
			Argv:   []string{"sh", "-c", "read line; setsid sleep 30 & exit 3"},
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
	exec.Command("pkill", "-f", "sleep 30").Run()
}

package integration

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// peakRSS reads a live process's peak resident set (VmHWM) in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

// TestBudgetsHostileFloods: for each hostile shape of result (short
// strings that each lose an escape, plain short strings, a <style> of
// unclosed url(, unclosed markdown image destinations and labels),
// mcpguard's peak memory stays within 3x the message + 64 MiB, the reply
// arrives, and the session serves the next call. Each shape gets its own
// process, since VmHWM only grows.
func TestBudgetsHostileFloods(t *testing.T) {
	t.Parallel() // its shapes one after the other: each floods a core
	size := 32 << 20
	if testing.Short() {
		size = 8 << 20
	}
	for _, shape := range []string{"escapes", "plain", "style", "markdown", "label"} {
		t.Run(shape, func(t *testing.T) {
			p := startGuardedRaw(t, nil, testserverBin)
			p.initialize()
			start := time.Now()
			p.sendWait(callLine(1, "flood", map[string]any{"bytes": size, "shape": shape}))
			var reply []byte
			for deadline := time.Now().Add(120 * time.Second); reply == nil; {
				line, err := p.next(time.Until(deadline))
				if err != nil {
					t.Fatalf("no reply: %v", err)
				}
				if bytes.Contains(line[:min(len(line), 64)], []byte(`"id":1,`)) {
					reply = line
				}
			}
			took := time.Since(start)
			peak := peakRSS(t, p.cmd.Process.Pid)
			limit := int64(3*size) + 64<<20
			t.Logf("%s: %d MiB result, reply %d bytes in %v, peak RSS %d MiB (limit %d MiB)",
				shape, size>>20, len(reply), took.Round(time.Millisecond), peak>>20, limit>>20)
			if peak > limit {
				t.Errorf("peak RSS %d MiB over the budget %d MiB", peak>>20, limit>>20)
			}
			if bytes.Contains(reply, []byte(`\u001b`)) {
				t.Error("an escape reached the agent")
			}
			if got := p.callOK(2, "echo", map[string]any{"text": "next"}); got != "next" {
				t.Errorf("next call: %q", got)
			}
		})
	}
}

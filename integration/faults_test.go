package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rejection is the data object of mcpguard's error replies.
type rejection struct {
	Passed    *bool  `json:"passed"`
	ErrorCode string `json:"error_code"`
	Error     string `json:"error"`
	Summary   string `json:"summary"`
}

func rejectionOf(t testing.TB, m *rawMsg) rejection {
	t.Helper()
	var r rejection
	if m.Error == nil {
		t.Fatalf("want a JSON-RPC error, got %s", truncate(string(m.raw), 500))
	}
	if err := json.Unmarshal(m.Error.Data, &r); err != nil {
		t.Fatalf("error.data is not a rejection object: %s", truncate(string(m.raw), 500))
	}
	return r
}

// TestGuardedCrashInFlightSDK: 50 calls in flight through the SDK client
// and the server crashes: every call returns an error within a second of
// the crash. (relay conformance: crash_in_flight.txtar holds the replies.)
func TestGuardedCrashInFlightSDK(t *testing.T) {
	t.Parallel()
	cs := connectGuarded(t, nil, testserverBin)
	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, n)
	done := make(chan time.Time, n)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for range n {
		wg.Go(func() {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hold", Arguments: map[string]any{}})
			errs <- err
			done <- time.Now()
		})
	}
	// The server answers held once all n calls wait in it.
	if got := callText(t, cs, "held", map[string]any{"count": n}); got != strconv.Itoa(n)+" held" {
		t.Fatalf("held: %q", got)
	}
	crashed := time.Now()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "crash", Arguments: map[string]any{"code": 3}})
	if err == nil {
		t.Errorf("crash call: no error")
	}
	wg.Wait()
	close(errs)
	close(done)
	for err := range errs {
		if err == nil {
			t.Errorf("a slow call in flight during the crash succeeded")
		}
	}
	for at := range done {
		if d := at.Sub(crashed); d > time.Second {
			t.Errorf("a call in flight returned %v after the crash, want < 1s", d)
			break
		}
	}
}

// TestDirectExitStatus checks testserver's crash tool itself.
func TestDirectExitStatus(t *testing.T) {
	t.Parallel()
	p := startRaw(t, testserverBin)
	p.initialize()
	p.sendWait(callLine(1, "crash", map[string]any{"code": 7}))
	status, err := p.wait(10 * time.Second)
	if err != nil || status != 7 {
		t.Fatalf("testserver exit status %d (%v), want 7", status, err)
	}
}

// TestGuardedExitStatus: mcpguard exits with the server's status.
func TestGuardedExitStatus(t *testing.T) {
	t.Parallel()
	t.Run("crash7", func(t *testing.T) {
		p := startGuardedRaw(t, nil, testserverBin)
		p.initialize()
		p.sendWait(callLine(1, "crash", map[string]any{"code": 7}))
		m, _ := p.expect("1", 2*time.Second)
		if m.Error == nil { // the crash call itself was in flight
			t.Errorf("crash call: want an error reply, got %s", m.raw)
		}
		// mcpguard may wait for the agent to close its side; both are fine.
		status, err := p.wait(5 * time.Second)
		if err != nil {
			status, err = p.closeAndWait(10 * time.Second)
		}
		if err != nil || status != 7 {
			t.Fatalf("mcpguard exit status %d (%v), want 7", status, err)
		}
	})
	t.Run("clean", func(t *testing.T) {
		p := startGuardedRaw(t, nil, testserverBin)
		p.initialize()
		p.callOK(1, "echo", map[string]any{"text": "x"})
		status, err := p.closeAndWait(10 * time.Second)
		if err != nil || status != 0 {
			t.Fatalf("mcpguard exit status %d (%v), want 0", status, err)
		}
	})
}

// procState returns the state letter of pid and its process group, or
// ok=false if it does not exist.
func procState(pid int) (state byte, pgrp int, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return 0, 0, false
	}
	pgrp, _ = strconv.Atoi(f[2])
	return f[0][0], pgrp, true
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	st, _, ok := procState(pid)
	return ok && st != 'Z' && st != 'X'
}

// groupMembers lists the live processes of process group pgid.
func groupMembers(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, pg, ok := procState(pid); ok && pg == pgid && st != 'Z' && st != 'X' {
			out = append(out, pid)
		}
	}
	return out
}

// readPids reads testserver's -pidfile, which it writes before it reads
// its input: once it has answered anything, the file is there.
func readPids(t *testing.T, file string) (server, sleeper int) {
	t.Helper()
	b, err := os.ReadFile(file)
	f := strings.Fields(string(b))
	if err != nil || len(f) != 2 {
		t.Fatalf("no pids in %s: %q %v", file, b, err)
	}
	server, _ = strconv.Atoi(f[0])
	sleeper, _ = strconv.Atoi(f[1])
	return server, sleeper
}

// TestGuardedStdinEOFKillsGroup: when the agent closes stdin, mcpguard ends
// the server and everything in its process group (here a `sleep` child
// holding the server's stdout), also a server that ignores EOF and SIGTERM.
func TestGuardedStdinEOFKillsGroup(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		flags []string
		limit time.Duration
	}{
		{"polite", nil, 10 * time.Second},
		// grace, SIGTERM, grace, SIGKILL: bounded by twice the grace period
		// (1 s here) plus slack.
		{"stubborn", []string{"-ignore-eof", "-ignore-term"}, 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pids")
			argv := append([]string{testserverBin, "-sleeper", "300", "-pidfile", pidFile}, tc.flags...)
			t.Parallel()
			p := startGuardedRaw(t, &guardOpts{Args: []string{"--grace", "1"}}, argv...)
			p.initialize()
			server, sleeper := readPids(t, pidFile)
			t.Cleanup(func() { // never leave them behind, whatever happened
				for _, pid := range []int{sleeper, server} {
					if alive(pid) {
						if proc, err := os.FindProcess(pid); err == nil {
							proc.Kill()
						}
					}
				}
			})
			_, pgrp, _ := procState(server)
			if pgrp != server {
				t.Errorf("server pid %d is in process group %d: want its own group", server, pgrp)
			}
			if !alive(sleeper) {
				t.Fatalf("sleeper %d not running", sleeper)
			}
			start := time.Now()
			status, err := p.closeAndWait(tc.limit)
			if err != nil {
				t.Fatalf("after stdin EOF: %v", err)
			}
			t.Logf("mcpguard exited %d after %v", status, time.Since(start))
			// mcpguard has reaped the server; the sleeper got SIGKILL and
			// dies when the kernel next schedules it.
			if !waitGone(server, time.Second) {
				t.Errorf("server %d still alive after mcpguard exited", server)
			}
			if !waitGone(sleeper, time.Second) {
				t.Errorf("sleeper %d (server's process group) still alive after mcpguard exited", sleeper)
			}
			if left := groupMembers(server); len(left) > 0 {
				t.Errorf("processes of the server's group still alive: %v", left)
			}
		})
	}
}

// TestGuardedOversizeRequest: a 20 MiB request line is refused with a
// JSON-RPC error (id null: the id comes after the limit), never reaches the
// server, and the next message is served.
func TestGuardedOversizeRequest(t *testing.T) {
	t.Parallel()
	record := filepath.Join(t.TempDir(), "record")
	p := startGuardedRaw(t, nil, testserverBin, "-record", record)
	p.initialize()
	big := `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"text":"` +
		strings.Repeat("A", 20<<20) + `"}},"id":99}`
	written := p.send([]byte(big))
	m, _ := p.expect("null", 20*time.Second)
	r := rejectionOf(t, m)
	if r.Passed == nil || *r.Passed || r.ErrorCode != "INPUT_REJECTED_MALFORMED" {
		t.Errorf("rejection data: %+v, want passed:false, error_code INPUT_REJECTED_MALFORMED", r)
	}
	select {
	case err := <-written:
		if err != nil {
			t.Fatalf("writing the big line: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("mcpguard stopped reading the oversized line")
	}
	if got := p.callOK(100, "echo", map[string]any{"text": "next"}); got != "next" {
		t.Errorf("next request: got %q", got)
	}
	if st, err := os.Stat(record); err != nil || st.Size() > 1<<20 {
		t.Errorf("the server received the oversized line (record file %v, %v)", st.Size(), err)
	}
}

// hugeResult fetches a 16 MiB text result and checks that the agent reads
// exactly the line the server wrote.
func hugeResult(t *testing.T, p *rawProc) {
	p.initialize()
	const n = 16 << 20
	want := hugeReply(n)
	p.sendWait(callLine(1, "huge", map[string]any{"bytes": n}))
	for deadline := time.Now().Add(60 * time.Second); ; {
		line, err := p.next(time.Until(deadline))
		if err != nil {
			t.Fatalf("no huge reply: %v", err)
		}
		if !bytes.HasPrefix(line, []byte(`{"id":1,`)) {
			continue
		}
		if !bytes.Equal(line, want) {
			i := 0
			for i < min(len(line), len(want)) && line[i] == want[i] {
				i++
			}
			t.Fatalf("huge reply: %d bytes, want the server's %d; they differ from byte %d: %q", len(line), len(want), i, truncate(string(line[i:]), 200))
		}
		return
	}
}

// hugeReply is the line testserver writes for huge with id 1: its
// encoding/json encoding of the reply (members sorted; <, > and & as
// \u escapes), put together from the encoding of one line of the text,
// since encoding or decoding 16 MiB with encoding/json takes seconds
// under the race detector.
func hugeReply(n int) []byte {
	one := hugeText(len(hugeLine))
	unit, _ := json.Marshal(one)
	tail, _ := json.Marshal(one[:n%len(hugeLine)])
	var b bytes.Buffer
	b.WriteString(`{"id":1,"jsonrpc":"2.0","result":{"content":[{"text":"`)
	for range n / len(hugeLine) {
		b.Write(unit[1 : len(unit)-1])
	}
	b.Write(tail[1 : len(tail)-1])
	b.WriteString(`","type":"text"}]}}`)
	return b.Bytes()
}

func TestDirectHugeResult(t *testing.T) {
	t.Parallel()
	hugeResult(t, startRaw(t, testserverBin))
}

// TestGuardedHugeResult: a 16 MiB result (ordinary multi-line text) is
// relayed intact.
func TestGuardedHugeResult(t *testing.T) {
	t.Parallel()
	hugeResult(t, startGuardedRaw(t, nil, testserverBin))
}

// TestGuardedStderrCanonicalised: the server's stderr reaches mcpguard's
// stderr line by line through the text canonicaliser: the agent shows it
// in a log viewer or a terminal, where OSC 52 writes the clipboard, OSC 8
// plants a link and U+202E reorders what is shown. Ordinary text (tabs,
// non-ASCII, Persian with ZWNJ, emoji) is unchanged. With --raw-stderr it
// passes through as the server wrote it.
func TestGuardedStderrCanonicalised(t *testing.T) {
	t.Parallel()
	stamp := time.Now().UnixNano()
	hostile := fmt.Sprintf("stderr-marker-%d \x1b[1mbold\x1b[0m \x1b]52;c;Y3VybCB4fHNo\x07clip \x1b]8;;https://evil.example/\x07link\x1b]8;;\x07 \u202eevil ünïcode\ttab\n", stamp)
	clean := fmt.Sprintf("stderr-marker-%d bold clip link evil ünïcode\ttab\n", stamp)
	benign := "می\u200cخواهم 👩\u200d💻 ❤\ufe0f code\tx\n"
	run := func(args []string) string {
		logFile := filepath.Join(t.TempDir(), "mcpguard.log")
		p := startGuardedRaw(t, &guardOpts{Log: logFile, Args: args}, testserverBin)
		p.initialize()
		p.callOK(1, "stderr", map[string]any{"text": hostile + benign})
		if _, err := p.closeAndWait(10 * time.Second); err != nil {
			t.Fatal(err)
		}
		return p.stderr.String()
	}
	if got := run(nil); !strings.Contains(got, clean+benign) || strings.Contains(got, "\x1b") || strings.Contains(got, "\u202e") {
		t.Errorf("mcpguard's stderr lacks the canonicalised server output %q; got %q", clean+benign, truncate(got, 2000))
	}
	if got := run([]string{"--raw-stderr"}); !strings.Contains(got, hostile+benign) {
		t.Errorf("with --raw-stderr, mcpguard's stderr lacks the server's raw output %q; got %q", hostile+benign, truncate(got, 2000))
	}
}

// serverRequests exercises server→client requests and notifications with
// testserver: roots/list, sampling/createMessage, elicitation/create, and
// progress notifications.
func serverRequests(t *testing.T, cs *mcp.ClientSession) {
	if got, want := callText(t, cs, "ask_roots", nil), "roots: 2\n"+testRoots[0].URI+"\n"+testRoots[1].URI; got != want {
		t.Errorf("ask_roots: %q, want %q", got, want)
	}
	if got := callText(t, cs, "ask_sampling", nil); got != "sampled: "+sampledText {
		t.Errorf("ask_sampling: %q", got)
	}
	if got := callText(t, cs, "ask_elicit", nil); got != "action: accept" {
		t.Errorf("ask_elicit: %q", got)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	params := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 7}}
	params.SetProgressToken("tok-7")
	if _, err := cs.CallTool(ctx, params); err != nil {
		t.Fatal(err)
	}
	rec := recorderOf(cs)
	rec.waitFor(t, "7 progress notifications", func() bool { return len(rec.progress["tok-7"]) >= 7 })
	rec.mu.Lock()
	if got := len(rec.progress["tok-7"]); got != 7 {
		t.Errorf("progress notifications: %d, want 7", got)
	}
	rec.mu.Unlock()
	// Many calls at once, answered out of order, each to its caller.
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			text := fmt.Sprintf("concurrent %d", i)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": (20 - i) * 5}})
			if err != nil || res.IsError {
				t.Errorf("slow %d: %v", i, err)
			}
			if got := callText(t, cs, "echo", map[string]any{"text": text}); got != text {
				t.Errorf("echo: %q, want %q", got, text)
			}
		})
	}
	wg.Wait()
}

func TestDirectServerRequests(t *testing.T) {
	t.Parallel()
	serverRequests(t, connectDirect(t, testserverBin))
}

func TestGuardedServerRequests(t *testing.T) {
	t.Parallel()
	serverRequests(t, connectGuarded(t, nil, testserverBin))
}

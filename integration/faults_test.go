package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// TestGuardedCrashInFlight: 50 slow requests in flight and the server
// crashes: every one (and the crash call itself) gets a JSON-RPC error
// reply within a second, and mcpguard exits with the server's status.
func TestGuardedCrashInFlight(t *testing.T) {
	p := startGuardedRaw(t, nil, testserverBin)
	p.initialize()
	const n = 50
	for i := range n {
		p.sendWait(callLine(1000+i, "slow", map[string]any{"ms": 5000}))
	}
	// A ping answered means the server has read every request before it.
	p.sendWait(request("sync", "ping", nil))
	p.expect(`"sync"`, 5*time.Second)
	p.sendWait(callLine(2000, "crash", map[string]any{"code": 3}))
	crashed := time.Now()

	want := map[string]bool{"2000": true}
	for i := range n {
		want[strconv.Itoa(1000+i)] = true
	}
	deadline := crashed.Add(time.Second)
	for len(want) > 0 {
		line, err := p.next(time.Until(deadline))
		if err != nil {
			t.Fatalf("%d requests in flight got no reply within 1s of the crash (%v); missing ids: %v", len(want), err, keys(want))
		}
		var m rawMsg
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("not JSON: %q", truncate(string(line), 300))
		}
		id := string(m.ID)
		if !want[id] {
			continue
		}
		if m.Error == nil {
			t.Errorf("id %s: want an error reply, got %s", id, truncate(string(line), 300))
		}
		delete(want, id)
	}
	t.Logf("all %d in-flight requests answered %v after the crash", n+1, time.Since(crashed))
	status, err := p.closeAndWait(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if status != 3 {
		t.Errorf("mcpguard exit status %d, want the server's 3", status)
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestGuardedCrashInFlightSDK is the same through the SDK client: every
// call returns an error within a second of the crash.
func TestGuardedCrashInFlightSDK(t *testing.T) {
	cs := connectGuarded(t, nil, testserverBin)
	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, n)
	done := make(chan time.Time, n)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for i := range n {
		wg.Go(func() {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hold", Arguments: map[string]any{"key": strconv.Itoa(i)}})
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
	for _, tc := range []struct {
		name  string
		flags []string
		limit time.Duration
	}{
		{"polite", nil, 10 * time.Second},
		// grace, SIGTERM, grace, SIGKILL: bounded by twice the grace period
		// (3s by default) plus slack.
		{"stubborn", []string{"-ignore-eof", "-ignore-term"}, 15 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pids")
			argv := append([]string{testserverBin, "-sleeper", "300", "-pidfile", pidFile}, tc.flags...)
			p := startGuardedRaw(t, nil, argv...)
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

// serverGarbage runs testserver's garbage tool and returns what the agent
// read: the lines that were not JSON, and the reply.
func serverGarbage(t *testing.T, p *rawProc) (invalid [][]byte, text string) {
	p.initialize()
	text = p.callOK(1, "garbage", nil)
	p.callOK(2, "echo", map[string]any{"text": "after"})
	return p.invalidLines(), text
}

// TestDirectServerGarbage checks that testserver really sends garbage.
func TestDirectServerGarbage(t *testing.T) {
	invalid, text := serverGarbage(t, startRaw(t, testserverBin))
	if len(invalid) != 2 || text != "after garbage" {
		t.Fatalf("direct: %d invalid lines %q, reply %q; want the 2 garbage lines", len(invalid), invalid, text)
	}
}

// TestGuardedServerGarbage: garbage and trailing-data lines from the server
// are never relayed; the proper reply after them is.
func TestGuardedServerGarbage(t *testing.T) {
	p := startGuardedRaw(t, nil, testserverBin)
	invalid, text := serverGarbage(t, p)
	if len(invalid) > 0 {
		t.Errorf("the agent read %d lines that are not one JSON value: %q", len(invalid), invalid)
	}
	if text != "after garbage" {
		t.Errorf("reply after the garbage: %q", text)
	}
}

// TestGuardedServerGarbageReply: a reply with trailing data is not relayed;
// the agent gets a JSON-RPC error for that id instead of waiting forever
// (the request it answers can be known: it is the only one in
// flight, and its id is the line's).
func TestGuardedServerGarbageReply(t *testing.T) {
	p := startGuardedRaw(t, nil, testserverBin)
	p.initialize()
	p.sendWait(callLine(5, "garbage_reply", nil))
	m, _ := p.expect("5", 5*time.Second)
	if m.Error == nil {
		t.Errorf("want an error reply for id 5, got %s", m.raw)
	}
	if inv := p.invalidLines(); len(inv) > 0 {
		t.Errorf("the agent read lines that are not JSON: %q", inv)
	}
	p.callOK(6, "echo", map[string]any{"text": "still serving"})
}

// hugeResult fetches a 16 MiB text result and returns its text.
func hugeResult(t *testing.T, p *rawProc) string {
	p.initialize()
	const n = 16 << 20
	text := p.callOK(1, "huge", map[string]any{"bytes": n})
	if len(text) != n {
		t.Fatalf("huge result: %d bytes, want %d", len(text), n)
	}
	if text != hugeText(n) {
		t.Fatalf("huge result is not the text the server sent")
	}
	return text
}

func TestDirectHugeResult(t *testing.T) {
	hugeResult(t, startRaw(t, testserverBin))
}

// TestGuardedHugeResult: a 16 MiB result (ordinary multi-line text) is
// relayed intact.
func TestGuardedHugeResult(t *testing.T) {
	hugeResult(t, startGuardedRaw(t, nil, testserverBin))
}

// TestGuardedStderrCanonicalised: the server's stderr reaches mcpguard's
// stderr line by line through the text canonicaliser: the agent shows it
// in a log viewer or a terminal, where OSC 52 writes the clipboard, OSC 8
// plants a link and U+202E reorders what is shown. Ordinary text (tabs,
// non-ASCII, Persian with ZWNJ, emoji) is unchanged. With --raw-stderr it
// passes through as the server wrote it.
func TestGuardedStderrCanonicalised(t *testing.T) {
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

// strayReplies runs three calls that leave the server answering requests
// nobody is waiting for: stray_replies (id 7), which answers a made-up id
// 1007 and its own id twice; hold (id 9), which the agent cancels before
// the server replies; and release (id 10), whose reply the server writes
// after its late reply to 9. It returns the responses the agent read
// besides the first reply to 7 and the reply to 10.
func strayReplies(t *testing.T, p *rawProc) []string {
	p.initialize()
	p.sendWait(callLine(7, "stray_replies", nil))
	first, skipped := p.expect("7", 10*time.Second)
	if !strings.Contains(string(first.Result), "first reply") {
		t.Fatalf("the agent read %s as the reply to 7", first.raw)
	}
	p.sendWait(callLine(9, "hold", map[string]any{"key": "nine"}))
	p.sendWait(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"test"}}`)
	p.sendWait(callLine(10, "release", map[string]any{"key": "nine"}))
	_, more := p.expect("10", 10*time.Second)
	var stray []string
	for _, m := range append(skipped, more...) {
		if m.isResponse() {
			stray = append(stray, string(m.raw))
		}
	}
	return stray
}

// TestDirectStrayReplies shows what the server sends: three responses that
// answer nothing the agent is waiting for.
func TestDirectStrayReplies(t *testing.T) {
	if got := strayReplies(t, startRaw(t, testserverBin)); len(got) != 3 {
		t.Errorf("want the server's 3 stray responses, read %d: %q", len(got), got)
	}
}

// TestGuardedStrayReplies: a response that answers no request in flight
// never reaches the agent (it would skip the egress rules of the call it
// claims to answer), and each is logged as dropped.
func TestGuardedStrayReplies(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "mcpguard.log")
	p := startGuardedRaw(t, &guardOpts{Log: logFile}, testserverBin)
	if got := strayReplies(t, p); len(got) != 0 {
		t.Errorf("the agent read %d responses to no request in flight: %q", len(got), got)
	}
	if _, err := p.closeAndWait(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	var dropped []string
	for _, line := range strings.Split(string(log), "\n") {
		var ev struct{ Event, Direction, ID, Message string }
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Event == "dropped" && ev.Direction == "egress" {
			dropped = append(dropped, ev.ID)
		}
	}
	if want := []string{"1007", "7", "9"}; !slices.Equal(dropped, want) {
		t.Errorf("dropped responses logged for ids %q, want %q", dropped, want)
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
	serverRequests(t, connectDirect(t, testserverBin))
}

func TestGuardedServerRequests(t *testing.T) {
	serverRequests(t, connectGuarded(t, nil, testserverBin))
}

package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// maxReadLine bounds what the raw reader accepts from a peer in one line.
const maxReadLine = 80 << 20

// rawProc is a process spoken to over raw pipes: the test writes lines to
// its stdin and reads lines from its stdout, for what the SDK cannot send
// (malformed input) or would hide (the exact lines an agent reads).
type rawProc struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte // every stdout line, in order
	stderr *lockedBuffer
	exited chan struct{}
	status int

	guarded bool // mcpguard: every stdout line must be valid JSON

	mu      sync.Mutex
	invalid [][]byte // stdout lines that are not one valid JSON value
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startRaw starts argv (a server, or mcpguard in front of one).
func startRaw(t testing.TB, argv ...string) *rawProc {
	t.Helper()
	p := &rawProc{t: t, lines: make(chan []byte, 1024), stderr: &lockedBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Stderr = p.stderr
	p.cmd.WaitDelay = 2 * time.Second // a leftover child holding stderr must not hang Wait
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %q: %v", argv, err)
	}
	go p.read(stdout)
	go func() {
		err := p.cmd.Wait()
		p.status = p.cmd.ProcessState.ExitCode()
		if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			p.status = 128 + int(ws.Signal())
		}
		_ = err
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(15 * time.Second):
			p.cmd.Process.Kill()
			<-p.exited
		}
		if inv := p.invalidLines(); p.guarded && len(inv) > 0 {
			t.Errorf("mcpguard wrote %d stdout lines that are not one JSON value, first: %q", len(inv), truncate(string(inv[0]), 300))
		}
		if t.Failed() {
			t.Logf("stderr of %s:\n%s", argv[0], truncate(p.stderr.String(), 4000))
		}
	})
	return p
}

// startGuardedRaw starts mcpguard in front of argv, with raw pipes.
func startGuardedRaw(t testing.TB, o *guardOpts, argv ...string) *rawProc {
	t.Helper()
	p := startRaw(t, guardArgv(t, o, argv...)...)
	p.guarded = true
	return p
}

func (p *rawProc) read(r io.Reader) {
	defer close(p.lines)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		var line []byte
		for {
			chunk, err := br.ReadSlice('\n')
			if len(line)+len(chunk) <= maxReadLine {
				line = append(line, chunk...)
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil {
				if len(line) > 0 {
					p.keep(line)
				}
				return
			}
			break
		}
		p.keep(line)
	}
}

// maxValidated is the longest stdout line keep checks with json.Valid; a
// longer one (a 16 MiB result) would cost seconds under the race
// detector, and the test that reads it compares it byte for byte with
// the valid line it expects.
const maxValidated = 1 << 20

func (p *rawProc) keep(line []byte) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	if len(line) <= maxValidated && !json.Valid(line) {
		p.mu.Lock()
		p.invalid = append(p.invalid, line)
		p.mu.Unlock()
	}
	p.lines <- line
}

// invalidLines returns the stdout lines that were not one valid JSON value.
func (p *rawProc) invalidLines() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][]byte(nil), p.invalid...)
}

// send writes one line (a newline is added). Large writes run in the
// background so that a peer that stops reading cannot hang the test; the
// returned channel reports the write's error.
func (p *rawProc) send(line []byte) <-chan error {
	done := make(chan error, 1)
	buf := make([]byte, 0, len(line)+1)
	buf = append(append(buf, line...), '\n')
	go func() {
		_, err := p.stdin.Write(buf)
		done <- err
	}()
	return done
}

// sendWait writes one line and waits (bounded) for the write to complete.
func (p *rawProc) sendWait(line string) {
	p.t.Helper()
	select {
	case err := <-p.send([]byte(line)):
		if err != nil {
			p.t.Fatalf("write: %v", err)
		}
	case <-time.After(20 * time.Second):
		p.t.Fatalf("write of %d bytes did not complete in 20s", len(line))
	}
}

// next returns the next stdout line, or an error after timeout or EOF.
func (p *rawProc) next(timeout time.Duration) ([]byte, error) {
	select {
	case line, ok := <-p.lines:
		if !ok {
			return nil, io.EOF
		}
		return line, nil
	case <-time.After(timeout):
		return nil, fmt.Errorf("no line within %v", timeout)
	}
}

// rawMsg is a JSON-RPC message as the test reads it.
type rawMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *rawError       `json:"error"`
	raw     []byte
}

type rawError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (m *rawMsg) isResponse() bool { return m.Method == "" && (m.Result != nil || m.Error != nil) }

// expect reads lines until a response whose id is exactly id (JSON text,
// "null" included), skipping notifications and other responses, which are
// returned in skipped. It fails the test after timeout.
func (p *rawProc) expect(id string, timeout time.Duration) (m *rawMsg, skipped []*rawMsg) {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			p.t.Fatalf("no response with id %s within %v (skipped %d messages)", id, timeout, len(skipped))
		}
		line, err := p.next(left)
		if err != nil {
			p.t.Fatalf("waiting for response %s: %v", id, err)
		}
		var msg rawMsg
		if err := json.Unmarshal(line, &msg); err != nil {
			continue // kept in invalid; guarded runs fail on it at cleanup
		}
		msg.raw = line
		if msg.isResponse() && idEqual(msg.ID, id) {
			return &msg, skipped
		}
		skipped = append(skipped, &msg)
	}
}

func idEqual(a json.RawMessage, b string) bool {
	if a == nil {
		a = json.RawMessage("null")
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return fmt.Sprint(x) == fmt.Sprint(y) && fmt.Sprintf("%T", x) == fmt.Sprintf("%T", y)
}

// request is a JSON-RPC request line.
func request(id any, method string, params any) string {
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func callLine(id any, tool string, args map[string]any) string {
	if args == nil {
		args = map[string]any{}
	}
	return request(id, "tools/call", map[string]any{"name": tool, "arguments": args})
}

// initialize performs the MCP handshake over the raw pipe, for a client
// that offers roots (it must answer the server's roots/list).
func (p *rawProc) initialize() {
	p.t.Helper()
	p.handshake(map[string]any{"roots": map[string]any{}})
}

// initializeWithout performs the handshake for a client with no
// capabilities: the server asks it nothing.
func (p *rawProc) initializeWithout() {
	p.t.Helper()
	p.handshake(map[string]any{})
}

func (p *rawProc) handshake(capabilities map[string]any) {
	p.t.Helper()
	p.sendWait(request("init", "initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    capabilities,
		"clientInfo":      map[string]any{"name": "raw-test", "version": "1"},
	}))
	m, _ := p.expect(`"init"`, 20*time.Second)
	if m.Error != nil {
		p.t.Fatalf("initialize failed: %s", m.raw)
	}
	p.sendWait(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// callOK calls a tool and returns its first text content.
func (p *rawProc) callOK(id any, tool string, args map[string]any) string {
	p.t.Helper()
	p.sendWait(callLine(id, tool, args))
	idText, _ := json.Marshal(id)
	m, _ := p.expect(string(idText), 30*time.Second)
	if m.Error != nil {
		p.t.Fatalf("call %s failed: %s", tool, truncate(string(m.raw), 500))
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil || len(r.Content) == 0 || r.IsError {
		p.t.Fatalf("call %s: unexpected result %s", tool, truncate(string(m.raw), 500))
	}
	return r.Content[0].Text
}

// closeAndWait closes stdin and waits (bounded) for the process to exit,
// returning its status.
func (p *rawProc) closeAndWait(timeout time.Duration) (int, error) {
	p.stdin.Close()
	return p.wait(timeout)
}

func (p *rawProc) wait(timeout time.Duration) (int, error) {
	select {
	case <-p.exited:
		return p.status, nil
	case <-time.After(timeout):
		return -1, errors.New("process did not exit within " + timeout.String())
	}
}

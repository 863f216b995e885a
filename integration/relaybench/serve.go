package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// serveMCP is a minimal, fast MCP server: one goroutine, replies in order,
// output flushed when no more input is buffered. It answers initialize,
// tools/list, and tools/call of echo (the arguments' text back) and blob
// (N bytes of printable text with a newline every 80 bytes).
func serveMCP(in io.Reader, out io.Writer) {
	r := bufio.NewReaderSize(in, 1<<20)
	w := bufio.NewWriterSize(out, 1<<20)
	defer w.Flush()
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		id := field(line, `"id":`, ',')
		switch {
		case id == nil: // a notification
		case bytes.Contains(line, []byte(`"method":"initialize"`)):
			reply(w, id, `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"relaybench","version":"1"}}`)
		case bytes.Contains(line, []byte(`"method":"tools/list"`)):
			reply(w, id, `{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"blob","inputSchema":{"type":"object"}}]}`)
		case bytes.Contains(line, []byte(`"name":"blob"`)):
			n, _ := strconv.Atoi(string(field(line, `"bytes":`, '}')))
			w.WriteString(`{"jsonrpc":"2.0","id":`)
			w.Write(id)
			w.WriteString(`,"result":{"content":[{"type":"text","text":"`)
			writeBlob(w, n)
			w.WriteString(`"}]}}` + "\n")
		default:
			text := field(line, `"text":"`, '"')
			w.WriteString(`{"jsonrpc":"2.0","id":`)
			w.Write(id)
			w.WriteString(`,"result":{"content":[{"type":"text","text":"`)
			w.Write(text)
			w.WriteString(`"}]}}` + "\n")
		}
		if r.Buffered() == 0 {
			w.Flush()
		}
	}
}

func reply(w *bufio.Writer, id []byte, result string) {
	w.WriteString(`{"jsonrpc":"2.0","id":`)
	w.Write(id)
	w.WriteString(`,"result":` + result + "}\n")
}

// field returns the bytes after key up to end (not included).
func field(line []byte, key string, end byte) []byte {
	i := bytes.Index(line, []byte(key))
	if i < 0 {
		return nil
	}
	rest := line[i+len(key):]
	j := bytes.IndexByte(rest, end)
	if j < 0 {
		return nil
	}
	return rest[:j]
}

// writeBlob writes n bytes of JSON string body: 79 letters and an escaped
// newline (two bytes, \n) per line, like real multi-line output.
func writeBlob(w *bufio.Writer, n int) {
	line := bytes.Repeat([]byte("x"), 78)
	line = append(line, '\\', 'n')
	for n >= len(line) {
		w.Write(line)
		n -= len(line)
	}
	w.Write(bytes.Repeat([]byte("y"), n))
}

// bareRelay is the floor every stdio proxy pays: it starts the server and
// copies lines both ways with no checks, buffering and flushing exactly as
// mcpguard does (a write per batch of complete lines).
// streamRelay makes copyLines copy long lines as they arrive (-stream).
var streamRelay bool

func bareRelay(argv []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	toServer, _ := cmd.StdinPipe()
	fromServer, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return 127
	}
	// The same 1 MiB pipe buffers mcpguard asks for, so the floor is fair.
	for _, f := range []any{os.Stdin, os.Stdout, toServer, fromServer} {
		growPipe(f)
	}
	done := make(chan struct{})
	go func() {
		copyLines(os.Stdout, fromServer)
		close(done)
	}()
	copyLines(toServer, os.Stdin)
	toServer.Close()
	<-done
	cmd.Wait()
	return cmd.ProcessState.ExitCode()
}

func growPipe(f any) {
	sc, ok := f.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		return
	}
	if rc, err := sc.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETPIPE_SZ, 1<<20)
		})
	}
}

// copyLines relays whole lines: like every MCP proxy (it must see a whole
// message to route it) it holds a line until its newline has arrived, then
// writes it; lines are batched and flushed when no complete line is
// buffered. With stream set it instead copies a long line's bytes as they
// arrive, which no message-aware proxy can do; relaybench -stream-relay
// reports that floor too.
func copyLines(dst io.Writer, src io.Reader) {
	r := bufio.NewReaderSize(src, 64<<10)
	w := bufio.NewWriterSize(dst, 64<<10)
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull && streamRelay:
			w.Write(chunk)
			continue
		case err == bufio.ErrBufferFull:
			line = append(line, chunk...)
			continue
		case len(line) > 0:
			line = append(line, chunk...)
			w.Write(line)
			line = line[:0]
		default:
			w.Write(chunk)
		}
		if err != nil {
			w.Flush()
			return
		}
		if b, _ := r.Peek(r.Buffered()); bytes.IndexByte(b, '\n') < 0 {
			w.Flush()
		}
	}
}

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"time"
)

// This file holds the two programs the driver runs around the process under
// test: the MCP server (-serve) and the bare line relay (-relay). Both are
// written to be as cheap as their job allows, so that what the benchmark
// sees beyond them is the cost of what sits in the middle.

// pipeSize is what every pipe in every path is grown to: the default
// pipe-max-size, which mcpguard asks for on its own pipes too. With the
// same pipes everywhere, the paths differ only in what runs between them.
const pipeSize = 1 << 20

// ioBuffer is the size of the server's and driver's bufio buffers.
const ioBuffer = 1 << 20

// Wire text the server writes and the driver expects, byte for byte.
const (
	reqPrefix   = `{"jsonrpc":"2.0","id":`
	echoMiddle  = `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`
	echoSuffix  = `"}}}`
	replyMiddle = `,"result":{"content":[{"type":"text","text":"`
	replySuffix = `"}]}}` + "\n"
)

// serve is a minimal MCP server on stdin/stdout. One goroutine answers the
// requests in the order they arrive and flushes its output only when no
// complete request is left in its input buffer, so pipelined requests are
// answered in few writes and a lone one at once. Echo calls in the form the
// driver sends take a path without JSON decoding; anything else is decoded.
func serve(in io.Reader, out io.Writer) error {
	r := bufio.NewReaderSize(in, ioBuffer)
	w := bufio.NewWriterSize(out, ioBuffer)
	blobs := map[int][]byte{} // escaped blob bodies by size
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull { // a long request: gather it
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull {
				line, err = r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil {
			w.Flush()
			if err == io.EOF {
				return nil
			}
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		if id, text, ok := fastEcho(line); ok {
			w.WriteString(reqPrefix)
			w.Write(id)
			w.WriteString(replyMiddle)
			w.Write(text)
			w.WriteString(replySuffix)
		} else if len(bytes.TrimSpace(line)) > 0 {
			answer(w, line, blobs)
		}
		if !lineBuffered(r) {
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
}

// fastEcho recognises an echo call exactly as the driver writes it: integer
// id, members in the driver's order, text without quotes or escapes.
func fastEcho(line []byte) (id, text []byte, ok bool) {
	rest, ok := bytes.CutPrefix(line, []byte(reqPrefix))
	if !ok {
		return nil, nil, false
	}
	i := bytes.IndexByte(rest, ',')
	if i <= 0 || !digits(rest[:i]) {
		return nil, nil, false
	}
	id, rest = rest[:i], rest[i:]
	rest, ok = bytes.CutPrefix(rest, []byte(echoMiddle))
	if !ok {
		return nil, nil, false
	}
	text, ok = bytes.CutSuffix(rest, []byte(echoSuffix))
	if !ok || bytes.IndexByte(text, '"') >= 0 || bytes.IndexByte(text, '\\') >= 0 {
		return nil, nil, false
	}
	return id, text, true
}

func digits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// request is what answer reads from any other message.
type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string `json:"name"`
		Arguments struct {
			Text  string `json:"text"`
			Bytes int    `json:"bytes"`
		} `json:"arguments"`
	} `json:"params"`
}

// toolsList announces the two tools.
const toolsList = `{"tools":[` +
	`{"name":"echo","description":"Returns its text argument.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}},` +
	`{"name":"blob","description":"Returns N bytes of multi-line text.","inputSchema":{"type":"object","properties":{"bytes":{"type":"integer"}},"required":["bytes"]}}]}`

// answer handles every message but the fast echo: the handshake, tools/list,
// blob and echo calls in any form, notifications (no reply) and errors.
func answer(w *bufio.Writer, line []byte, blobs map[int][]byte) {
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		writeReply(w, []byte("null"), "", `{"code":-32700,"message":"parse error"}`)
		return
	}
	if len(req.ID) == 0 || string(req.ID) == "null" {
		return // a notification (notifications/initialized and the like)
	}
	switch {
	case req.Method == "initialize":
		writeReply(w, req.ID, `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"bench-server","version":"1.0.0"}}`, "")
	case req.Method == "ping":
		writeReply(w, req.ID, `{}`, "")
	case req.Method == "tools/list":
		writeReply(w, req.ID, toolsList, "")
	case req.Method == "tools/call" && req.Params.Name == "echo":
		text, _ := json.Marshal(req.Params.Arguments.Text)
		writeReply(w, req.ID, `{"content":[{"type":"text","text":`+string(text)+`}]}`, "")
	case req.Method == "tools/call" && req.Params.Name == "blob" && req.Params.Arguments.Bytes >= 0 && req.Params.Arguments.Bytes <= 1<<30:
		n := req.Params.Arguments.Bytes
		body, ok := blobs[n]
		if !ok {
			body = escapedBlob(n)
			blobs[n] = body
		}
		w.WriteString(reqPrefix)
		w.Write(req.ID)
		w.WriteString(replyMiddle)
		w.Write(body)
		w.WriteString(replySuffix)
	case req.Method == "tools/call":
		writeReply(w, req.ID, "", `{"code":-32602,"message":"unknown tool"}`)
	default:
		writeReply(w, req.ID, "", `{"code":-32601,"message":"method not found"}`)
	}
}

func writeReply(w *bufio.Writer, id []byte, result, rpcErr string) {
	w.WriteString(reqPrefix)
	w.Write(id)
	if rpcErr != "" {
		w.WriteString(`,"error":` + rpcErr + "}\n")
		return
	}
	w.WriteString(`,"result":` + result + "}\n")
}

// blobText is the text of a blob result of n bytes: lines of 79 printable
// ASCII characters (no quote or backslash, so nothing but the newline needs
// escaping) each ended by a newline, the characters shifting from line to
// line.
func blobText(n int) []byte {
	const printable = ` !#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_abcdefghijklmnopqrstuvwxyz{|}~`
	b := make([]byte, n)
	for i := range b {
		line, col := i/80, i%80
		if col == 79 {
			b[i] = '\n'
		} else {
			b[i] = printable[(line*7+col)%len(printable)]
		}
	}
	return b
}

// escapedBlob is blobText(n) as the body of a JSON string: each newline
// written as the two bytes \n.
func escapedBlob(n int) []byte {
	text := blobText(n)
	out := make([]byte, 0, n+n/80)
	for _, c := range text {
		if c == '\n' {
			out = append(out, '\\', 'n')
		} else {
			out = append(out, c)
		}
	}
	return out
}

// lineBuffered reports whether a complete line is already in r's buffer,
// so that reading it cannot block.
func lineBuffered(r *bufio.Reader) bool {
	b, _ := r.Peek(r.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}

// relay is the floor every stdio proxy pays: it starts the server and copies
// lines both ways with no checks, in the way a careful proxy would — blocking
// pipes of pipeSize (no netpoller hop), one bufio reader and writer per
// direction, a write per batch of complete lines, and a P more than its two
// blocked loops, as mcpguard takes (see proxy.relayProcs), so that the Go
// runtime's sysmon does not retake them from their reads, and, as mcpguard
// does (see proxy.passScheduler), a trip through the scheduler every 16
// batches, so that sysmon does not take a loop for a goroutine running
// forever and preempt it every 10 ms; and, as mcpguard does (see
// proxy.passOn), it passes a long batch on every passOn lines while the
// peer it wakes runs on another core. It forwards whole lines, as any
// proxy that must see a message before passing it on has to; with stream
// it copies a long line's bytes as they arrive instead.
func relay(argv []string, stream bool) int {
	if os.Getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) < 3 {
		runtime.GOMAXPROCS(3)
	}
	inR, inW, err := blockingPipe()
	if err != nil {
		return 127
	}
	outR, outW, err := blockingPipe()
	if err != nil {
		return 127
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, os.Stderr
	if err := cmd.Start(); err != nil {
		return 127
	}
	inR.Close()
	outW.Close()
	growPipe(os.Stdin)
	growPipe(os.Stdout)

	done := make(chan struct{})
	go func() {
		copyLines(os.Stdout, outR, stream)
		close(done)
	}()
	copyLines(inW, os.Stdin, stream)
	inW.Close() // the agent is gone: so is the server's input
	<-done
	cmd.Wait()
	return cmd.ProcessState.ExitCode()
}

// copyLines copies newline-delimited lines from src to dst until src ends,
// flushing whenever no complete line is buffered (before a read that may
// block) and every passOn lines of a longer batch. A long line is gathered
// in a reused buffer and written whole, unless stream is set.
func copyLines(dst io.Writer, src io.Reader, stream bool) {
	r := bufio.NewReaderSize(src, 64<<10)
	w := bufio.NewWriterSize(dst, 64<<10)
	var long []byte
	batches, held, paused := 0, 0, 0
	for {
		chunk, err := r.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull && stream:
			if _, err := w.Write(chunk); err != nil {
				return
			}
			continue
		case err == bufio.ErrBufferFull:
			long = append(long, chunk...)
			continue
		case len(long) > 0:
			long = append(long, chunk...)
			chunk, long = long, long[:0]
		}
		if _, werr := w.Write(chunk); werr != nil {
			return
		}
		if err != nil { // EOF: a last line without newline has been written
			w.Flush()
			return
		}
		held++
		switch {
		case !lineBuffered(r):
			held = 0
			if err := w.Flush(); err != nil {
				return
			}
			if batches++; batches%16 == 0 {
				runtime.Gosched()
			}
			paused = max(paused-1, 0)
		case held >= passOn && paused == 0:
			held = 0
			start := time.Now()
			if err := w.Flush(); err != nil {
				return
			}
			if time.Since(start) > lostCore {
				paused = pauseBatches
			}
		}
	}
}

// passOn is how many lines of a longer batch the relay copies before it
// flushes them, and lostCore and pauseBatches when it stops doing so for
// a while, as proxy.passOn.
const (
	passOn       = 16
	lostCore     = 20 * time.Microsecond
	pauseBatches = 64
)

// itoa appends id's decimal text.
func itoa(b []byte, id int) []byte { return strconv.AppendInt(b, int64(id), 10) }

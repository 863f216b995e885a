package proxy

import (
	"bytes"
	"io"
	"unicode/utf8"

	"github.com/mcpguard/mcpguard/rules/canon"
)

// stderrChunk bounds what the stderr filter holds: a line longer than
// this is canonicalised in pieces of at most this size, cut at a code
// point boundary.
const stderrChunk = 64 << 10

// copyStderr copies the server's stderr to w line by line through the
// text canonicaliser until src ends. The agent shows that stream in a log
// viewer or a terminal, where an escape sequence (OSC 52 clipboard write,
// OSC 8 link, a cursor move that hides a line) or a bidi override does
// what it does in a tool result. Memory stays bounded: a line longer than
// stderrChunk goes out in pieces, each canonicalised on its own (an escape
// sequence cut by a piece's end is removed to that end; nothing it held
// survives as a control). Write errors are ignored: the server must never
// block on a stderr nobody reads.
func copyStderr(w io.Writer, src io.Reader) { copyStderrWith(w, src, nil) }

// copyStderrWith is copyStderr with redact (nil: none) applied to each
// canonicalised line or piece.
func copyStderrWith(w io.Writer, src io.Reader, redact func(string) string) {
	buf := make([]byte, stderrChunk)
	out := make([]byte, 0, stderrChunk+stderrChunk/2)
	emit := func(line []byte) {
		out, _ = canon.AppendText(out[:0], line)
		if redact != nil {
			if r := redact(string(out)); r != string(out) {
				out = append(out[:0], r...)
			}
		}
		_, _ = w.Write(out)
		if cap(out) > 2*stderrChunk {
			out = make([]byte, 0, stderrChunk+stderrChunk/2)
		}
	}
	n := 0
	for {
		k, err := src.Read(buf[n:])
		n += k
		start := 0
		for {
			i := bytes.IndexByte(buf[start:n], '\n')
			if i < 0 {
				break
			}
			emit(buf[start : start+i+1])
			start += i + 1
		}
		if start == 0 && n == len(buf) {
			cut := runeCut(buf[:n])
			emit(buf[:cut])
			start = cut
		}
		n = copy(buf, buf[start:n])
		if err != nil {
			if n > 0 {
				emit(buf[:n])
			}
			return
		}
	}
}

// runeCut returns where to cut b so that a code point split by b's end
// goes with the next piece: len(b), or the start of an incomplete UTF-8
// sequence in its last three bytes.
func runeCut(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

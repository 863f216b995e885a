package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
)

// errTooLong reports a line over the size limit; the reader has skipped it
// and is positioned at the next line.
var errTooLong = errors.New("line over the size limit")

// prefixLen is how much of an over-long line is kept, to find its id.
const prefixLen = 4096

const readBufferSize = 64 << 10

// lineReader frames newline-delimited messages with a hard size limit. Unlike
// bufio.Scanner it neither fails the stream at 64 KiB nor grows without
// bound: a line over max is skipped to its newline and reported, and the
// stream goes on.
type lineReader struct {
	br     *bufio.Reader
	max    int
	buf    []byte
	prefix []byte // the first bytes of the last over-long line
	taken  int    // lines returned since drained last reported true
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, readBufferSize), max: max}
}

// next returns the next line without its newline. The slice is valid until
// the next call. A last line without a newline at EOF is returned too.
func (l *lineReader) next() ([]byte, error) {
	l.taken++
	l.buf = l.buf[:0]
	over := false
	for {
		chunk, err := l.br.ReadSlice('\n')
		complete := err == nil
		if complete {
			chunk = chunk[:len(chunk)-1]
		}
		switch {
		case over:
		case len(l.buf)+len(chunk) > l.max:
			over = true
			l.prefix = append(l.prefix[:0], l.buf[:min(len(l.buf), prefixLen)]...)
			l.prefix = append(l.prefix, chunk[:min(len(chunk), prefixLen-len(l.prefix))]...)
			l.buf = l.buf[:0]
		case complete && len(l.buf) == 0:
			return chunk, nil // the common case: no copy
		default:
			if need := len(l.buf) + len(chunk); need > cap(l.buf) {
				// Double (bounded by the limit) rather than let append
				// grow by 1.25x: a 16 MiB line would otherwise allocate
				// about five times its size on the way.
				grown := make([]byte, len(l.buf), min(max(2*cap(l.buf), need, readBufferSize), l.max+1))
				copy(grown, l.buf)
				l.buf = grown
			}
			l.buf = append(l.buf, chunk...)
		}
		switch {
		case complete && over:
			return nil, errTooLong
		case complete:
			return l.buf, nil
		case err == bufio.ErrBufferFull:
			continue
		case over:
			return nil, errTooLong
		case len(l.buf) > 0:
			return l.buf, nil
		}
		return nil, err
	}
}

// hasLine reports whether a whole line is already buffered, so that the
// caller knows whether reading it can block.
func (l *lineReader) hasLine() bool {
	n := l.br.Buffered()
	if n == 0 {
		return false
	}
	b, _ := l.br.Peek(n)
	return bytes.IndexByte(b, '\n') >= 0
}

// drained reports whether no whole line is buffered, so that the next
// read may block and the caller should flush first; batch reports that
// more than one line was taken since it last said so (pipelined input).
func (l *lineReader) drained() (drained, batch bool) {
	if l.hasLine() {
		return false, false
	}
	batch, l.taken = l.taken > 1, 0
	return true, batch
}

// lineWriter serialises whole lines from several goroutines onto one
// stream. Lines are buffered; the relay flushes before it would block on
// input, so pipelined messages go out in few writes and a lone message goes
// out at once.
type lineWriter struct {
	mu  sync.Mutex
	w   *bufio.Writer
	err error
}

func newLineWriter(w io.Writer) *lineWriter {
	return &lineWriter{w: bufio.NewWriterSize(w, readBufferSize)}
}

// writeLine appends b and a newline. After the first error every call fails.
func (w *lineWriter) writeLine(b []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if _, err := w.w.Write(b); err != nil {
		w.err = err
		return err
	}
	w.err = w.w.WriteByte('\n')
	return w.err
}

func (w *lineWriter) flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.w.Buffered() > 0 {
		w.err = w.w.Flush()
	}
	return w.err
}

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

// reuseMax is the longest line whose buffer the reader keeps for the
// next line; a longer one gets a buffer of its own, freed with it.
const reuseMax = 1 << 20

// lineReader frames newline-delimited messages with a hard size limit. Unlike
// bufio.Scanner it neither fails the stream at 64 KiB nor grows without
// bound: a line over max is skipped to its newline and reported, and the
// stream goes on.
//
// A line longer than the read buffer is kept as the pieces read, then
// joined once into a buffer of its exact size: its peak cost is twice its
// size. Growing one buffer by doubling cost up to three times (a line
// just over 32 MiB: the 32 MiB buffer and its 64 MiB successor), and the
// doubled buffer stayed for the rest of the session.
type lineReader struct {
	br     *bufio.Reader
	max    int
	buf    []byte   // the last joined line, when short enough to reuse
	parts  [][]byte // the pieces of the line being read
	size   int      // their length
	prefix []byte   // the first bytes of the last over-long line
	taken  int      // lines returned since drained last reported true
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, readBufferSize), max: max}
}

// next returns the next line without its newline. The slice is valid until
// the next call. A last line without a newline at EOF is returned too.
func (l *lineReader) next() ([]byte, error) {
	l.taken++
	l.drop()
	over := false
	for {
		chunk, err := l.br.ReadSlice('\n')
		complete := err == nil
		if complete {
			chunk = chunk[:len(chunk)-1]
		}
		switch {
		case over:
		case l.size+len(chunk) > l.max:
			over = true
			l.prefix = l.prefix[:0]
			for _, p := range append(l.parts, chunk) {
				l.prefix = append(l.prefix, p[:min(len(p), prefixLen-len(l.prefix))]...)
			}
			l.drop()
		case complete && l.size == 0:
			return chunk, nil // the common case: no copy
		default:
			l.parts = append(l.parts, bytes.Clone(chunk))
			l.size += len(chunk)
		}
		switch {
		case complete && over:
			return nil, errTooLong
		case complete:
			return l.join(), nil
		case err == bufio.ErrBufferFull:
			continue
		case over:
			return nil, errTooLong
		case l.size > 0:
			return l.join(), nil
		}
		return nil, err
	}
}

// join returns the pieces as one line.
func (l *lineReader) join() []byte {
	var line []byte
	if l.size <= reuseMax {
		line = l.buf[:0]
	} else {
		line = make([]byte, 0, l.size)
	}
	for _, p := range l.parts {
		line = append(line, p...)
	}
	if l.size <= reuseMax {
		l.buf = line
	}
	l.drop()
	return line
}

// drop forgets the pieces of a line.
func (l *lineReader) drop() {
	clear(l.parts)
	l.parts, l.size = l.parts[:0], 0
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

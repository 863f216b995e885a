package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"
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
	held   int    // lines returned since drained or due last reported true
	paused int    // batches to go without pieces (see pieceTook)
}

// passOn is how many lines a relay loop takes from a longer batch before it
// flushes what it has written: its output goes out when its input is
// drained (see drained) or every passOn lines (see due), whichever comes
// first.
//
// Why: a loop that flushed only when drained held a whole batch until it
// had handled the last line of it. With many calls in flight, the agent,
// the ingress loop, the server and the egress loop then passed one batch
// around and took turns, each waiting for the whole batch of the one
// before: on two cores, one stayed idle and the two loops never ran at the
// same time. Passed on in pieces, the server answers, and the egress loop
// checks, the first lines of a batch while the ingress loop checks the
// rest. A lone message is drained at once and goes out as before.
//
// That needs a second core for the peer. Where the kernel puts the peer a
// write wakes on the writer's own core, the peer takes the core at once
// and the pieces only add switches between processes: a flush that takes
// over lostCore (the peer, and often the other loop, ran meanwhile: a
// write that wakes a peer on another core returns in a few microseconds)
// turns the pieces off until pauseBatches batches, its own included,
// have ended; then a piece tries again.
const (
	passOn       = 16
	lostCore     = 20 * time.Microsecond
	pauseBatches = 64
)

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, readBufferSize), max: max}
}

// next returns the next line without its newline. The slice is valid until
// the next call. A last line without a newline at EOF is returned too.
func (l *lineReader) next() ([]byte, error) {
	l.taken++
	l.held++
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
	batch, l.taken, l.held = l.taken > 1, 0, 0
	if l.paused > 0 {
		l.paused--
	}
	return true, batch
}

// due reports that passOn lines were taken since drained or due last
// reported true, so that the caller flushes them while more are buffered,
// unless the pieces are paused. Call it when drained reports false, and
// tell pieceTook how long the flush took.
func (l *lineReader) due() bool {
	if l.held < passOn || l.paused > 0 {
		return false
	}
	l.held = 0
	return true
}

// pieceTook is how long flushing the piece due asked for took: over
// lostCore, the pieces pause (see passOn).
func (l *lineReader) pieceTook(d time.Duration) {
	if d > lostCore {
		l.paused = pauseBatches
	}
}

// piece calls flush for a piece of a long batch when due says so, and
// times it for pieceTook. A relay loop calls it when drained reports
// false.
func (l *lineReader) piece(flush func()) {
	if !l.due() {
		return
	}
	start := time.Now()
	flush()
	l.pieceTook(time.Since(start))
}

// lineWriter serialises whole lines from several goroutines onto one
// stream. Lines are buffered; the relay flushes before it would block on
// input and every passOn lines of a longer batch, so pipelined messages go
// out in few writes and a lone message goes out at once.
//
// A goroutine that must not block on the stream (the egress loop answering
// a request of the server's: the server may be blocked writing the output
// only that loop reads) queues its line instead (enqueue). Queued lines
// keep their place: every write, flush and close first moves them into the
// stream, in the order they were queued, and a pump goroutine writes them
// out when nothing else does. Close writes every queued line before it
// closes the stream: an answer decided is never dropped at shutdown.
type lineWriter struct {
	mu  sync.Mutex
	out io.Writer
	w   *bufio.Writer
	err error

	// The queue has a lock of its own, never held across a write, so
	// that enqueue does not wait for a write that blocks.
	qmu     sync.Mutex
	queued  [][]byte
	qbytes  int
	pumping bool
	closed  bool
	room    chan struct{} // closed and replaced when the queue is emptied
	pending atomic.Bool   // queued is not empty: the fast path skips qmu
}

// maxQueuedBytes bounds what enqueue holds: past it a line waits for
// room (a single line larger than it is taken when the queue is empty).
// The writer takes the whole queue at once, so up to as much again can be
// on its way out while the reader does not read.
const maxQueuedBytes = 1 << 20

// errClosed is what writes get after close.
var errClosed = errors.New("the stream is closed")

func newLineWriter(w io.Writer) *lineWriter {
	return &lineWriter{out: w, w: bufio.NewWriterSize(w, readBufferSize), room: make(chan struct{})}
}

// writeLine appends b and a newline, after the lines queued before it.
// After the first error every call fails.
func (w *lineWriter) writeLine(b []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.moveQueued()
	if w.err != nil {
		return w.err
	}
	w.write(b)
	return w.err
}

// write appends b and a newline; w.mu is held and w.err is nil.
func (w *lineWriter) write(b []byte) {
	if _, err := w.w.Write(b); err != nil {
		w.err = err
		return
	}
	w.err = w.w.WriteByte('\n')
}

func (w *lineWriter) flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.moveQueued()
	return w.flushLocked()
}

// flushLocked writes out the buffer; w.mu is held.
func (w *lineWriter) flushLocked() error {
	if w.err != nil {
		return w.err
	}
	if w.w.Buffered() > 0 {
		w.err = w.w.Flush()
	}
	return w.err
}

// enqueue queues b to be written and flushed after every line written or
// queued before it, without waiting for the stream. When the queue is
// full it queues nothing and returns a channel closed once there is room;
// once the writer is closed it returns errClosed.
func (w *lineWriter) enqueue(b []byte) (room <-chan struct{}, err error) {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	switch {
	case w.closed:
		return nil, errClosed
	case w.qbytes > 0 && w.qbytes+len(b) > maxQueuedBytes:
		return w.room, nil
	}
	w.queued = append(w.queued, b)
	w.qbytes += len(b)
	w.pending.Store(true)
	if !w.pumping {
		w.pumping = true
		go w.pump()
	}
	return nil, nil
}

// pump writes out the queue until it is empty.
func (w *lineWriter) pump() {
	for {
		w.mu.Lock()
		w.moveQueued()
		_ = w.flushLocked() // a writer that failed drops what it is given
		w.mu.Unlock()
		w.qmu.Lock()
		if len(w.queued) == 0 {
			w.pumping = false
			w.qmu.Unlock()
			return
		}
		w.qmu.Unlock()
	}
}

// moveQueued moves the queued lines into the buffer; w.mu is held.
func (w *lineWriter) moveQueued() {
	if !w.pending.Load() {
		return
	}
	w.qmu.Lock()
	queued := w.queued
	w.queued, w.qbytes = nil, 0
	w.pending.Store(false)
	close(w.room)
	w.room = make(chan struct{})
	w.qmu.Unlock()
	for _, b := range queued {
		if w.err == nil {
			w.write(b)
		}
	}
}

// close writes out every line written or queued, then closes the stream
// when it is an io.Closer; later writes and enqueues fail. It waits for a
// write in progress, and the flush can block as long as the reader does
// not read: call it where that cannot stop the caller from ending the
// reader (downstream.stop).
func (w *lineWriter) close() error {
	w.qmu.Lock()
	w.closed = true
	w.qmu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.moveQueued()
	err := w.flushLocked()
	if w.err == nil {
		w.err = errClosed
	}
	if c, ok := w.out.(io.Closer); ok {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

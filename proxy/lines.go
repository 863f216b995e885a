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
	src    *stream
	br     *bufio.Reader // reads src
	max    int
	direct int // bytes of one read of a long line (see readLong)
	// arrived, when set, is given the head of a long line after each
	// read of it that did not reach its end, and when the line moves to
	// a larger buffer (see policy.HeadCheck).
	arrived func(head []byte)
	buf     []byte
	prefix  []byte // the first bytes of the last over-long line
	taken   int    // lines returned since drained last reported true
	held    int    // lines returned since drained or due last reported true
	paused  int    // batches to go without pieces (see pieceTook)
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
	return newLineReaderSize(r, max, readBufferSize, directRead)
}

// newLineReaderSize is newLineReader with a buffer of size bytes for short
// lines and reads of up to direct bytes of a long one: the tests make
// them small, so that short inputs take every path.
func newLineReaderSize(r io.Reader, max, size, direct int) *lineReader {
	src := &stream{r: r}
	return &lineReader{src: src, br: bufio.NewReaderSize(src, size), max: max, direct: direct}
}

// stream is what a lineReader reads: r, after the bytes that the last read
// of a long line took past its newline (see readLong).
type stream struct {
	r    io.Reader
	rest []byte // read from r, not yet given out: a suffix of kept
	kept []byte // rest's storage, reused
	last bool   // the last Read gave bytes of rest
}

func (s *stream) Read(p []byte) (int, error) {
	if s.last = len(s.rest) > 0; s.last {
		n := copy(p, s.rest)
		s.rest = s.rest[n:]
		return n, nil
	}
	return s.r.Read(p)
}

// putBack makes b, the end of what the last Read gave, the next bytes
// Read gives.
func (s *stream) putBack(b []byte) {
	if s.last { // b is in kept, just before rest
		s.rest = s.kept[len(s.kept)-len(s.rest)-len(b):]
		return
	}
	s.kept = append(s.kept[:0], b...)
	s.rest = s.kept
}

// directRead bounds one read of a long line straight into the line
// buffer, and so the bytes of the next lines it may take (stream.rest).
const directRead = 1 << 20

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
			l.grow(len(l.buf) + len(chunk))
			l.buf = append(l.buf, chunk...)
		}
		switch {
		case complete && over:
			return nil, errTooLong
		case complete:
			return l.buf, nil
		case err == bufio.ErrBufferFull && !over:
			if line, done, err := l.readLong(); done {
				return line, err
			}
			over = true
			continue
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

// readLong reads the rest of a long line, whose head is in l.buf, straight
// into l.buf, in reads of up to directRead bytes: not through br, which
// would copy every byte once more in 64 KiB reads. br holds nothing now
// (ReadSlice gave out all it held); what a read takes past the newline
// goes back to the stream for the next lines. done is false when the
// line went over the limit before its end: l.prefix is set, l.buf
// emptied, and the caller skips the rest of the line through br.
func (l *lineReader) readLong() (line []byte, done bool, err error) {
	for empty := 0; ; {
		if len(l.buf) > l.max {
			l.prefix = append(l.prefix[:0], l.buf[:min(len(l.buf), prefixLen)]...)
			l.buf = l.buf[:0]
			return nil, false, nil
		}
		if l.grow(len(l.buf)+min(l.br.Size(), l.max+1-len(l.buf))) && l.arrived != nil {
			// The head moved to a new array, where the line goes on:
			// what was judged of it holds for the line only there.
			l.arrived(l.buf)
		}
		n, rerr := l.src.Read(l.buf[len(l.buf):min(cap(l.buf), len(l.buf)+l.direct)])
		got := l.buf[len(l.buf) : len(l.buf)+n]
		if i := bytes.IndexByte(got, '\n'); i >= 0 {
			l.src.putBack(got[i+1:])
			l.buf = l.buf[:len(l.buf)+i]
			if len(l.buf) > l.max {
				l.prefix = append(l.prefix[:0], l.buf[:min(len(l.buf), prefixLen)]...)
				return nil, true, errTooLong
			}
			return l.buf, true, nil
		}
		l.buf = l.buf[:len(l.buf)+n]
		if n > 0 && l.arrived != nil && len(l.buf) <= l.max {
			l.arrived(l.buf)
		}
		switch {
		case rerr != nil && len(l.buf) > l.max:
			// over, as the loop's head says
		case rerr != nil:
			return l.buf, true, nil // a last line without a newline
		case n > 0:
			empty = 0
		default:
			if empty++; empty == 100 { // a reader that makes no progress
				return l.buf, true, nil // as bufio gives up on one
			}
		}
	}
}

// grow gives l.buf room for need bytes, at most l.max+1 in all, and
// reports whether it moved l.buf to a new array.
func (l *lineReader) grow(need int) bool {
	if need <= cap(l.buf) {
		return false
	}
	// Double (bounded by the limit) rather than let append grow by
	// 1.25x: a 16 MiB line would otherwise allocate about five times its
	// size on the way.
	grown := make([]byte, len(l.buf), min(max(2*cap(l.buf), need, l.br.Size()), l.max+1))
	copy(grown, l.buf)
	l.buf = grown
	return true
}

// hasLine reports whether a whole line is already buffered, so that the
// caller knows whether reading it can block.
func (l *lineReader) hasLine() bool {
	n := l.br.Buffered()
	if n > 0 {
		if b, _ := l.br.Peek(n); bytes.IndexByte(b, '\n') >= 0 {
			return true
		}
	}
	return bytes.IndexByte(l.src.rest, '\n') >= 0
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

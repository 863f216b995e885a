package eventlog

import (
	"bytes"
	"fmt"
	"io"
)

// MaxLineBytes is the longest log line a reader accepts. mcpguard's own
// lines are a few hundred bytes (every string is capped); a longer line is
// not one of them and is skipped.
const MaxLineBytes = 1 << 20

// Lines splits a stream into lines of at most max bytes, skipping and
// counting longer ones, in bounded memory. It suits a file that is still
// growing: at the end of the data it returns io.EOF and keeps an
// unfinished last line for the next call.
type Lines struct {
	r          io.Reader
	max        int
	buf        []byte
	start, end int
	skipping   bool // inside a line longer than max
	tooLong    int
}

// NewLines returns a Lines reading r with lines of at most max bytes
// (MaxLineBytes when max <= 0).
func NewLines(r io.Reader, max int) *Lines {
	if max <= 0 {
		max = MaxLineBytes
	}
	return &Lines{r: r, max: max}
}

// Next returns the next complete line without its newline, valid until
// the next call. At the end of the data it returns io.EOF (or the read
// error); a later call reads on from where it stopped.
func (l *Lines) Next() ([]byte, error) {
	if l.buf == nil {
		l.buf = make([]byte, max(l.max+1, 64<<10))
	}
	for {
		if i := bytes.IndexByte(l.buf[l.start:l.end], '\n'); i >= 0 {
			line := l.buf[l.start : l.start+i]
			l.start += i + 1
			switch {
			case l.skipping: // the tail of a line too long to keep
				l.skipping = false
				continue
			case len(line) > l.max:
				l.tooLong++
				continue
			}
			return line, nil
		}
		switch {
		case l.skipping:
			l.start, l.end = 0, 0
		case l.end-l.start > l.max:
			l.tooLong++
			l.skipping = true
			l.start, l.end = 0, 0
		case l.start > 0:
			l.end = copy(l.buf, l.buf[l.start:l.end])
			l.start = 0
		}
		n, err := l.r.Read(l.buf[l.end:])
		l.end += n
		if n == 0 {
			if err == nil {
				err = io.ErrNoProgress
			}
			return nil, err
		}
	}
}

// Rest returns the unfinished last line, for a stream that has ended, and
// forgets it.
func (l *Lines) Rest() []byte {
	if l.skipping || l.start == l.end {
		l.start, l.end = 0, 0
		return nil
	}
	rest := l.buf[l.start:l.end]
	l.start, l.end = 0, 0
	if len(rest) > l.max {
		l.tooLong++
		return nil
	}
	return rest
}

// Reset makes l read r from its start, dropping any unfinished line.
func (l *Lines) Reset(r io.Reader) {
	l.r = r
	l.start, l.end = 0, 0
	l.skipping = false
}

// TooLong is how many lines longer than the limit were skipped.
func (l *Lines) TooLong() int { return l.tooLong }

// eachLine calls fn with every line of r, including an unfinished last
// one, until fn returns an error, and returns how many lines were too long
// to read.
func eachLine(r io.Reader, fn func([]byte) error) (tooLong int, err error) {
	lines := NewLines(r, 0)
	defer func() { tooLong = lines.TooLong() }()
	for {
		line, err := lines.Next()
		if err == io.EOF {
			if rest := lines.Rest(); rest != nil {
				return 0, fn(rest)
			}
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		if err := fn(line); err != nil {
			return 0, err
		}
	}
}

// ReadLog calls fn with every line of the log at path, its rotated files
// first, oldest first (see OpenAll), until fn returns an error, and
// returns how many lines were too long to read. An error opening the
// files says "cannot open log".
func ReadLog(path string, fn func([]byte) error) (tooLong int, err error) {
	return readLog(path, false, fn)
}

// ReadRotated is ReadLog of the rotated files only: what came before the
// file a Follower reads from its start.
func ReadRotated(path string, fn func([]byte) error) (tooLong int, err error) {
	return readLog(path, true, fn)
}

func readLog(path string, rotatedOnly bool, fn func([]byte) error) (tooLong int, err error) {
	files, err := OpenAll(path)
	if err != nil {
		return 0, fmt.Errorf("cannot open log: %w", err)
	}
	defer closeAll(files)
	if rotatedOnly {
		files = files[:len(files)-1] // path, opened last
	}
	for _, f := range files {
		n, err := eachLine(f, fn)
		tooLong += n
		if err != nil {
			return tooLong, err
		}
	}
	return tooLong, nil
}

package eventlog

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"time"
)

// DefaultPoll is how often a Follower looks for new lines.
const DefaultPoll = 200 * time.Millisecond

// A Follower reads a log file as it grows, like `tail -F`: when the file is
// truncated (logrotate's copytruncate) it reads again from the start, and
// when the path names a new file (rotation by rename) it finishes the old
// file and goes on with the new one from its start. It polls, so it works
// on every file system.
//
// mcpguard's own rotation renames (see Rotation), and its writers re-open
// the path on their next line, so a line reaches the old file after the
// rename only in that instant; one written after the Follower finished
// the old file is not shown.
type Follower struct {
	Path     string
	Poll     time.Duration // DefaultPoll when zero
	FromEnd  bool          // start at the end of the file that exists at the start
	MaxLine  int           // MaxLineBytes when zero
	OnReopen func(reason string)

	lines *Lines
}

// Run calls fn with each complete line until ctx is done (it then returns
// ctx.Err()) or fn returns an error (which it returns). A file that does not
// exist yet is waited for.
func (f *Follower) Run(ctx context.Context, fn func(line []byte) error) error {
	poll := f.Poll
	if poll <= 0 {
		poll = DefaultPoll
	}
	f.lines = NewLines(nil, f.MaxLine)
	fromEnd := f.FromEnd
	var file *os.File
	defer func() {
		if file != nil {
			file.Close()
		}
	}()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		if file == nil {
			var err error
			if file, err = f.open(fromEnd); err != nil {
				return err
			}
			fromEnd = false // a file that appears later is read whole
		}
		if file != nil {
			if err := f.drain(file, fn); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if file == nil {
			continue
		}
		next, err := f.check(file, fn)
		if err != nil {
			return err
		}
		if next != file {
			file.Close()
			file = next
		}
	}
}

// open opens the file, or returns nil when it does not exist yet.
func (f *Follower) open(fromEnd bool) (*os.File, error) {
	file, err := os.Open(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	f.lines.Reset(file)
	if fromEnd {
		end, err := file.Seek(0, io.SeekEnd)
		if err != nil {
			file.Close()
			return nil, err
		}
		if end > 0 {
			// Start after the last newline, so a line being written
			// now is not read from its middle.
			last := make([]byte, 1)
			if _, err := file.ReadAt(last, end-1); err == nil && last[0] != '\n' {
				f.lines.skipping = true
			}
		}
	}
	return file, nil
}

// drain delivers the complete lines available now.
func (f *Follower) drain(file *os.File, fn func([]byte) error) error {
	for {
		line, err := f.lines.Next()
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		if err := fn(line); err != nil {
			return err
		}
	}
}

// check looks for truncation and rotation, and returns the file to read
// next.
func (f *Follower) check(file *os.File, fn func([]byte) error) (*os.File, error) {
	cur, err := file.Stat()
	if err != nil {
		return nil, err
	}
	pos, err := file.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, err
	}
	if cur.Size() < pos {
		if _, err := file.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		f.lines.Reset(file)
		f.reopened("truncated")
		return file, nil
	}
	now, err := os.Stat(f.Path)
	if err != nil || os.SameFile(cur, now) {
		// Removed and not yet recreated, or unchanged: keep reading
		// the file we have.
		return file, nil
	}
	// Rotated: finish the old file, whose writers may have added lines
	// since the last read, then start the new one.
	if err := f.drain(file, fn); err != nil {
		return nil, err
	}
	if rest := f.lines.Rest(); rest != nil {
		if err := fn(rest); err != nil {
			return nil, err
		}
	}
	next, err := f.open(false)
	if err != nil || next == nil {
		// It went away again between the two calls: read the old
		// file on; the next poll will look again.
		f.lines.Reset(file)
		return file, err
	}
	f.reopened("rotated")
	return next, nil
}

func (f *Follower) reopened(reason string) {
	if f.OnReopen != nil {
		f.OnReopen(reason)
	}
}

// TooLong is how many over-long lines were skipped.
func (f *Follower) TooLong() int {
	if f.lines == nil {
		return 0
	}
	return f.lines.TooLong()
}

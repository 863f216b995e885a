package eventlog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// following runs a Follower on path in the background and collects its
// lines. The tests run in a synctest bubble: the follower polls on the
// bubble's clock, so "a poll has seen this" and "no line came for ten
// polls" are facts, not hopes about the scheduler.
type following struct {
	t       *testing.T
	lines   chan string
	cancel  func()
	done    chan error
	mu      sync.Mutex
	reasons []string
}

func follow(t *testing.T, path string, fromEnd bool) *following {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := &following{t: t, lines: make(chan string, 100), cancel: cancel, done: make(chan error, 1)}
	fl := &Follower{Path: path, Poll: followPoll, FromEnd: fromEnd, OnReopen: func(r string) {
		f.mu.Lock()
		f.reasons = append(f.reasons, r)
		f.mu.Unlock()
	}}
	go func() {
		f.done <- fl.Run(ctx, func(line []byte) error {
			f.lines <- string(line)
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-f.done:
		case <-time.After(5 * time.Second):
			t.Error("follower did not stop")
		}
	})
	return f
}

// expect waits for the next lines, in order.
func (f *following) expect(want ...string) {
	f.t.Helper()
	for _, w := range want {
		select {
		case got := <-f.lines:
			if got != w {
				f.t.Fatalf("line %q, want %q", got, w)
			}
		case <-time.After(5 * time.Second):
			f.t.Fatalf("timed out waiting for %q", w)
		}
	}
}

// followPoll is how often the tests' followers poll, on the bubble's clock.
const followPoll = 5 * time.Millisecond

// polled returns once the follower has polled n more times and handled
// what it read.
func polled(n int) {
	time.Sleep(time.Duration(n) * followPoll)
	synctest.Wait()
}

// quiet checks that no line comes for ten polls.
func (f *following) quiet() {
	f.t.Helper()
	polled(10)
	select {
	case got := <-f.lines:
		f.t.Fatalf("unexpected line %q", got)
	default:
	}
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func TestFollowAcrossTruncation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "mcpguard.log")
		appendTo(t, path, "a\nb\n")
		f := follow(t, path, false)
		f.expect("a", "b")
		appendTo(t, path, "c\npart")
		f.expect("c")
		f.quiet() // "part" has no newline yet
		appendTo(t, path, "ial\n")
		f.expect("partial")

		// copytruncate: the file shrinks, then grows again from nothing.
		if err := os.Truncate(path, 0); err != nil {
			t.Fatal(err)
		}
		polled(1) // a poll sees the empty file
		appendTo(t, path, "d\n")
		f.expect("d")
		f.quiet()
	})
}

func TestFollowAcrossRotation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "mcpguard.log")
		appendTo(t, path, "a\n")
		f := follow(t, path, false)
		f.expect("a")

		// Rotation by rename: a writer that still has the old file open adds a
		// line after the rename; it must not be lost.
		old, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer old.Close()
		if err := os.Rename(path, path+".1"); err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(old, "b\n")
		appendTo(t, path, "c\n")
		f.expect("b", "c")
		appendTo(t, path, "d\n")
		f.expect("d")

		// Removed, then created again.
		os.Remove(path)
		polled(1) // a poll sees the file gone
		appendTo(t, path, "e\n")
		f.expect("e")
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.reasons) < 2 || f.reasons[0] != "rotated" {
			t.Errorf("reopen reasons %q", f.reasons)
		}
	})
}

func TestFollowFromEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "mcpguard.log")
		appendTo(t, path, "old\nhalf a li")
		f := follow(t, path, true)
		f.quiet()
		appendTo(t, path, "ne\nnew\n")
		f.expect("new") // not the old line, nor the end of the half one
	})
}

func TestFollowWaitsForTheFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "later", "mcpguard.log")
		f := follow(t, path, true)
		f.quiet()
		os.MkdirAll(filepath.Dir(path), 0o700)
		appendTo(t, path, "first\n")
		f.expect("first") // a file that appears later is read from its start
	})
}

func TestFollowStopsOnCallbackError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcpguard.log")
	appendTo(t, path, "a\nb\n")
	fl := &Follower{Path: path, Poll: time.Millisecond}
	n := 0
	err := fl.Run(context.Background(), func([]byte) error {
		n++
		return ErrSpike
	})
	if err != ErrSpike || n != 1 {
		t.Errorf("Run = %v after %d lines", err, n)
	}
}

package proxy

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/synctest"
)

func readAll(t *testing.T, in string, max int) (lines []string, tooLong int) {
	t.Helper()
	lr := newLineReader(strings.NewReader(in), max)
	for i := 0; i < 1000; i++ {
		line, err := lr.next()
		switch {
		case err == errTooLong:
			tooLong++
		case err == io.EOF:
			return lines, tooLong
		case err != nil:
			t.Fatal(err)
		default:
			lines = append(lines, string(line))
		}
	}
	t.Fatal("reader never reached EOF")
	return
}

func TestLineReaderSkipsOverLongLineAndGoesOn(t *testing.T) {
	huge := strings.Repeat("x", 20<<20) // 20 MiB: far past the 64 KiB buffer
	lines, tooLong := readAll(t, "a\n"+huge+"\nb\nlast-without-newline", 4<<20)
	if tooLong != 1 {
		t.Errorf("tooLong = %d, want 1", tooLong)
	}
	if want := []string{"a", "b", "last-without-newline"}; strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("lines = %q, want %q", lines, want)
	}
}

func TestLineReaderExactLimit(t *testing.T) {
	line := strings.Repeat("y", 100)
	lines, tooLong := readAll(t, line+"\n"+line+"z\n", 100)
	if len(lines) != 1 || lines[0] != line || tooLong != 1 {
		t.Errorf("lines %d tooLong %d", len(lines), tooLong)
	}
}

func TestLineReaderKeepsPrefixOfOverLongLine(t *testing.T) {
	lr := newLineReader(strings.NewReader(`{"jsonrpc":"2.0","id":42,"result":{"x":"`+strings.Repeat("z", 1<<20)+`"}}`+"\n"), 1000)
	if _, err := lr.next(); err != errTooLong {
		t.Fatalf("err = %v", err)
	}
	if !bytes.HasPrefix(lr.prefix, []byte(`{"jsonrpc":"2.0","id":42,`)) || len(lr.prefix) != prefixLen {
		t.Errorf("prefix %q... (%d bytes)", lr.prefix[:30], len(lr.prefix))
	}
}

func TestLineReaderHasLine(t *testing.T) {
	lr := newLineReader(strings.NewReader("a\nb\npartial"), 100)
	if lr.hasLine() {
		t.Error("nothing read yet, but hasLine")
	}
	lr.next() // fills the buffer with everything
	if !lr.hasLine() {
		t.Error(`"b\n" is buffered, but not hasLine`)
	}
	lr.next()
	if lr.hasLine() {
		t.Error(`only "partial" is buffered, but hasLine`)
	}
}

// FuzzLineReader: the reader never returns a line longer than the limit or
// containing a newline, and every byte of the input is either in a returned
// line, a newline, or in a line reported too long.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc"), 2)
	f.Add([]byte(strings.Repeat("x", 70000)+"\nok\n"), 65536)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		if max <= 0 || max > 1<<20 {
			return
		}
		lr := newLineReader(bytes.NewReader(in), max)
		var got [][]byte
		for i := 0; i <= len(in)+1; i++ {
			line, err := lr.next()
			if err == io.EOF {
				break
			}
			if err == errTooLong {
				got = append(got, nil)
				continue
			}
			if len(line) > max || bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("bad line of %d bytes", len(line))
			}
			got = append(got, bytes.Clone(line))
		}
		want := bytes.Split(in, []byte("\n"))
		if len(want) > 0 && len(want[len(want)-1]) == 0 {
			want = want[:len(want)-1]
		}
		if len(got) != len(want) {
			t.Fatalf("%d lines, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i] == nil {
				if len(want[i]) <= max {
					t.Fatalf("line %d of %d bytes reported too long", i, len(want[i]))
				}
			} else if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("line %d differs", i)
			}
		}
	})
}

// TestDrainedReportsBatches: the relay flushes when drained says so, and
// yields the CPU only after a batch of more than one line.
func TestDrainedReportsBatches(t *testing.T) {
	pr, pw := io.Pipe()
	l := newLineReader(pr, 1024)
	go pw.Write([]byte("a\nb\n"))
	if drained, _ := l.drained(); !drained {
		t.Fatal("nothing buffered yet, but not drained")
	}
	for _, want := range []string{"a", "b"} {
		line, err := l.next()
		if err != nil || string(line) != want {
			t.Fatalf("next = %q, %v; want %q", line, err, want)
		}
		if want == "a" {
			if drained, _ := l.drained(); drained {
				t.Fatal(`drained with "b" still buffered`)
			}
		}
	}
	if drained, batch := l.drained(); !drained || !batch {
		t.Fatalf("after two lines: drained %v, batch %v", drained, batch)
	}
	go pw.Write([]byte("c\n"))
	if _, err := l.next(); err != nil {
		t.Fatal(err)
	}
	if drained, batch := l.drained(); !drained || batch {
		t.Fatalf("after one line: drained %v, batch %v", drained, batch)
	}
}

// TestLineWriterQueueKeepsOrder: a queued line goes out before every line
// written after it was queued, and close writes out what is queued before
// it closes the stream, so the reader's EOF comes after every line.
func TestLineWriterQueueKeepsOrder(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		pr, pw := io.Pipe()
		w := newLineWriter(pw)
		got := make(chan string)
		go func() {
			b, _ := io.ReadAll(pr)
			got <- string(b)
		}()
		for _, l := range []string{"q1", "q2"} {
			if room, err := w.enqueue([]byte(l)); room != nil || err != nil {
				t.Fatalf("enqueue %s: room %v, err %v", l, room, err)
			}
		}
		if err := w.writeLine([]byte("w3")); err != nil {
			t.Fatal(err)
		}
		w.enqueue([]byte("q4"))
		if err := w.close(); err != nil {
			t.Fatal(err)
		}
		if s := <-got; s != "q1\nq2\nw3\nq4\n" {
			t.Errorf("the reader got %q", s)
		}
		if _, err := w.enqueue([]byte("late")); err != errClosed {
			t.Errorf("enqueue after close: %v, want errClosed", err)
		}
		if err := w.writeLine([]byte("late")); err == nil {
			t.Error("writeLine after close succeeded")
		}
	})
}

// TestLineWriterEnqueueDoesNotBlock: a reader that does not read never
// blocks enqueue; the queue is bounded (what it holds, and the batch the
// writer has taken from it and is writing out); a full queue's room
// channel is closed once the reader reads again, and nothing is lost.
func TestLineWriterEnqueueDoesNotBlock(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		pr, pw := io.Pipe()
		w := newLineWriter(pw)
		line := bytes.Repeat([]byte("x"), 1000)
		sent := 0
		var room <-chan struct{}
		for stuck := false; !stuck; {
			var err error
			if room, err = w.enqueue(line); err != nil {
				t.Fatal(err)
			}
			if room == nil {
				sent++
				continue
			}
			synctest.Wait() // the writer takes what it can
			select {
			case <-room:
			default:
				stuck = true
			}
		}
		if limit := (2*maxQueuedBytes + readBufferSize) / len(line); sent > limit || sent < maxQueuedBytes/len(line) {
			t.Errorf("%d lines taken before the queue was full, want %d to %d", sent, maxQueuedBytes/len(line), limit)
		}
		got := make(chan int)
		go func() {
			n := 0
			lr := newLineReader(pr, 2000)
			for {
				if _, err := lr.next(); err != nil {
					got <- n
					return
				}
				n++
			}
		}()
		<-room
		if room, err := w.enqueue(line); room != nil || err != nil {
			t.Fatalf("enqueue after room: %v, %v", room, err)
		}
		w.close()
		if n := <-got; n != sent+1 {
			t.Errorf("the reader got %d lines, want %d", n, sent+1)
		}
	})
}

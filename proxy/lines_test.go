package proxy

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"
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

// FuzzLineReader: whatever pieces the input arrives in and whatever the
// buffer sizes, the reader returns the lines bytes.Split finds, each over
// the limit reported as too long with its head kept, none with a newline;
// and when hasLine reports a whole line buffered, reading it reads
// nothing more. small makes the buffers tiny (16 bytes for short lines,
// reads of 1-32 bytes of a long one), so short inputs take the path of
// long lines; pieces are the sizes of the reads the input arrives in
// (each byte b a read of at most b+1 bytes, in turn; none: as asked).
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc"), 2, false, []byte{})
	f.Add([]byte(strings.Repeat("x", 70000)+"\nok\n"), 65536, false, []byte{})
	f.Add([]byte("a\n"+strings.Repeat("long", 20)+"\nb\nc\n"+strings.Repeat("y", 50)+"\nlast"), 60, true, []byte{3, 0, 40, 7})
	f.Add([]byte(strings.Repeat("z", 40)+"\n\n"+strings.Repeat("w", 39)+"\n"), 40, true, []byte{255})
	f.Fuzz(func(t *testing.T, in []byte, max int, small bool, pieces []byte) {
		if max <= 0 || max > 1<<20 {
			return
		}
		src := &piecewise{in: in, sizes: pieces}
		lr := newLineReader(src, max)
		if small {
			lr = newLineReaderSize(src, max, 16, 1+len(pieces)%32)
		}
		checkLines(t, lr, src, in, max)
	})
}

// TestLineReaderEverySplit: a long line and the lines around it read the
// same whichever byte the arrival breaks at, through small buffers and
// the real ones.
func TestLineReaderEverySplit(t *testing.T) {
	t.Parallel()
	in := []byte("short\n" + strings.Repeat("0123456789", 4) + "\nmid\n" + strings.Repeat("abcdefghij", 10) + "\n\nend")
	for _, max := range []int{50, 200} {
		for at := range len(in) + 1 {
			for _, sizes := range [][2]int{{16, 7}, {16, 1}, {readBufferSize, directRead}} {
				src := &piecewise{in: in, breaks: []int{at}}
				checkLines(t, newLineReaderSize(src, max, sizes[0], sizes[1]), src, in, max)
			}
		}
	}
	big := bytes.Repeat([]byte("x"), 3<<20+5)
	in = slices.Concat([]byte("a\n"), big, []byte("\nb\n"), big[:70000], []byte("\nc"))
	for _, at := range []int{1, 2, 3, readBufferSize, readBufferSize + 2, 1 << 20, 3<<20 + 7, 3<<20 + 8, 3<<20 + 9, len(in) - 1} {
		for _, max := range []int{4 << 20, 3<<20 + 5, 3<<20 + 4, 1 << 20} {
			src := &piecewise{in: in, breaks: []int{at}}
			checkLines(t, newLineReader(src, max), src, in, max)
		}
	}
}

// TestStreamPutBack: bytes put back after a read that took them from
// rest come again, before the rest of rest and of the input.
func TestStreamPutBack(t *testing.T) {
	s := &stream{r: strings.NewReader("ab\ncdefGH")}
	b := make([]byte, 6)
	s.Read(b)         // "ab\ncde", from r
	s.putBack(b[3:6]) // "cde"
	s.Read(b[:2])     // "cd", from rest
	s.putBack(b[1:2]) // "d"
	got, _ := io.ReadAll(s)
	if string(got) != "defGH" {
		t.Errorf("read %q, want %q", got, "defGH")
	}
}

// piecewise gives in as it would arrive on a pipe: in reads broken at
// breaks (offsets), and of at most sizes[i]+1 bytes in turn when sizes is
// set. reads counts the reads.
type piecewise struct {
	in     []byte
	off    int
	sizes  []byte
	breaks []int
	reads  int
}

func (p *piecewise) Read(b []byte) (int, error) {
	p.reads++
	if p.off == len(p.in) {
		return 0, io.EOF
	}
	n := min(len(b), len(p.in)-p.off)
	if len(p.sizes) > 0 {
		n = min(n, int(p.sizes[p.reads%len(p.sizes)])+1)
	}
	for _, at := range p.breaks {
		if at > p.off && at < p.off+n {
			n = at - p.off
		}
	}
	copy(b, p.in[p.off:p.off+n])
	p.off += n
	return n, nil
}

// checkLines reads every line of in from lr (which reads src) and holds
// them to bytes.Split's, as FuzzLineReader says; the heads of a long
// line it hands on as it reads are starts of that line, each longer than
// the one before (as long again only when the line moved to a larger
// buffer).
func checkLines(t *testing.T, lr *lineReader, src *piecewise, in []byte, max int) {
	t.Helper()
	want := bytes.Split(in, []byte("\n"))
	if len(want) > 0 && len(want[len(want)-1]) == 0 {
		want = want[:len(want)-1]
	}
	i, heads := 0, 0
	var array *byte                  // the last head's
	lr.arrived = func(head []byte) { // each a start of the line being read, longer or moved
		moved := unsafe.SliceData(head) != array
		if i >= len(want) || len(head) < heads || len(head) == heads && !moved || len(head) > max || !bytes.HasPrefix(want[i], head) {
			t.Fatalf("line %d: a head of %d bytes (moved %v) that is not its start, after one of %d", i, len(head), moved, heads)
		}
		heads, array = len(head), unsafe.SliceData(head)
	}
	for ; ; i++ {
		heads, array = 0, nil
		has, reads := lr.hasLine(), src.reads
		line, err := lr.next()
		if has && src.reads != reads {
			t.Fatalf("line %d: hasLine, but next read the input", i)
		}
		if err == io.EOF {
			if i != len(want) {
				t.Fatalf("%d lines, want %d", i, len(want))
			}
			return
		}
		if i == len(want) {
			t.Fatalf("more than the %d lines (%v)", len(want), err)
		}
		switch {
		case err == errTooLong:
			if len(want[i]) <= max {
				t.Fatalf("line %d of %d bytes reported too long (limit %d)", i, len(want[i]), max)
			}
			// Its head to find its id: all of prefixLen, or past the limit.
			if n := len(lr.prefix); n < min(prefixLen, max+1) || n > prefixLen || !bytes.HasPrefix(want[i], lr.prefix) {
				t.Fatalf("line %d: a prefix of %d bytes that is not its head", i, n)
			}
		case err != nil:
			t.Fatalf("line %d: %v", i, err)
		case len(line) > max || !bytes.Equal(line, want[i]):
			t.Fatalf("line %d differs: %d bytes, want %d", i, len(line), len(want[i]))
		}
	}
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

// TestDueEveryPassOnLines: with a long batch buffered, due says to flush
// after every passOn lines; drained starts the count again.
func TestDueEveryPassOnLines(t *testing.T) {
	const n = 2*passOn + 3
	l := newLineReader(strings.NewReader(strings.Repeat("x\n", n)+"partial"), 1024)
	var flushedAt []int
	for i := 0; i < n; i++ {
		if drained, _ := l.drained(); drained {
			if i != 0 {
				t.Fatalf("drained after %d lines with %d more buffered", i, n-i)
			}
		} else if l.due() {
			flushedAt = append(flushedAt, i)
		}
		if _, err := l.next(); err != nil {
			t.Fatal(err)
		}
	}
	if want := []int{passOn, 2 * passOn}; !slices.Equal(flushedAt, want) {
		t.Errorf("due after %v lines, want %v", flushedAt, want)
	}
	if drained, _ := l.drained(); !drained {
		t.Fatal("only a partial line is left, but not drained")
	}
	if l.due() {
		t.Error("due right after drained")
	}
}

// TestPiecesPauseAfterASlowFlush: a piece whose flush took over lostCore
// turns the pieces off until pauseBatches batches, its own included, have
// ended; then due asks for them again.
func TestPiecesPauseAfterASlowFlush(t *testing.T) {
	pr, pw := io.Pipe()
	l := newLineReader(pr, 1024)
	batch := strings.Repeat("x\n", passOn+1)
	// pieces reads one batch as a relay loop does and reports how many
	// times due asked for a flush, each flush taking took.
	pieces := func(took time.Duration) int {
		go pw.Write([]byte(batch))
		n := 0
		for i := 0; i <= passOn; i++ {
			if drained, _ := l.drained(); !drained && l.due() {
				n++
				l.pieceTook(took)
			}
			if _, err := l.next(); err != nil {
				t.Fatal(err)
			}
		}
		return n // the next call's first drained ends this batch
	}
	if n := pieces(lostCore); n != 1 {
		t.Fatalf("%d pieces in a batch of %d lines, want 1", n, passOn+1)
	}
	if n := pieces(lostCore + time.Microsecond); n != 1 {
		t.Fatalf("%d pieces after fast flushes, want 1", n)
	}
	for i := range pauseBatches - 1 { // the slow flush's batch was the first
		if n := pieces(0); n != 0 {
			t.Fatalf("a piece in batch %d after a slow flush", i+1)
		}
	}
	if n := pieces(0); n != 1 {
		t.Fatalf("%d pieces after the pause, want 1", n)
	}
}

// TestRelayPassesLongBatchesOnInPieces: a batch of requests the agent
// writes at once reaches the server in pieces of at most passOn lines, and
// a batch of replies reaches the agent so, all in order: the server can
// answer, and the egress loop check, the first lines of a batch while the
// ingress loop checks the rest.
func TestRelayPassesLongBatchesOnInPieces(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		toServer, toAgent := relayBatch(t, 0)
		for side, sizes := range map[string][]int{"server": toServer, "agent": toAgent} {
			if len(sizes) < 2 || slices.Max(sizes) > passOn {
				t.Errorf("the %s got the batch in pieces of %v, want pieces of at most %d", side, sizes, passOn)
			}
		}
	})
}

// TestRelayPiecesPauseForASlowPeer: when flushing the first piece takes
// over lostCore (here the server is slow to read it, as when it ran on
// the relay loop's own core), the rest of the batch goes out whole.
func TestRelayPiecesPauseForASlowPeer(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		toServer, _ := relayBatch(t, 2*lostCore)
		if want := []int{passOn, batchLines - passOn}; !slices.Equal(toServer, want) {
			t.Errorf("the server got the batch in pieces of %v, want %v", toServer, want)
		}
	})
}

const batchLines = 3*passOn + 5

// relayBatch runs the relay in a synctest bubble between an agent that
// writes batchLines pings at once and a server that answers them all at
// once, the server waiting readDelay before each read; it returns how many
// lines each read of the server and of the agent returned, each reading
// with a buffer larger than the batch (so a read returns one write of the
// relay's, or less). Both sides must get every line, in order.
func relayBatch(t *testing.T, readDelay time.Duration) (toServer, toAgent []int) {
	var requests, replies bytes.Buffer
	for id := 1; id <= batchLines; id++ {
		fmt.Fprintf(&requests, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", id)
		fmt.Fprintf(&replies, `{"jsonrpc":"2.0","id":%d,"result":{}}`+"\n", id)
	}
	agentInR, agentInW := io.Pipe()
	agentOutR, agentOutW := io.Pipe()
	serverInR, serverInW := io.Pipe()
	serverOutR, serverOutW := io.Pipe()
	exited := make(chan struct{})
	d := &downstream{stdin: newLineWriter(serverInW), stdout: serverOutR, exited: exited,
		stderrDone: make(chan struct{}), kill: func(syscall.Signal) {}}
	close(d.stderrDone)

	read := func(side string, r io.Reader, want []byte, delay time.Duration) (sizes []int) {
		buf := make([]byte, 1<<20)
		var got []byte
		for bytes.Count(got, []byte("\n")) < batchLines {
			time.Sleep(delay)
			k, err := r.Read(buf)
			if err != nil {
				t.Errorf("the %s: after %d bytes: %v", side, len(got), err)
				return sizes
			}
			got = append(got, buf[:k]...)
			sizes = append(sizes, bytes.Count(buf[:k], []byte("\n")))
		}
		if !bytes.Equal(got, want) {
			t.Errorf("the %s got other lines than the batch:\n%s", side, got)
		}
		return sizes
	}
	go func() {
		toServer = read("server", serverInR, requests.Bytes(), readDelay)
		serverOutW.Write(replies.Bytes())
		io.Copy(io.Discard, serverInR) // until the relay closes it
		close(exited)
		serverOutW.Close()
	}()
	go func() {
		agentInW.Write(requests.Bytes())
		toAgent = read("agent", agentOutR, replies.Bytes(), 0)
		agentInW.Close()
		io.Copy(io.Discard, agentOutR)
	}()
	cfg := Config{Argv: []string{"pieces"}, Stdin: agentInR, Stdout: agentOutW, Stderr: io.Discard}.withDefaults()
	serve(cfg, d, nil, nil)
	agentOutW.Close()
	synctest.Wait()
	return toServer, toAgent
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

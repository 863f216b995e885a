package proxy

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/proxy/eventlog"
	"github.com/mcpguard/mcpguard/rules/cputime"
)

// BenchmarkRelayCall is the user-space work of one relayed tools/call
// under the baseline policy, without the pipes: the ingress loop's parse,
// judgement, bookkeeping and buffered write of the request, and the egress
// loop's of the reply. The messages are integration/bench's echo call
// (256 bytes of arguments: the id in ten digits and a filler of flags,
// paths, prose and every ASCII letter, digit and punctuation mark) and
// its reply, with a new id each call, after the bench's tools/list.
// "secrets-off" is the baseline without the secrets check (which has
// benchmarks of its own): the relay's glue, the strict parse and the
// judge.
func BenchmarkRelayCall(b *testing.B) { benchRelayCalls(b, nil) }

// BenchmarkColdRelayCall is BenchmarkRelayCall with the caches emptied
// before each call (evictCaches, not timed), as when a relay loop wakes
// up on a core that idled: with one call in flight, what a call costs is
// set more by the code and data lines it touches than by its
// instructions. It reports the call's thread CPU time (cpu-ns/op: its
// cache misses stall the thread, which waiting for a core does not) as
// well as wall-clock time.
func BenchmarkColdRelayCall(b *testing.B) { benchRelayCalls(b, evictCaches) }

// benchRelayCalls runs benchRelayCall under the baseline and under the
// baseline with the secrets check off.
func benchRelayCalls(b *testing.B, before func()) {
	off, err := policy.Load("secrets-off.yaml", []byte("version: 1\nsecrets: {ingress: off, egress: off}\n"), func(string) (string, bool) { return "", false })
	if err != nil {
		b.Fatal(err)
	}
	b.Run("baseline", func(b *testing.B) { benchRelayCall(b, policy.Baseline(), before) })
	b.Run("secrets-off", func(b *testing.B) { benchRelayCall(b, off, before) })
}

// coldSweep is the buffer evictCaches writes.
var coldSweep []byte

// evictCaches pushes the relay's code and data out of the caches: it
// writes a byte in every 64 of 64 MiB (the data and unified caches) and
// runs unrelated code (compiling and matching a regular expression,
// formatting), which takes the instruction cache.
func evictCaches() {
	if coldSweep == nil {
		coldSweep = make([]byte, 64<<20)
	}
	for i := 0; i < len(coldSweep); i += 64 {
		coldSweep[i]++
	}
	re := regexp.MustCompile(`^(?i)(ab|cd)*[0-9]{2,4}\s+\w+@[a-z]+\.(com|org)$`)
	_ = fmt.Sprint(re.MatchString("abCD123 x@y.org"), re.String(), []float64{1.5, 2e9})
}

func benchRelayCall(b *testing.B, p *policy.Policy, before func()) {
	r := &relay{
		cfg:      Config{Policy: p},
		log:      eventlog.Nop(),
		session:  p.NewSession(),
		pending:  newPendingTable(),
		toAgent:  newLineWriter(io.Discard),
		toServer: newLineWriter(io.Discard),
	}
	var in, out message.Message
	for _, step := range []struct {
		line     string
		toServer bool
	}{
		{`{"jsonrpc":"2.0","id":0,"method":"tools/list"}`, true},
		{`{"jsonrpc":"2.0","id":0,"result":{"tools":[` +
			`{"name":"echo","description":"Returns its text argument.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}},` +
			`{"name":"blob","description":"Returns N bytes of multi-line text.","inputSchema":{"type":"object","properties":{"bytes":{"type":"integer"}},"required":["bytes"]}}]}}`, false},
	} {
		if err := message.ParseInto(&in, []byte(step.line)); err != nil {
			b.Fatal(err)
		}
		if step.toServer {
			r.fromAgent(&in)
		} else {
			r.fromServer(&in)
		}
	}
	const filler = " --format=json --run=TestRelay/pipelined ./proxy/... ./message/... " +
		"path/to/some/file.go:123:45 (the quick brown fox jumps over the lazy dog) " +
		"0123456789abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ !#$%&'()*+,-./:;<=>?@[]^_{|}~ ok"
	var text, req, resp []byte
	b.ReportAllocs()
	id := 0
	var cpu time.Duration
	if before != nil {
		runtime.LockOSThread() // the thread whose time cputime reads
		defer runtime.UnlockOSThread()
		defer func() { b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op") }()
	}
	for b.Loop() {
		if before != nil {
			b.StopTimer()
			before()
			b.StartTimer()
		}
		id++
		text = append(fmt.Appendf(text[:0], "%010d", id), filler[:235]...)
		req = strconv.AppendInt(append(req[:0], `{"jsonrpc":"2.0","id":`...), int64(id), 10)
		req = append(append(append(req, `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`...), text...), `"}}}`...)
		resp = strconv.AppendInt(append(resp[:0], `{"jsonrpc":"2.0","id":`...), int64(id), 10)
		resp = append(append(append(resp, `,"result":{"content":[{"type":"text","text":"`...), text...), `"}]}}`...)
		call := func() {
			if err := message.ParseInto(&in, req); err != nil {
				b.Fatal(err)
			}
			r.fromAgent(&in)
			if err := message.ParseInto(&out, resp); err != nil {
				b.Fatal(err)
			}
			r.fromServer(&out)
		}
		if before == nil {
			call()
		} else {
			cpu += cputime.Of(call)
		}
	}
	if r.pending.n != 0 {
		b.Fatalf("%d requests left in flight", r.pending.n)
	}
}

// BenchmarkReadLongLine is the egress loop's read of a 16 MiB line from a
// 1 MiB pipe, as the relay's pipes are, written by another goroutine in
// one write: wall time per line, and the reading thread's CPU time
// (reader-ms/op).
func BenchmarkReadLongLine(b *testing.B) {
	r, w, err := blockingPipe()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	growPipe(r)
	line := bytes.Repeat([]byte("0123456789abcdef "), 16<<20/17)
	line = append(line, '\n')
	go func() {
		for {
			if _, err := w.Write(line); err != nil {
				return
			}
		}
	}()
	defer w.Close()
	lines := newLineReader(r, DefaultMaxResponseBytes)
	var cpu time.Duration
	for b.Loop() {
		cpu += cputime.Of(func() {
			if got, err := lines.next(); err != nil || len(got) != len(line)-1 {
				b.Fatalf("%d bytes, %v", len(got), err)
			}
		})
	}
	b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "reader-ms/op")
}

// BenchmarkLongResult is the egress loop's work on a 16 MiB tools/call
// result, from the server's write to the verdict: the read from a 1 MiB
// pipe written by another goroutine, the parse and egress under the
// baseline policy. The text is the bench's (lines of the printable ASCII
// characters shifting from line to line), or Russian prose. "whole"
// judges the line once it has arrived; "head" judges its head as it
// arrives (policy.HeadCheck), as the relay does.
func BenchmarkLongResult(b *testing.B) {
	const printable = ` !#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_abcdefghijklmnopqrstuvwxyz{|}~`
	texts := map[string][]byte{}
	for _, kind := range []string{"printable", "russian"} {
		var text []byte
		for n := 0; len(text) < 16<<20; n++ {
			if kind == "russian" {
				text = append(text, "Съешь же ещё этих мягких французских булок, да выпей чаю"...)
			} else {
				for col := range 79 {
					text = append(text, printable[(n*7+col)%len(printable)])
				}
			}
			text = append(text, '\\', 'n')
		}
		texts[kind] = text
	}
	for _, kind := range []string{"printable", "russian"} {
		line := slices.Concat([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`), texts[kind], []byte("\"}]}}\n"))
		for _, mode := range []string{"whole", "head"} {
			b.Run(kind+"/"+mode, func(b *testing.B) { longResult(b, line, mode == "head") })
		}
	}
}

// longResult is BenchmarkLongResult for one line, judged with its head
// checked as it arrives or not.
func longResult(b *testing.B, line []byte, head bool) {
	r, w, err := blockingPipe()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	growPipe(r)
	write := make(chan bool)
	go func() {
		for range write {
			w.Write(line)
		}
		w.Close()
	}()
	defer close(write)
	lines := newLineReader(r, DefaultMaxResponseBytes)
	var check policy.HeadCheck
	if head {
		lines.arrived = check.Arrived
	}
	s := policy.Baseline().NewSession()
	var m message.Message
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		write <- true
		got, err := lines.next()
		found := check.Done()
		if err != nil || len(got) != len(line)-1 {
			b.Fatalf("%d bytes, %v", len(got), err)
		}
		if err := message.ParseInto(&m, got); err != nil {
			b.Fatal(err)
		}
		if out, rw, err := s.EgressAfter(&m, &policy.Call{Method: "tools/call", Tool: "t"}, found); err != nil || len(rw) > 0 || len(out) != len(got) {
			b.Fatal("changed", err, rw)
		}
	}
}

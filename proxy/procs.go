package proxy

import (
	"os"
	"runtime"
)

// relayProcs is the fewest Ps (GOMAXPROCS) the relay runs with: one more
// than its two loops, which spend most of their time blocked in read(2)
// on blocking pipes.
//
// Why: while a goroutine is in a syscall its P stays attached to it, and
// the runtime's sysmon thread takes such a P back after 20 µs whenever no
// other P is idle. With GOMAXPROCS=2 (a 2-core machine) both Ps sit in the
// two loops' reads, none is idle, so sysmon retakes them on every tick,
// never backs off from its 20 µs cadence, and every read that returns must
// find a P again, which costs CPU on every relayed call. A spare P keeps
// sysmon asleep and each loop on its P (integration/bench/BENCH.md has
// the figures).
const relayProcs = 3

// reserveProcs raises GOMAXPROCS to relayProcs unless the user set
// GOMAXPROCS, which is respected as given.
func reserveProcs() {
	if os.Getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) < relayProcs {
		runtime.GOMAXPROCS(relayProcs)
	}
}

// passScheduler is how many batches a relay loop handles between trips
// through the Go scheduler.
//
// Why: a relay loop never blocks in Go, only in read(2), so its goroutine
// never passes through the scheduler and its P's schedtick stands still.
// The runtime's sysmon reads that as a goroutine running for over 10 ms
// (forcePreemptNS): every 10 ms it preempts each loop and takes its P from
// the read it is blocked in, and each such take resets sysmon from its
// 10 ms naps to 20 µs ticks. A runtime.Gosched every 16 batches (every few
// milliseconds under load, never more than one per batch) keeps sysmon
// napping and the Ps in place. Light traffic rarely reaches 16 batches in
// 10 ms, but then sysmon has little to interrupt.
const passScheduler = 16

// batchCounter counts a loop's batches and lets the scheduler run every
// passScheduler of them.
type batchCounter int

func (c *batchCounter) done() {
	if *c++; *c%passScheduler == 0 {
		runtime.Gosched()
	}
}

package proxy

import (
	"os"
	"runtime/debug"
	"sync/atomic"
)

// memoryFloor is the part of the memory budget (3x the largest message +
// 64 MiB) that is not left to the Go heap: the binary's pages, thread
// stacks and buffers outside the runtime's count.
const memoryFloor = 32 << 20

// memoryFrom is the message size from which the budget is set: under it
// the budget is far above what mcpguard uses.
const memoryFrom = 4 << 20

// memoryBudget holds the Go runtime to 3x the largest message read so far
// + memoryFloor with a soft memory limit (debug.SetMemoryLimit). Reading a
// message, judging it and writing it out needs about twice its size live;
// the garbage collector's default pacing lets the heap grow to twice its
// live size before it collects, so a hostile server's large results would
// otherwise take mcpguard past the budget. Under the limit the collector
// runs earlier (its CPU is capped by the runtime). A GOMEMLIMIT the user
// set is left alone.
type memoryBudget struct {
	off     bool
	largest atomic.Int64
}

func newMemoryBudget(on bool) *memoryBudget {
	return &memoryBudget{off: !on || os.Getenv("GOMEMLIMIT") != ""}
}

// read notes a message of n bytes, before it is judged.
func (b *memoryBudget) read(n int) {
	if b == nil || b.off || n < memoryFrom {
		return
	}
	for {
		cur := b.largest.Load()
		if int64(n) <= cur {
			return
		}
		if b.largest.CompareAndSwap(cur, int64(n)) {
			debug.SetMemoryLimit(3*int64(n) + memoryFloor)
			return
		}
	}
}

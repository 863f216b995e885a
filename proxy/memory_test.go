package proxy

import (
	"runtime/debug"
	"testing"
)

// TestMemoryBudget: the soft limit follows the largest message read, 3x
// it + memoryFloor, only ever rising, and only from memoryFrom; a relay
// that does not bound memory leaves it alone.
func TestMemoryBudget(t *testing.T) {
	if newMemoryBudget(true).off {
		t.Skip("GOMEMLIMIT is set")
	}
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	b := newMemoryBudget(true)
	b.read(memoryFrom - 1)
	if got := debug.SetMemoryLimit(-1); got != old {
		t.Errorf("a small message set the limit to %d", got)
	}
	for _, n := range []int{8 << 20, 32 << 20, 16 << 20} {
		b.read(n)
	}
	if got, want := debug.SetMemoryLimit(-1), int64(3*(32<<20)+memoryFloor); got != want {
		t.Errorf("limit %d, want %d", got, want)
	}
	debug.SetMemoryLimit(old)
	newMemoryBudget(false).read(64 << 20)
	if got := debug.SetMemoryLimit(-1); got != old {
		t.Errorf("an unbounded relay set the limit to %d", got)
	}
}

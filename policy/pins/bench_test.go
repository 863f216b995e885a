package pins

import (
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkCheck is what a tools/call pays for pins: a tool listed and
// pinned (a hit), one never listed without a lock (a miss), and one the
// lock does not pin.
func BenchmarkCheck(b *testing.B) {
	s := NewSession(Options{})
	judge(s, Tool, echoV1, sumV1)
	l := NewLock()
	l.Items[Tool]["echo"] = Definition{Fields: map[string]string{"name": `"echo"`}}
	locked := NewSession(Options{Lock: l})
	for _, c := range []struct {
		name string
		s    *Session
		tool string
		want bool
	}{{"listed", s, "echo", false}, {"unlisted", s, "run_tests", false}, {"unpinned", locked, "run_tests", true}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if (c.s.Check(Tool, c.tool) != nil) != c.want {
					b.Fatal("wrong verdict")
				}
			}
		})
	}
}

// TestChangedListCostsLinear: a second list in which every item changed
// costs memory in proportion to the list, not to its square (each
// withheld item used to copy the status map of every item).
func TestChangedListCostsLinear(t *testing.T) {
	alloc := func(n int) uint64 {
		v1, v2 := make([]string, n), make([]string, n)
		for i := range n {
			v1[i] = fmt.Sprintf(`{"name":"tool_%d","description":"Does %d things"}`, i, i)
			v2[i] = fmt.Sprintf(`{"name":"tool_%d","description":"Does %d things, and more"}`, i, i)
		}
		s := NewSession(Options{})
		judge(s, Tool, v1...)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if kept, _ := judge(s, Tool, v2...); len(kept) != 0 {
			t.Fatalf("%d changed tools kept", len(kept))
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := alloc(512), alloc(4096)
	t.Logf("512 changed tools: %d KiB; 4096: %d KiB", small>>10, large>>10)
	if large > 12*small {
		t.Errorf("8x the tools cost %.1fx the memory, want about 8x", float64(large)/float64(small))
	}
}

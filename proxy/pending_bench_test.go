package proxy

import (
	"testing"

	"github.com/mcpguard/mcpguard/message"
)

// BenchmarkPending is the pipelined pattern: ids rising, 64 in flight,
// answered in order.
func BenchmarkPending(b *testing.B) {
	p := newPendingTable()
	var next, oldest int64
	for ; next < 64; next++ {
		p.add(message.Key{Num: next}, inFlight{})
	}
	for b.Loop() {
		if _, ok := p.take(message.Key{Num: oldest}); !ok {
			b.Fatal("lost", oldest)
		}
		oldest++
		p.add(message.Key{Num: next}, inFlight{})
		next++
	}
}

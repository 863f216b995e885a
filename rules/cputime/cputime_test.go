//go:build linux || darwin

package cputime

import (
	"testing"
	"time"
)

// TestCountsWorkNotWaiting: a thread that sleeps spends no CPU time,
// one that spins does.
func TestCountsWorkNotWaiting(t *testing.T) {
	t.Parallel()
	if d := Of(func() { time.Sleep(200 * time.Millisecond) }); d > 50*time.Millisecond {
		t.Errorf("sleeping 200ms cost %v of CPU", d)
	}
	x := 0
	d := Of(func() {
		for i := range 50_000_000 {
			x += i & 3
		}
	})
	if d <= 0 {
		t.Errorf("50M additions cost %v of CPU (x=%d)", d, x)
	}
}

// TestOfProcessCountsOtherGoroutines: work handed to another goroutine
// is in OfProcess's figure and not in Of's.
func TestOfProcessCountsOtherGoroutines(t *testing.T) {
	x := 0
	handOff := func() {
		done := make(chan struct{})
		go func() {
			for i := range 50_000_000 {
				x += i & 3
			}
			close(done)
		}()
		<-done
	}
	own, all := Of(handOff), OfProcess(handOff)
	if all < 10*time.Millisecond || own > all/4 {
		t.Errorf("50M additions on another goroutine: Of %v, OfProcess %v (x=%d)", own, all, x)
	}
}

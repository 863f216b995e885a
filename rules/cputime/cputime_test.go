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

//go:build linux || darwin

// Package cputime measures the CPU time a piece of code spends on its
// own thread, for the tests that hold a check to linear time.
//
// Contract: Of(f) runs f on the calling goroutine, locked to its OS
// thread, and returns the CPU time that thread spent in f (user and
// system, from CLOCK_THREAD_CPUTIME_ID). Time the thread waits for a
// core on a loaded machine is not counted, so a ratio of two costs
// measures the code, not the machine's other work; a quadratic scan
// costs quadratic CPU time under any load. Work f hands to other
// goroutines (and the garbage collector's background workers) is not
// counted: f must do its work itself.
package cputime

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// Of returns the CPU time the calling thread spends running f.
func Of(f func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := now()
	f()
	return now() - start
}

// Best returns the least of runs costs of f (at least one): a thread's
// CPU time still varies a little with what shares its core's caches.
func Best(runs int, f func()) time.Duration {
	best := Of(f)
	for range runs - 1 {
		best = min(best, Of(f))
	}
	return best
}

func now() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic("cputime: CLOCK_THREAD_CPUTIME_ID: " + err.Error())
	}
	return time.Duration(ts.Nano())
}

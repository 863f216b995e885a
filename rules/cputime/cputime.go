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
//
// OfProcess(f) counts every thread of the process instead
// (CLOCK_PROCESS_CPUTIME_ID): for code that judges a long message on
// several goroutines, whose work Of would miss. It measures f only when
// nothing else in the process runs meanwhile: call it from a test that
// is not parallel (Go runs those before any parallel test resumes).
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
func Best(runs int, f func()) time.Duration { return bestOf(runs, Of, f) }

// OfProcess returns the CPU time every thread of the process spends
// while f runs: f's own and that of the goroutines it hands work to.
func OfProcess(f func()) time.Duration {
	start := clock(unix.CLOCK_PROCESS_CPUTIME_ID)
	f()
	return clock(unix.CLOCK_PROCESS_CPUTIME_ID) - start
}

// BestProcess is Best measured with OfProcess.
func BestProcess(runs int, f func()) time.Duration { return bestOf(runs, OfProcess, f) }

// bestOf returns the least of runs (at least one) measures of f by of.
func bestOf(runs int, of func(func()) time.Duration, f func()) time.Duration {
	best := of(f)
	for range runs - 1 {
		best = min(best, of(f))
	}
	return best
}

func now() time.Duration { return clock(unix.CLOCK_THREAD_CPUTIME_ID) }

func clock(id int32) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(id, &ts); err != nil {
		panic("cputime: clock_gettime: " + err.Error())
	}
	return time.Duration(ts.Nano())
}

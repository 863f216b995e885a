//go:build profile

package main

import (
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"syscall"
)

// With -tags profile, MCPGUARD_CPUPROFILE=PREFIX writes a CPU profile of a
// run to PREFIX.PID, from the first SIGUSR1 (or from the start, when
// MCPGUARD_CPUPROFILE_NOW is set) to the exit; used to profile one phase of
// integration/bench. Release builds do not contain this file.
func init() {
	prefix := os.Getenv("MCPGUARD_CPUPROFILE")
	if prefix == "" {
		return
	}
	f, err := os.Create(prefix + "." + strconv.Itoa(os.Getpid()))
	if err != nil {
		return
	}
	start := func() {
		if pprof.StartCPUProfile(f) == nil {
			profileStop = func() { pprof.StopCPUProfile(); f.Close() }
		}
	}
	if os.Getenv("MCPGUARD_CPUPROFILE_NOW") != "" {
		start()
		return
	}
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	go func() { <-usr1; start() }()
}

//go:build unix && !linux

package main

import "os"

// blockingPipe is os.Pipe outside Linux: no pipe sizing there, and the
// figures of this benchmark are meant for Linux, where agents' servers
// mostly run in CI and containers.
func blockingPipe() (r, w *os.File, err error) { return os.Pipe() }

// growPipe does nothing: only Linux sizes pipes.
func growPipe(*os.File) {}

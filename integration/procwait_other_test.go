//go:build !linux

package integration

import "time"

// waitGone reports whether pid has exited; outside Linux there is no
// pidfd to wait on, and the tests that use it read /proc anyway.
func waitGone(pid int, _ time.Duration) bool { return !alive(pid) }

package integration

import (
	"time"

	"golang.org/x/sys/unix"
)

// waitGone returns once process pid has exited (as a zombie too), or after
// timeout, and reports whether it exited. It waits on a pidfd, which the
// kernel makes readable when the process exits, whoever its parent is.
func waitGone(pid int, timeout time.Duration) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err == unix.ESRCH {
		return true
	}
	if err != nil {
		return !alive(pid)
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	deadline := time.Now().Add(timeout)
	for {
		n, err := unix.Poll(fds, int(time.Until(deadline).Milliseconds()))
		if err == unix.EINTR {
			continue
		}
		return err == nil && n > 0
	}
}

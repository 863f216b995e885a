package proxy

import (
	"os"
	"syscall"
)

// serverProcAttr puts the server in its own process group, and has the
// kernel kill it if mcpguard dies without stopping it (SIGKILL to
// mcpguard leaves no server behind reading a pipe nobody writes).
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// pipeSize is what blockingPipe asks for: the default pipe-max-size. A
// 64 KiB pipe makes a 16 MiB result cost 256 context switches each way.
const pipeSize = 1 << 20

// growPipe asks for a pipeSize buffer on f if f is a pipe (our stdin and
// stdout, made by the agent); anything else, or a refusal, changes nothing.
// It goes through SyscallConn: File.Fd would switch the file's mode.
func growPipe(f any) {
	sc, ok := f.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETPIPE_SZ, pipeSize)
	})
}

// blockingPipe makes a pipe in blocking mode with a 1 MiB buffer (when the
// system allows it; a refusal changes nothing). Blocking, each relay
// goroutine's read and write is one plain syscall on its own thread;
// through Go's netpoller every message cost an extra epoll round and a
// goroutine hand-off, which costs large results a good part of their
// speed (BenchmarkRelay* and integration/bench show it). The price: Close
// does not interrupt a blocked read, so Run never waits on a read forever.
func blockingPipe() (r, w *os.File, err error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, uintptr(fds[1]), syscall.F_SETPIPE_SZ, pipeSize)
	return os.NewFile(uintptr(fds[0]), "|0"), os.NewFile(uintptr(fds[1]), "|1"), nil
}

// yieldCPU lets a process waiting for this CPU run before a relay loop
// blocks on its next read. Under pipelined load the peer on the other end
// (the agent, the server) then writes more before the read, and the read
// takes a bigger batch: on a two-core VM, where each sleep and wake-up is a
// costly context switch, that means more calls per second (see
// integration/bench). The loops call it only after a batch of more than one
// line, so a lone request is never delayed.
func yieldCPU() {
	_, _, _ = syscall.Syscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
}

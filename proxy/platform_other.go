//go:build unix && !linux

package proxy

import (
	"os"
	"syscall"
)

// serverProcAttr puts the server in its own process group. Outside Linux
// there is no parent-death signal: if mcpguard is killed with SIGKILL, the
// server notices only when it next reads its closed stdin.
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// growPipe does nothing: only Linux lets a program size a pipe.
func growPipe(any) {}

// blockingPipe makes a pipe in blocking mode (see the Linux version for
// why blocking), close-on-exec like every file Go opens.
func blockingPipe() (r, w *os.File, err error) {
	var fds [2]int
	syscall.ForkLock.RLock()
	err = syscall.Pipe(fds[:])
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, nil, os.NewSyscallError("pipe", err)
	}
	return os.NewFile(uintptr(fds[0]), "|0"), os.NewFile(uintptr(fds[1]), "|1"), nil
}

// yieldCPU does nothing here; see the Linux version.
func yieldCPU() {}

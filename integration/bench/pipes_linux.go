package main

import (
	"os"
	"syscall"
)

// blockingPipe makes a pipe of pipeSize whose ends stay in blocking mode, so
// a read or write is one plain syscall rather than a netpoller round.
func blockingPipe() (r, w *os.File, err error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	syscall.Syscall(syscall.SYS_FCNTL, uintptr(fds[0]), syscall.F_SETPIPE_SZ, pipeSize)
	return os.NewFile(uintptr(fds[0]), "|0"), os.NewFile(uintptr(fds[1]), "|1"), nil
}

// growPipe asks for pipeSize on f if it is a pipe; a refusal changes nothing.
func growPipe(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETPIPE_SZ, pipeSize)
	})
}

package agentconfig

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// lease takes a write lease (fcntl F_SETLEASE F_WRLCK) on f's file: from
// then on the kernel makes any other open(2) or truncate(2) of the file
// wait until the lease is released, and openedForWrite sees it. The
// kernel grants it only while f is the file's one open descriptor, so a
// writer that opened the file earlier and still holds it cannot go
// unseen: lease waits up to leaseWait for other descriptors to close.
// It reports false where no lease could be had: the file system or the
// process cannot hold one (not the file's owner and without CAP_LEASE,
// network file systems, leases disabled), or another process kept the
// file open (a pager, say) for all of leaseWait.
func lease(f *os.File) bool {
	deadline := time.Now().Add(leaseWait)
	for {
		_, err := unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_WRLCK)
		if err == nil {
			return true
		}
		if !errors.Is(err, unix.EAGAIN) || time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
}

// leaseWait is how long lease waits for other processes to close the file.
const leaseWait = time.Second

// openedForWrite reports whether another process opened (or truncated)
// f's file for writing since lease: the lease is then being broken to
// none. A reader only downgrades it (F_RDLCK), and cannot write through
// what it opened.
func openedForWrite(f *os.File) bool {
	t, err := unix.FcntlInt(f.Fd(), unix.F_GETLEASE, 0)
	return err != nil || t == unix.F_UNLCK
}

// opened reports whether another process opened f's file, for reading
// or writing, since lease.
func opened(f *os.File) bool {
	t, err := unix.FcntlInt(f.Fd(), unix.F_GETLEASE, 0)
	return err != nil || t != unix.F_WRLCK
}

// unlease releases the lease: an open waiting on it goes ahead.
func unlease(f *os.File) {
	unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_UNLCK)
}

package sessionstore

import (
	"errors"
	"strconv"

	"golang.org/x/sys/unix"
)

// processStart returns when process pid started, from kern.proc.pid's
// p_starttime (seconds and microseconds since the epoch).
func processStart(pid int) (string, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return "", err
	}
	if int(kp.Proc.P_pid) != pid {
		return "", errors.New("no such process")
	}
	t := kp.Proc.P_starttime
	return strconv.FormatInt(int64(t.Sec), 10) + "." + strconv.FormatInt(int64(t.Usec), 10), nil
}

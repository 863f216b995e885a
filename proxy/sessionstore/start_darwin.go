package sessionstore

import (
	"bytes"
	"encoding/binary"
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

// processArgs returns the argument vector of process pid (kern.procargs2:
// argc, the executable's path, padding, then argv) and its parent's pid.
func processArgs(pid int) (argv []string, ppid int, err error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return nil, 0, err
	}
	raw, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return nil, 0, err
	}
	if len(raw) < 4 {
		return nil, 0, errors.New("unreadable kern.procargs2")
	}
	argc := int(binary.LittleEndian.Uint32(raw))
	rest := raw[4:]
	if i := bytes.IndexByte(rest, 0); i >= 0 {
		rest = bytes.TrimLeft(rest[i:], "\x00") // the executable's path, padding
	}
	for len(argv) < argc && len(rest) > 0 {
		arg, more, _ := bytes.Cut(rest, []byte{0})
		argv, rest = append(argv, string(arg)), more
	}
	return argv, int(kp.Eproc.Ppid), nil
}

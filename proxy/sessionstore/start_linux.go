package sessionstore

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
)

// processStart returns when process pid started: field 22 of
// /proc/PID/stat (clock ticks since boot) and the first 12 characters of
// the boot id, so that neither a reused pid nor a reboot makes another
// process look like the agent.
func processStart(pid int) (string, error) {
	fields, err := statFields(pid)
	if err != nil {
		return "", err
	}
	if _, err := strconv.ParseUint(fields[19], 10, 64); err != nil {
		return "", err
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", err
	}
	id := strings.ReplaceAll(strings.TrimSpace(string(boot)), "-", "")
	if len(id) > 12 {
		id = id[:12]
	}
	return fields[19] + "." + id, nil
}

// processArgs returns the argument vector of process pid and its parent's
// pid (/proc/PID/cmdline and field 4 of /proc/PID/stat).
func processArgs(pid int) (argv []string, ppid int, err error) {
	fields, err := statFields(pid)
	if err != nil {
		return nil, 0, err
	}
	if ppid, err = strconv.Atoi(fields[1]); err != nil {
		return nil, 0, err
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return nil, 0, err
	}
	return strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00"), ppid, nil
}

// statFields returns the fields of /proc/PID/stat from field 3 (state)
// on: fields[1] is field 4 (the parent's pid), fields[19] field 22 (the
// start time).
func statFields(pid int) ([]string, error) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	// The command name (field 2) is in parentheses and may hold spaces
	// and parentheses: the fields that follow start after the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return nil, errors.New("unreadable /proc stat")
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 20 {
		return nil, errors.New("unreadable /proc stat")
	}
	return fields, nil
}

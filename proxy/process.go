package proxy

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// downstream is the MCP server process. It runs in its own process group
// so that signals and the final kill reach every process it started (npx
// starts node; SIGTERM to npx alone orphans the server).
type downstream struct {
	cmd    *exec.Cmd
	pid    int
	stdin  *lineWriter   // to the server's stdin; the relay's only writer to it
	stdout io.ReadCloser // read end of the server's stdout
	exited chan struct{}
	status int // valid once exited is closed
	// stderrDone is closed once the server's stderr has been copied to
	// its end (at once when it goes to stderr unfiltered).
	stderrDone chan struct{}
	// kill sends a signal to the server's process group.
	kill func(syscall.Signal)

	closeStdinOnce sync.Once
	stopOnce       sync.Once
}

// startDownstream starts argv directly (no shell) with the server's stderr
// going to stderr through copyStderr, or straight there when rawStderr.
// The pipes are made here, not by exec, so that Wait does not close the
// server's stdout before the relay has drained it.
//
// redact, when not nil, is applied to each line after text (the secrets of
// the policy: a server that logs its token must not put it on the agent's
// screen or in its logs). When release is not nil, the server's stderr is
// not read before a value arrives on it: true copies it, false drops it.
func startDownstream(argv []string, stderr io.Writer, rawStderr bool, redact func(string) string, release <-chan bool) (*downstream, error) {
	if len(argv) == 0 {
		return nil, errors.New("no server command given")
	}
	inR, inW, err := blockingPipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := blockingPipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	var errR, errW *os.File
	if !rawStderr {
		if errR, errW, err = blockingPipe(); err != nil {
			inR.Close()
			inW.Close()
			outR.Close()
			outW.Close()
			return nil, err
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = inR
	cmd.Stdout = outW
	cmd.Stderr = stderr
	if errW != nil {
		cmd.Stderr = errW
	}
	// When stderr is not a file, exec copies it through a pipe and Wait
	// waits for that copy: a process that outlives the server while holding
	// the pipe must not keep Wait from returning.
	cmd.WaitDelay = time.Second
	cmd.SysProcAttr = serverProcAttr()
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if errW != nil {
		errW.Close()
	}
	if err != nil {
		inW.Close()
		outR.Close()
		if errR != nil {
			errR.Close()
		}
		return nil, err
	}
	pid := cmd.Process.Pid
	d := &downstream{cmd: cmd, pid: pid, stdin: newLineWriter(inW), stdout: outR, exited: make(chan struct{}), stderrDone: make(chan struct{}),
		kill: func(sig syscall.Signal) { _ = syscall.Kill(-pid, sig) }}
	if errR != nil {
		go func() {
			defer close(d.stderrDone)
			defer errR.Close()
			if release != nil && !<-release {
				return
			}
			copyStderrWith(stderr, errR, redact)
		}()
	} else {
		close(d.stderrDone)
	}
	go d.wait()
	return d, nil
}

func (d *downstream) wait() {
	err := d.cmd.Wait()
	d.status = exitStatus(d.cmd.ProcessState, err)
	// Whatever the server left behind in its group goes with it: a stdio
	// server's children serve no one once it is gone.
	d.signal(syscall.SIGKILL)
	close(d.exited)
}

// exitStatus is the status a shell would report: the exit code, or 128+N
// for death by signal N.
func exitStatus(ps *os.ProcessState, err error) int {
	if ps == nil {
		return 1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// signal sends sig to the server's whole process group.
func (d *downstream) signal(sig syscall.Signal) {
	d.kill(sig)
}

// closeStdin closes the server's stdin once every line written or queued
// to it is out (lineWriter.close).
func (d *downstream) closeStdin() {
	d.closeStdinOnce.Do(func() { _ = d.stdin.close() })
}

// stop ends the server politely, then less so: its stdin is closed, it gets
// grace to exit, then SIGTERM to the group, grace again, then SIGKILL.
// It returns once the server has exited. The close writes out what is
// queued first, on its own goroutine: a server that does not read must
// not hold off the signals.
func (d *downstream) stop(grace time.Duration) {
	d.stopOnce.Do(func() {
		go d.closeStdin()
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
			select {
			case <-d.exited:
				return
			case <-time.After(grace):
			}
			d.signal(sig)
		}
	})
	<-d.exited
}

// escalate follows a forwarded signal: if the server is still running after
// grace, the group is killed. Nothing waits forever on a server that
// ignores the signal it was sent.
func (d *downstream) escalate(grace time.Duration) {
	select {
	case <-d.exited:
	case <-time.After(grace):
		d.signal(syscall.SIGKILL)
	}
}

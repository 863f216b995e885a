package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file holds the start-up measurement (-starts N): what an agent waits
// for when it launches a server through mcpguard, and what mcpguard keeps
// resident while the session is idle.

// idleWait is how long a chain rests after its first initialize answer
// before its memory is read, so that what the start left behind (a
// background sweep, a lazy table built on the answer) has settled.
const idleWait = 200 * time.Millisecond

// spin keeps one core busy for d: a server's own start (loading and
// compiling its code) is work on the CPU, which competes with mcpguard's
// start for the cores, not a sleep.
func spin(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

// StartFigures are one path's start-up figures: the median (or one start's).
type StartFigures struct {
	// FirstAnswerMs is the wall time from spawning the chain to reading
	// its answer to initialize.
	FirstAnswerMs float64 `json:"first_answer_ms"`
	// CPUms is the CPU time of the process in the middle (every thread's)
	// up to that answer.
	CPUms float64 `json:"middle_cpu_ms"`
	// RSS of the middle process after the answer and idleWait, from
	// /proc/PID/smaps_rollup: AnonKiB is memory the program allocated
	// (heap, stacks, written data), FileKiB the pages of the binary and
	// libraries it has mapped. Linux maps up to 64 KB of cached pages
	// around each page a process touches, so FileKiB also depends on how
	// the binary's file sits in the page cache: compare binaries written
	// the same way (go build, or a fresh cp of each).
	RSSKiB  int64 `json:"middle_idle_rss_kib"`
	AnonKiB int64 `json:"middle_idle_anon_kib"`
	FileKiB int64 `json:"middle_idle_file_kib"`
}

// StartResult is a path's start-up figures: the median of each, the
// fastest start, and every start's.
type StartResult struct {
	Path string `json:"path"`
	StartFigures
	MinFirstAnswerMs float64        `json:"min_first_answer_ms"`
	Starts           []StartFigures `json:"starts"`
}

// measureStarts starts every path's chain n times, the paths taking turns
// so that they share the load of a busy machine, and measures each start.
func measureStarts(paths []string, argv map[string][]string, n int) ([]StartResult, error) {
	all := map[string][]StartFigures{}
	for i := range n {
		for j := range paths {
			p := paths[(i+j)%len(paths)]
			f, err := startOnce(argv[p], p != "direct")
			if err != nil {
				return nil, fmt.Errorf("%s: start %d: %w", p, i+1, err)
			}
			all[p] = append(all[p], f)
		}
	}
	var out []StartResult
	for _, p := range paths {
		fs := all[p]
		med := func(get func(StartFigures) float64) float64 { return medianOf(fs, get) }
		r := StartResult{Path: p, Starts: fs, StartFigures: StartFigures{
			FirstAnswerMs: med(func(f StartFigures) float64 { return f.FirstAnswerMs }),
			CPUms:         med(func(f StartFigures) float64 { return f.CPUms }),
			RSSKiB:        int64(med(func(f StartFigures) float64 { return float64(f.RSSKiB) })),
			AnonKiB:       int64(med(func(f StartFigures) float64 { return float64(f.AnonKiB) })),
			FileKiB:       int64(med(func(f StartFigures) float64 { return float64(f.FileKiB) })),
		}}
		r.MinFirstAnswerMs = slices.MinFunc(fs, func(a, b StartFigures) int {
			return cmp.Compare(a.FirstAnswerMs, b.FirstAnswerMs)
		}).FirstAnswerMs
		out = append(out, r)
	}
	return out, nil
}

// startOnce spawns one chain, does initialize, and reads the middle
// process's CPU time at once and its memory after idleWait.
func startOnce(argv []string, middle bool) (StartFigures, error) {
	t0 := time.Now()
	c, err := start(argv)
	if err != nil {
		return StartFigures{}, err
	}
	defer c.close()
	line, _, err := c.call([]byte(initializeRequest(1)))
	dt := time.Since(t0)
	if err != nil {
		return StartFigures{}, err
	}
	if err := checkInitialize(line, 1); err != nil {
		return StartFigures{}, err
	}
	f := StartFigures{FirstAnswerMs: float64(dt.Nanoseconds()) / 1e6}
	if !middle {
		return f, nil
	}
	pid := c.cmd.Process.Pid
	f.CPUms = float64(cpuTime(pid).Nanoseconds()) / 1e6
	time.Sleep(idleWait)
	f.RSSKiB, f.AnonKiB, err = residentKiB(pid)
	f.FileKiB = f.RSSKiB - f.AnonKiB
	return f, err
}

// residentKiB reads the resident set and its anonymous part from
// /proc/PID/smaps_rollup.
func residentKiB(pid int) (rss, anon int64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0, 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok || (k != "Rss" && k != "Anonymous") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("smaps_rollup %s: %q", k, v)
		}
		if k == "Rss" {
			rss = kb
		} else {
			anon = kb
		}
	}
	if rss == 0 {
		return 0, 0, fmt.Errorf("smaps_rollup of %d has no Rss", pid)
	}
	return rss, anon, nil
}

// startRatios compares mcpguard's start with the relay's against the
// targets: the first answer at most 10 ms later, at most 12 MiB resident
// when idle.
func startRatios(rs []StartResult) []Ratio {
	var out []Ratio
	by := map[string]StartResult{}
	for _, r := range rs {
		by[r.Path] = r
	}
	for _, p := range []string{"mcpguard", "otel"} {
		g, ok := by[p]
		if !ok {
			continue
		}
		if relay, ok := by["relay"]; ok {
			d := g.FirstAnswerMs - relay.FirstAnswerMs
			met := d <= 10
			out = append(out, Ratio{Name: p + " − relay, first answer (ms)", Value: d, Target: "≤ 10", Met: &met})
		}
		rss := float64(g.RSSKiB) / 1024
		met := rss <= 12
		out = append(out, Ratio{Name: p + " idle RSS (MiB)", Value: rss, Target: "≤ 12", Met: &met})
	}
	return out
}

func printStarts(w io.Writer, rs []StartResult) {
	fmt.Fprintf(w, "%-9s %14s %12s %12s %10s %10s %10s\n",
		"path", "1st answer ms", "fastest ms", "CPU ms", "RSS MiB", "anon MiB", "file MiB")
	for _, r := range rs {
		cpu, rss, anon, file := "-", "-", "-", "-"
		if r.Path != "direct" {
			mib := func(kb int64) string { return fmt.Sprintf("%.1f", float64(kb)/1024) }
			cpu, rss, anon, file = fmt.Sprintf("%.1f", r.CPUms), mib(r.RSSKiB), mib(r.AnonKiB), mib(r.FileKiB)
		}
		fmt.Fprintf(w, "%-9s %14.1f %12.1f %12s %10s %10s %10s\n",
			r.Path, r.FirstAnswerMs, r.MinFirstAnswerMs, cpu, rss, anon, file)
	}
}

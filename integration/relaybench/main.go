// Command relaybench measures what mcpguard costs on the wire, against the
// floor every stdio proxy pays.
//
// Three paths carry the same traffic between this driver and a minimal MCP
// server (this program again, with -serve):
//
//	direct    driver ↔ server
//	relay     driver ↔ a bare line relay with no checks (this program, -relay) ↔ server
//	          (it forwards whole lines, as a message-aware proxy must; with
//	          -stream-relay it copies long lines as they arrive instead)
//	mcpguard  driver ↔ mcpguard (baseline policy, or -policy) ↔ server
//
// For each path it measures round-trip latency with one request in flight
// (p50, p99), pipelined throughput with 64 requests in flight (256-byte
// arguments), and the rate of 16 MiB tool results, and the peak RSS of the
// process in the middle. Every reply is checked (id, size). Paths run
// interleaved for -rounds rounds; the median round is reported, with the
// ratios mcpguard/relay and mcpguard/direct.
//
//	go run ./integration/relaybench -n 200000
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	serve := flag.Bool("serve", false, "run as the minimal MCP server")
	relay := flag.Bool("relay", false, "run as a bare line relay in front of the command after --")
	stream := flag.Bool("stream", false, "with -relay: copy long lines as they arrive instead of whole lines")
	streamBench := flag.Bool("stream-relay", false, "measure against a relay that streams long lines (a byte copier, not a message-aware proxy)")
	n := flag.Int("n", 200000, "messages per latency and throughput run")
	big := flag.Int("big", 10, "16 MiB results per run")
	rounds := flag.Int("rounds", 3, "rounds (paths interleaved); the median is reported")
	policy := flag.String("policy", "", "policy file for the mcpguard path")
	bin := flag.String("mcpguard", "", "mcpguard binary (default: build it)")
	asJSON := flag.Bool("json", false, "print results as JSON")
	only := flag.String("paths", "direct,relay,mcpguard", "paths to measure, comma-separated")
	flag.Parse()
	switch {
	case *serve:
		serveMCP(os.Stdin, os.Stdout)
	case *relay:
		streamRelay = *stream
		os.Exit(bareRelay(flag.Args()))
	default:
		paths = strings.Split(*only, ",")
		relayFlags = []string{"-relay"}
		if *streamBench {
			relayFlags = []string{"-relay", "-stream"}
		}
		res, err := drive(*n, *big, *rounds, *policy, *bin)
		if err != nil {
			fmt.Fprintln(os.Stderr, "relaybench:", err)
			os.Exit(1)
		}
		if *asJSON {
			json.NewEncoder(os.Stdout).Encode(res)
			return
		}
		report(os.Stdout, res)
	}
}

// Result is one path's figures.
type Result struct {
	Path       string  `json:"path"`
	P50us      float64 `json:"p50_us"`
	P99us      float64 `json:"p99_us"`
	MsgsPerSec float64 `json:"msgs_per_sec"`
	BigMBps    float64 `json:"big_mb_per_sec"`
	MiddleRSS  int64   `json:"middle_rss_kb"`           // peak RSS of the relay or mcpguard
	MiddleCPU  float64 `json:"middle_cpu_us_per_msg"`   // CPU of the middle process per pipelined request and reply
	MiddleIO   float64 `json:"middle_syscalls_per_msg"` // read+write syscalls of the middle process per request and reply
}

var paths = []string{"direct", "relay", "mcpguard"}

// relayFlags start this program as the bare relay.
var relayFlags = []string{"-relay"}

func drive(n, big, rounds int, policy, bin string) ([]Result, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "relaybench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if bin == "" {
		bin = filepath.Join(dir, "mcpguard")
		build := exec.Command("go", "build", "-o", bin, "github.com/mcpguard/mcpguard")
		if out, err := build.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("building mcpguard: %v\n%s", err, out)
		}
	}
	server := []string{self, "-serve"}
	argv := map[string][]string{
		"direct": server,
		"relay":  append(append(append([]string{self}, relayFlags...), "--"), server...),
	}
	guard := []string{bin, "--log", filepath.Join(dir, "mcpguard.log")}
	if policy != "" {
		guard = append(guard, "--policy", policy)
	}
	argv["mcpguard"] = append(append(guard, "--"), server...)

	all := map[string][]Result{}
	for r := 0; r < rounds; r++ {
		for _, p := range paths {
			res, err := measure(p, argv[p], n, big)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			all[p] = append(all[p], res)
		}
	}
	var out []Result
	for _, p := range paths {
		out = append(out, median(all[p]))
	}
	return out, nil
}

// median takes each figure's median over the rounds.
func median(rs []Result) Result {
	pick := func(f func(Result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return Result{
		Path:       rs[0].Path,
		P50us:      pick(func(r Result) float64 { return r.P50us }),
		P99us:      pick(func(r Result) float64 { return r.P99us }),
		MsgsPerSec: pick(func(r Result) float64 { return r.MsgsPerSec }),
		BigMBps:    pick(func(r Result) float64 { return r.BigMBps }),
		MiddleRSS:  int64(pick(func(r Result) float64 { return float64(r.MiddleRSS) })),
		MiddleCPU:  pick(func(r Result) float64 { return r.MiddleCPU }),
		MiddleIO:   pick(func(r Result) float64 { return r.MiddleIO }),
	}
}

// chain is the driver's end of one path.
type chain struct {
	cmd *exec.Cmd
	in  *bufio.Writer
	wc  io.WriteCloser
	out *bufio.Reader
}

func start(argv []string) (*chain, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	wc, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	rc, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &chain{cmd: cmd, in: bufio.NewWriterSize(wc, 1<<16), wc: wc, out: bufio.NewReaderSize(rc, 1<<20)}, nil
}

func (c *chain) send(line []byte) error {
	if _, err := c.in.Write(line); err != nil {
		return err
	}
	return c.in.WriteByte('\n')
}

// recv reads one line (any length).
func (c *chain) recv() ([]byte, error) {
	var buf []byte
	for {
		chunk, err := c.out.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			buf = append(buf, chunk...)
			continue
		}
		if err != nil {
			return nil, err
		}
		if buf == nil {
			return chunk, nil
		}
		return append(buf, chunk...), nil
	}
}

// idOf reads the id of a reply, which the server writes first.
func idOf(line []byte) (int, error) {
	const prefix = `{"jsonrpc":"2.0","id":`
	if !bytes.HasPrefix(line, []byte(prefix)) {
		return 0, fmt.Errorf("unexpected reply %.120q", line)
	}
	rest := line[len(prefix):]
	end := bytes.IndexByte(rest, ',')
	if end < 0 {
		return 0, fmt.Errorf("unexpected reply %.120q", line)
	}
	return strconv.Atoi(string(rest[:end]))
}

func callLine(id int, args string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + args + `"}}}`)
}

func measure(path string, argv []string, n, big int) (Result, error) {
	c, err := start(argv)
	if err != nil {
		return Result{}, err
	}
	defer func() {
		c.wc.Close()
		c.cmd.Wait()
	}()
	if err := c.send([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"relaybench","version":"1"}}}`)); err != nil {
		return Result{}, err
	}
	c.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	c.in.Flush()
	if _, err := c.recv(); err != nil {
		return Result{}, err
	}
	args := strings.Repeat("a", 256)
	want := len(`{"jsonrpc":"2.0","id":`) // every reply is at least this long
	res := Result{Path: path}
	id := 1

	// Latency: one in flight.
	warm := min(n/10, 2000)
	lat := make([]time.Duration, 0, n)
	for i := 0; i < n+warm; i++ {
		t0 := time.Now()
		c.send(callLine(id, args))
		c.in.Flush()
		line, err := c.recv()
		if err != nil {
			return res, err
		}
		if got, err := idOf(line); err != nil || got != id || len(line) < want+256 {
			return res, fmt.Errorf("latency: reply %.100q for id %d", line, id)
		}
		if i >= warm {
			lat = append(lat, time.Since(t0))
		}
		id++
	}
	slices.Sort(lat)
	res.P50us = float64(lat[len(lat)/2].Nanoseconds()) / 1e3
	res.P99us = float64(lat[len(lat)*99/100].Nanoseconds()) / 1e3

	// Throughput: 64 in flight.
	cpu0 := cpuTime(c.cmd.Process.Pid)
	io0 := ioCalls(c.cmd.Process.Pid)
	const window = 64
	first := id
	errc := make(chan error, 1)
	credit := make(chan struct{}, window)
	for range window {
		credit <- struct{}{}
	}
	t0 := time.Now()
	go func() {
		for i := 0; i < n; i++ {
			if len(credit) == 0 {
				c.in.Flush()
			}
			<-credit
			if err := c.send(callLine(first+i, args)); err != nil {
				errc <- err
				return
			}
		}
		errc <- c.in.Flush()
	}()
	for i := 0; i < n; i++ {
		line, err := c.recv()
		if err != nil {
			return res, err
		}
		if got, err := idOf(line); err != nil || got != first+i || len(line) < want+256 {
			return res, fmt.Errorf("throughput: reply %.100q, want id %d", line, first+i)
		}
		credit <- struct{}{}
	}
	res.MsgsPerSec = float64(n) / time.Since(t0).Seconds()
	if path != "direct" {
		res.MiddleCPU = (cpuTime(c.cmd.Process.Pid) - cpu0).Seconds() * 1e6 / float64(n)
		res.MiddleIO = float64(ioCalls(c.cmd.Process.Pid)-io0) / float64(n)
	}
	if err := <-errc; err != nil {
		return res, err
	}
	id = first + n

	// 16 MiB results.
	var bytesIn int64
	var spent time.Duration
	for i := 0; i < big; i++ {
		t0 := time.Now()
		c.send([]byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"blob","arguments":{"bytes":16777216}}}`))
		c.in.Flush()
		line, err := c.recv()
		if err != nil {
			return res, err
		}
		spent += time.Since(t0)
		if got, err := idOf(line); err != nil || got != id || len(line) < 16<<20 {
			return res, fmt.Errorf("big: reply of %d bytes for id %d", len(line), id)
		}
		bytesIn += int64(len(line))
		id++
	}
	if big > 0 {
		res.BigMBps = float64(bytesIn) / 1e6 / spent.Seconds()
	}
	if path != "direct" {
		res.MiddleRSS = peakRSS(c.cmd.Process.Pid)
	}
	return res, nil
}

// cpuTime reads the user+system CPU a process has used (clock ticks of 10ms).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * 10 * time.Millisecond
}

// ioCalls reads the read and write syscalls a process has made (syscr+syscw).
func ioCalls(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		return 0
	}
	var n int64
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok && (k == "syscr" || k == "syscw") {
			x, _ := strconv.ParseInt(v, 10, 64)
			n += x
		}
	}
	return n
}

// peakRSS reads VmHWM (kB) of a process.
func peakRSS(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			v, _ := strconv.ParseInt(strings.Fields(l)[1], 10, 64)
			return v
		}
	}
	return 0
}

func report(w io.Writer, rs []Result) {
	by := map[string]Result{}
	fmt.Fprintf(w, "%-9s %10s %10s %14s %14s %12s %14s %13s\n", "path", "p50 µs", "p99 µs", "msgs/s (64)", "16MiB MB/s", "peak RSS MB", "CPU µs/msg", "syscalls/msg")
	for _, r := range rs {
		by[r.Path] = r
		fmt.Fprintf(w, "%-9s %10.1f %10.1f %14.0f %14.0f %12.1f %14.2f %13.2f\n", r.Path, r.P50us, r.P99us, r.MsgsPerSec, r.BigMBps, float64(r.MiddleRSS)/1024, r.MiddleCPU, r.MiddleIO)
	}
	g, rl, d := by["mcpguard"], by["relay"], by["direct"]
	if len(by) < 3 {
		return
	}
	fmt.Fprintf(w, "\nmcpguard / relay:  p50 %.2fx (target ≤ 1.15)  p99 %.2fx  throughput %.2fx (target ≥ 0.85)  16MiB %.2fx (target ≥ 0.6)\n",
		g.P50us/rl.P50us, g.P99us/rl.P99us, g.MsgsPerSec/rl.MsgsPerSec, g.BigMBps/rl.BigMBps)
	fmt.Fprintf(w, "mcpguard / direct: p50 %.2fx  p99 %.2fx  throughput %.2fx  16MiB %.2fx\n",
		g.P50us/d.P50us, g.P99us/d.P99us, g.MsgsPerSec/d.MsgsPerSec, g.BigMBps/d.BigMBps)
	fmt.Fprintf(w, "relay / direct:    p50 %.2fx  throughput %.2fx  16MiB %.2fx   (GOMAXPROCS %d)\n",
		rl.P50us/d.P50us, rl.MsgsPerSec/d.MsgsPerSec, rl.BigMBps/d.BigMBps, runtime.GOMAXPROCS(0))
}

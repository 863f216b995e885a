// Command bench measures what mcpguard costs on the stdio wire, against the
// floor that any stdio proxy pays and against no proxy at all.
//
// The driver (this program) plays the agent. It talks to a minimal, fast MCP
// server (this program again, with -serve) over three paths:
//
//	direct    driver ↔ server
//	relay     driver ↔ bare line relay, no checks (this program, -relay) ↔ server
//	mcpguard  driver ↔ mcpguard --log TMP [--policy P] ↔ server
//	otel      the same with --otel, exporting spans and metrics over
//	          OTLP/HTTP to a sink in this program that answers every
//	          export at once (not measured unless -paths names it)
//
// The relay is the floor: two extra pipe hops, blocking 1 MiB pipes,
// bufio in both directions, whole lines forwarded in batches (-stream-relay
// makes it copy long lines as they arrive, which no proxy that must see a
// message first can do). Every pipe in every path is 1 MiB, as mcpguard asks.
//
// Each round starts all paths' chains, does the initialize handshake and
// tools/list on each, and then measures
//
//  1. latency with one request in flight: -n sequential tools/call echo
//     with 256-byte arguments, after a warm-up; p50, p90, p99 in µs;
//  2. pipelined throughput: -n of the same calls with 64 in flight;
//     calls (request and reply) per second, and the CPU the middle process
//     spends per call;
//  3. large results: -big tools/call blob results of 16 MiB of multi-line
//     text (after one unmeasured); MB/s of the reply line from request
//     written to reply read, and the peak RSS (VmHWM) of the middle
//     process at the end of the round.
//
// The paths take turns in blocks (2,000 calls, 10,000 pipelined calls, one
// large result), in rotating order, so that on a shared machine they all
// see the same load. Each figure is the median over -rounds rounds.
//
// Every reply is verified: its id, and its content byte for byte (a reply
// that is not the server's bytes is decoded and compared by meaning). It
// prints a table and the ratios against the targets (mcpguard/relay: p50
// ≤ 1.15, throughput ≥ 0.85, 16 MiB MB/s ≥ 0.6; peak RSS ≤ 3× the message
// + 32 MiB), or -json.
//
// With -starts N it measures start-up instead: each path's chain is
// started N times, the paths taking turns, and timed from spawn to the
// answer to initialize; then the CPU time of the process in the middle up
// to that answer, and its resident memory once idle (anonymous, and
// file-backed: the binary's and libraries' pages). Targets: the first
// answer at most 10 ms after the relay's, at most 12 MiB resident. With
// -policy FILE mcpguard loads that file, which it does while the server
// starts; -server-start D makes the server spend D on the CPU before it
// serves (a real one loads its code: node takes 100+ ms), which is what
// that load can hide behind.
//
// Run it from inside the module; it builds mcpguard into -build-dir:
//
//	go run ./integration/bench -n 200000
//	go run ./integration/bench -n 20000 -big 3 -rounds 1   # a quick look
//	go run ./integration/bench -policy integration/bench/testdata/twenty-rules.yaml
//	go run ./integration/bench -starts 20 -paths relay,mcpguard
//	go run ./integration/bench -starts 20 -paths relay,mcpguard -policy policies/filesystem.yaml -server-start 100ms
//
// BENCH.md, beside this file, keeps the figures measured over time.
//
// The floor relay gets the same runtime settings as mcpguard (a spare P and
// a pass through the scheduler every 16 batches) and passes a long batch on
// in pieces as it does, so the ratios compare like with like.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	serveMode := flag.Bool("serve", false, "run as the MCP server on stdin/stdout")
	relayMode := flag.Bool("relay", false, "run as the bare line relay in front of the command after --")
	stream := flag.Bool("stream", false, "with -relay: copy long lines as they arrive")
	serveAfter := flag.Duration("serve-after", 0, "with -serve: spend this long on the CPU before serving")
	var cfg Config
	flag.IntVar(&cfg.N, "n", 200000, "calls per latency run and per throughput run")
	flag.IntVar(&cfg.Big, "big", 20, "measured large results per run")
	flag.IntVar(&cfg.BigBytes, "big-bytes", 16<<20, "text bytes of one large result")
	flag.IntVar(&cfg.Rounds, "rounds", 3, "rounds, paths interleaved; each figure is the median")
	flag.IntVar(&cfg.Starts, "starts", 0, "instead of the rounds, start each path this many times and measure the first initialize answer and the idle RSS")
	flag.StringVar(&cfg.Policy, "policy", "", "policy file for the mcpguard path (default: the embedded baseline)")
	flag.DurationVar(&cfg.ServerStart, "server-start", 0, "the server spends this long on the CPU before it serves, as a real server loads its code (node: 100+ ms): what mcpguard's own start can hide behind")
	flag.BoolVar(&cfg.StreamRelay, "stream-relay", false, "measure against a relay that streams long lines instead of forwarding whole lines")
	pathList := flag.String("paths", "direct,relay,mcpguard", "paths to measure, comma-separated")
	bin := flag.String("mcpguard", "", "a built mcpguard to measure (default: go build the module into -build-dir)")
	buildDir := flag.String("build-dir", "/tmp/mcpguard-bench", "where mcpguard is built")
	asJSON := flag.Bool("json", false, "print the results as JSON")
	timeout := flag.Duration("timeout", 30*time.Minute, "give up, and kill the chains, after this long")
	flag.Parse()

	switch {
	case *serveMode:
		spin(*serveAfter)
		if err := serve(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "bench -serve:", err)
			os.Exit(1)
		}
		return
	case *relayMode:
		if flag.NArg() == 0 {
			fmt.Fprintln(os.Stderr, "bench -relay: no command after --")
			os.Exit(2)
		}
		os.Exit(relay(flag.Args(), *stream))
	}

	cfg.Paths = strings.Split(*pathList, ",")
	for _, p := range cfg.Paths {
		if p != "direct" && p != "relay" && p != "mcpguard" && p != "otel" {
			fmt.Fprintf(os.Stderr, "bench: unknown path %q\n", p)
			os.Exit(2)
		}
	}
	if cfg.N < 1 || cfg.Rounds < 1 || cfg.Big < 0 || cfg.BigBytes < 0 || cfg.Starts < 0 {
		fmt.Fprintln(os.Stderr, "bench: -n and -rounds must be positive, -big, -big-bytes and -starts not negative")
		os.Exit(2)
	}
	time.AfterFunc(*timeout, func() {
		killAll()
		fmt.Fprintf(os.Stderr, "bench: no result after %v; killed the chains\n", *timeout)
		os.Exit(1)
	})
	rep, err := run(cfg, *bin, *buildDir)
	if err != nil {
		killAll()
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
		return
	}
	rep.print(os.Stdout)
}

// Config is what a run measures.
type Config struct {
	N           int           `json:"n"`
	Big         int           `json:"big"`
	BigBytes    int           `json:"big_bytes"`
	Rounds      int           `json:"rounds"`
	Starts      int           `json:"starts,omitempty"`
	Policy      string        `json:"policy,omitempty"`
	ServerStart time.Duration `json:"server_start_ns,omitempty"`
	StreamRelay bool          `json:"stream_relay"`
	Paths       []string      `json:"paths"`
	GOMAXPROCS  int           `json:"gomaxprocs"`
	GoVersion   string        `json:"go_version"`
}

// Figures are one path's results, of one round or the median of all.
type Figures struct {
	P50us       float64 `json:"p50_us"`
	P90us       float64 `json:"p90_us"`
	P99us       float64 `json:"p99_us"`
	MsgsPerSec  float64 `json:"msgs_per_sec"`
	BigMBps     float64 `json:"big_mb_per_sec"`
	BigLine     int     `json:"big_line_bytes"`         // one large reply line, newline included
	PeakRSSKiB  int64   `json:"middle_peak_rss_kib"`    // VmHWM of the relay or mcpguard
	CPUusPerMsg float64 `json:"middle_cpu_us_per_call"` // its CPU per pipelined call (request and reply)
	Verified    int     `json:"replies_verified"`
	Expected    int     `json:"replies_expected"`
}

// PathResult is a path's median figures and each round's.
type PathResult struct {
	Path string `json:"path"`
	Figures
	Rounds []Figures `json:"rounds"`
}

// Ratio compares two paths' figures; Target is empty when it is for
// information only.
type Ratio struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Target string  `json:"target,omitempty"`
	Met    *bool   `json:"met,omitempty"`
}

// Report is the whole result.
type Report struct {
	Config  Config        `json:"config"`
	Results []PathResult  `json:"results,omitempty"`
	Starts  []StartResult `json:"starts,omitempty"`
	Ratios  []Ratio       `json:"ratios"`
}

func run(cfg Config, bin, buildDir string) (*Report, error) {
	cfg.GOMAXPROCS, cfg.GoVersion = runtime.GOMAXPROCS(0), runtime.Version()
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if bin == "" && (slices.Contains(cfg.Paths, "mcpguard") || slices.Contains(cfg.Paths, "otel")) {
		progress("building mcpguard into %s", buildDir)
		if bin, err = buildMcpguard(buildDir); err != nil {
			return nil, err
		}
	}
	tmp, err := os.MkdirTemp("", "mcpguard-bench-log")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	server := []string{self, "-serve"}
	if cfg.ServerStart > 0 {
		server = append(server, "-serve-after", cfg.ServerStart.String())
	}
	relayArgv := []string{self, "-relay"}
	if cfg.StreamRelay {
		relayArgv = append(relayArgv, "-stream")
	}
	guard := []string{bin, "--log", filepath.Join(tmp, "mcpguard.log")}
	if cfg.Policy != "" {
		guard = append(guard, "--policy", cfg.Policy)
	}
	argv := map[string][]string{
		"direct":   server,
		"relay":    append(append(relayArgv, "--"), server...),
		"mcpguard": append(append(guard, "--"), server...),
	}
	if slices.Contains(cfg.Paths, "otel") {
		sink, err := startOTLPSink()
		if err != nil {
			return nil, err
		}
		defer sink.Close()
		env, err := exec.LookPath("env")
		if err != nil {
			return nil, err
		}
		otel := []string{env, "OTEL_EXPORTER_OTLP_ENDPOINT=http://" + sink.Addr().String(),
			bin, "--otel", "--log", filepath.Join(tmp, "mcpguard-otel.log")}
		if cfg.Policy != "" {
			otel = append(otel, "--policy", cfg.Policy)
		}
		argv["otel"] = append(append(otel, "--"), server...)
	}

	if cfg.Starts > 0 {
		progress("%d starts of each path", cfg.Starts)
		starts, err := measureStarts(cfg.Paths, argv, cfg.Starts)
		if err != nil {
			return nil, err
		}
		return &Report{Config: cfg, Starts: starts, Ratios: startRatios(starts)}, nil
	}

	b := newBench(cfg)
	rounds := map[string][]Figures{}
	for r := range cfg.Rounds {
		progress("round %d/%d", r+1, cfg.Rounds)
		figs, err := b.round(argv)
		if err != nil {
			return nil, err
		}
		for _, p := range cfg.Paths {
			rounds[p] = append(rounds[p], figs[p])
		}
	}
	rep := &Report{Config: cfg}
	for _, p := range cfg.Paths {
		rep.Results = append(rep.Results, PathResult{Path: p, Figures: median(rounds[p]), Rounds: rounds[p]})
	}
	rep.Ratios = ratios(rep.Results)
	return rep, nil
}

// buildMcpguard builds the module's main package into dir.
func buildMcpguard(dir string) (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull {
		return "", errors.New("run bench inside the mcpguard module (go env GOMOD found none)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "mcpguard")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Dir(gomod)
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building mcpguard: %v\n%s", err, out)
	}
	return bin, nil
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

// bench holds what every measurement reuses: the expected large reply and
// buffers.
type bench struct {
	cfg     Config
	blob    []byte // the escaped text of a large result, as the server writes it
	blobReq []byte // the arguments of a blob call
}

func newBench(cfg Config) *bench {
	return &bench{
		cfg:     cfg,
		blob:    escapedBlob(cfg.BigBytes),
		blobReq: []byte(`,"method":"tools/call","params":{"name":"blob","arguments":{"bytes":` + strconv.Itoa(cfg.BigBytes) + `}}}` + "\n"),
	}
}

// chain is the driver's end of one path.
type chain struct {
	cmd      *exec.Cmd
	in       *os.File // write end of the first process's stdin
	out      *os.File // read end of its stdout
	w        *bufio.Writer
	r        *bufio.Reader
	line     []byte // reused for lines longer than r's buffer
	req      []byte // reused for requests
	want     []byte // reused for expected replies
	bigLine  int    // length of the last large reply line
	nextID   int
	verified int
	expected int
}

// running holds the process groups to kill if the driver gives up.
var running sync.Map // pid → struct{}

func killAll() {
	running.Range(func(pid, _ any) bool {
		syscall.Kill(-pid.(int), syscall.SIGKILL)
		return true
	})
}

func start(argv []string) (*chain, error) {
	inR, inW, err := blockingPipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := blockingPipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	running.Store(cmd.Process.Pid, struct{}{})
	return &chain{cmd: cmd, in: inW, out: outR, w: bufio.NewWriterSize(inW, ioBuffer), r: bufio.NewReaderSize(outR, ioBuffer), nextID: 1}, nil
}

// close ends the chain as an agent does: stdin closed, then a bounded wait.
func (c *chain) close() {
	c.in.Close()
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, c.out) // nothing should come, but never block the chain's exit
		c.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	c.out.Close()
	running.Delete(c.cmd.Process.Pid)
}

// recv reads one line, newline included, of any length. The slice is valid
// until the next call.
func (c *chain) recv() ([]byte, error) {
	c.line = c.line[:0]
	for {
		chunk, err := c.r.ReadSlice('\n')
		switch {
		case err == nil && len(c.line) == 0:
			return chunk, nil
		case err == nil:
			c.line = append(c.line, chunk...)
			return c.line, nil
		case err == bufio.ErrBufferFull:
			c.line = append(c.line, chunk...)
		case err == io.EOF:
			return nil, io.ErrUnexpectedEOF // the chain ended before replying
		default:
			return nil, err
		}
	}
}

// call sends one line and reads one reply line, timing the round trip.
func (c *chain) call(req []byte) ([]byte, time.Duration, error) {
	t0 := time.Now()
	c.w.Write(req)
	if err := c.w.Flush(); err != nil {
		return nil, 0, err
	}
	line, err := c.recv()
	return line, time.Since(t0), err
}

// Paths alternate in blocks of this many calls (latency, throughput), so
// that they share the load of a busy machine rather than each taking its
// own slice of time.
const (
	latencyBlock    = 2000
	throughputBlock = 10000
)

// round starts every path's chain, measures them in alternating blocks,
// and closes them.
func (b *bench) round(argv map[string][]string) (map[string]Figures, error) {
	paths := b.cfg.Paths
	chains := map[string]*chain{}
	defer func() {
		for _, c := range chains {
			c.close()
		}
	}()
	for _, p := range paths {
		c, err := start(argv[p])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		chains[p] = c
		if err := c.handshake(); err != nil {
			return nil, fmt.Errorf("%s: handshake: %w", p, err)
		}
	}
	// each runs f on every path, the order rotating with j.
	each := func(j int, f func(p string, c *chain) error) error {
		for i := range paths {
			p := paths[(i+j)%len(paths)]
			if err := f(p, chains[p]); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
		return nil
	}
	n := b.cfg.N
	figs := map[string]Figures{}

	lat := map[string][]time.Duration{}
	if err := each(0, func(p string, c *chain) error { // warm-up
		_, err := b.latency(c, min(n/10, 5000), nil)
		return err
	}); err != nil {
		return nil, fmt.Errorf("latency: %w", err)
	}
	for j, done := 0, 0; done < n; j, done = j+1, done+latencyBlock {
		if err := each(j, func(p string, c *chain) (err error) {
			lat[p], err = b.latency(c, min(latencyBlock, n-done), lat[p])
			return err
		}); err != nil {
			return nil, fmt.Errorf("latency: %w", err)
		}
	}

	spent, cpu0 := map[string]time.Duration{}, map[string]time.Duration{}
	for p, c := range chains {
		cpu0[p] = cpuTime(c.cmd.Process.Pid)
	}
	for j, done := 0, 0; done < n; j, done = j+1, done+throughputBlock {
		if err := each(j, func(p string, c *chain) error {
			dt, err := b.throughput(c, min(throughputBlock, n-done))
			spent[p] += dt
			return err
		}); err != nil {
			return nil, fmt.Errorf("throughput: %w", err)
		}
	}
	cpu := map[string]time.Duration{}
	for p, c := range chains {
		cpu[p] = cpuTime(c.cmd.Process.Pid) - cpu0[p]
	}

	bigBytes, bigSpent := map[string]int64{}, map[string]time.Duration{}
	for j := range min(b.cfg.Big, 1) + b.cfg.Big { // the first is a warm-up
		if err := each(j, func(p string, c *chain) error {
			size, dt, err := b.large(c)
			if j > 0 {
				bigBytes[p] += int64(size)
				bigSpent[p] += dt
			}
			return err
		}); err != nil {
			return nil, fmt.Errorf("large results: %w", err)
		}
	}

	for _, p := range paths {
		c, l := chains[p], lat[p]
		slices.Sort(l)
		pct := func(q int) float64 { return float64(l[(len(l)-1)*q/100].Nanoseconds()) / 1e3 }
		f := Figures{P50us: pct(50), P90us: pct(90), P99us: pct(99),
			MsgsPerSec: float64(n) / spent[p].Seconds(), BigLine: c.bigLine,
			Verified: c.verified, Expected: c.expected}
		if b.cfg.Big > 0 {
			f.BigMBps = float64(bigBytes[p]) / 1e6 / bigSpent[p].Seconds()
		}
		if p != "direct" { // the process in the middle
			f.CPUusPerMsg = float64(cpu[p].Nanoseconds()) / 1e3 / float64(n)
			f.PeakRSSKiB = peakRSS(c.cmd.Process.Pid)
		}
		figs[p] = f
	}
	return figs, nil
}

// handshake does initialize, notifications/initialized and tools/list,
// and checks that both tools are announced.
func (c *chain) handshake() error {
	id := c.nextID
	c.expected++
	line, _, err := c.call([]byte(initializeRequest(id)))
	if err != nil {
		return err
	}
	if err := checkInitialize(line, id); err != nil {
		return err
	}
	c.verified++

	c.w.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	id++
	c.expected++
	line, _, err = c.call([]byte(reqPrefix + strconv.Itoa(id) + `,"method":"tools/list"}` + "\n"))
	if err != nil {
		return err
	}
	var list struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := decodeReply(line, id, &list); err != nil || len(list.Result.Tools) != 2 ||
		list.Result.Tools[0].Name != "echo" || list.Result.Tools[1].Name != "blob" {
		return fmt.Errorf("tools/list: bad reply %.200q (%v)", line, err)
	}
	c.verified++
	c.nextID = id + 1
	return nil
}

// initializeRequest is the driver's initialize, with its newline.
func initializeRequest(id int) string {
	return reqPrefix + strconv.Itoa(id) + `,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcpguard-bench","version":"1"}}}` + "\n"
}

// checkInitialize refuses anything but a result for id with a protocol
// version.
func checkInitialize(line []byte, id int) error {
	var init struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if err := decodeReply(line, id, &init); err != nil || init.Result.ProtocolVersion == "" {
		return fmt.Errorf("initialize: bad reply %.200q (%v)", line, err)
	}
	return nil
}

// decodeReply decodes a reply for id into v (its result), refusing an error
// reply or a different id.
func decodeReply(line []byte, id int, v any) error {
	var env struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &env); err != nil {
		return err
	}
	if env.JSONRPC != "2.0" || string(env.ID) != strconv.Itoa(id) {
		return fmt.Errorf("reply for id %s, want %d", env.ID, id)
	}
	if env.Error != nil || env.Result == nil {
		return fmt.Errorf("error reply %s", env.Error)
	}
	return json.Unmarshal(line, v)
}

// echoText is the text argument of echo call id: its id in ten digits and
// filler, 245 bytes, so the arguments object {"text":"..."} is 256 bytes.
func echoText(b []byte, id int) []byte {
	const filler = " --format=json --run=TestRelay/pipelined ./proxy/... ./message/... " +
		"path/to/some/file.go:123:45 (the quick brown fox jumps over the lazy dog) " +
		"0123456789abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ !#$%&'()*+,-./:;<=>?@[]^_{|}~ ok"
	var d [10]byte
	for i, v := len(d)-1, id; i >= 0; i, v = i-1, v/10 {
		d[i] = byte('0' + v%10)
	}
	b = append(b, d[:]...)
	return append(b, filler[:245-len(d)]...)
}

func echoRequest(b []byte, id int) []byte {
	b = append(b, reqPrefix...)
	b = itoa(b, id)
	b = append(b, echoMiddle...)
	b = echoText(b, id)
	return append(b, echoSuffix+"\n"...)
}

// echoReply is the server's reply to echo call id, byte for byte.
func echoReply(b []byte, id int) []byte {
	b = append(b, reqPrefix...)
	b = itoa(b, id)
	b = append(b, replyMiddle...)
	b = echoText(b, id)
	return append(b, replySuffix...)
}

// checkEcho verifies an echo reply by meaning, for replies that are not the
// server's bytes: it returns the reply's id once its content is that id's.
func checkEcho(line []byte) (int, error) {
	var env struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(line, &env); err != nil {
		return 0, fmt.Errorf("bad reply %.200q: %v", line, err)
	}
	id, err := strconv.Atoi(string(env.ID))
	if err != nil || id < 0 {
		return 0, fmt.Errorf("bad id in reply %.200q", line)
	}
	var res struct {
		Result struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := decodeReply(line, id, &res); err != nil {
		return 0, fmt.Errorf("reply %.200q: %v", line, err)
	}
	ct := res.Result.Content
	if len(ct) != 1 || ct[0].Type != "text" || ct[0].Text != string(echoText(nil, id)) {
		return 0, fmt.Errorf("reply for id %d has the wrong content: %.200q", id, line)
	}
	return id, nil
}

// latency makes count calls one at a time and appends their round trips
// to lat.
func (b *bench) latency(c *chain, count int, lat []time.Duration) ([]time.Duration, error) {
	for range count {
		id := c.nextID
		c.nextID++
		c.expected++
		c.req = echoRequest(c.req[:0], id)
		line, dt, err := c.call(c.req)
		if err != nil {
			return lat, err
		}
		if c.want = echoReply(c.want[:0], id); !bytes.Equal(line, c.want) {
			got, err := checkEcho(line)
			if err != nil {
				return lat, err
			}
			if got != id {
				return lat, fmt.Errorf("reply for id %d, want %d", got, id)
			}
		}
		c.verified++
		lat = append(lat, dt)
	}
	return lat, nil
}

// window is the number of calls in flight during the throughput run.
const window = 64

// throughput makes n calls with window in flight: a writer goroutine sends
// while it holds credit, flushing before it would wait; the reader checks
// each reply and returns its credit. Replies may come in any order.
func (b *bench) throughput(c *chain, n int) (time.Duration, error) {
	first := c.nextID
	c.nextID += n
	c.expected += n
	credit := make(chan struct{}, window)
	for range window {
		credit <- struct{}{}
	}
	stop := make(chan struct{})
	defer close(stop)
	werr := make(chan error, 1)
	t0 := time.Now()
	go func() {
		var req []byte
		for i := range n {
			select {
			case <-credit:
			default:
				if err := c.w.Flush(); err != nil {
					werr <- err
					return
				}
				select {
				case <-credit:
				case <-stop:
					werr <- nil
					return
				}
			}
			req = echoRequest(req[:0], first+i)
			c.w.Write(req)
		}
		werr <- c.w.Flush()
	}()

	seen := make([]bool, n)
	for got := range n {
		line, err := c.recv()
		if err != nil {
			return 0, err
		}
		// Replies come in order from every path here; anything else is
		// checked by meaning.
		id := first + got
		if c.want = echoReply(c.want[:0], id); !bytes.Equal(line, c.want) || seen[got] {
			if id, err = checkEcho(line); err != nil {
				return 0, err
			}
		}
		if id < first || id >= first+n || seen[id-first] {
			return 0, fmt.Errorf("unexpected or repeated reply for id %d", id)
		}
		seen[id-first] = true
		c.verified++
		credit <- struct{}{}
	}
	elapsed := time.Since(t0)
	return elapsed, <-werr
}

// large asks for one blob result and returns the size of the reply line
// and the time from request to reply.
func (b *bench) large(c *chain) (int, time.Duration, error) {
	id := c.nextID
	c.nextID++
	c.expected++
	c.req = append(itoa(append(c.req[:0], reqPrefix...), id), b.blobReq...)
	line, dt, err := c.call(c.req)
	if err != nil {
		return 0, 0, err
	}
	if err := b.checkBlob(line, id); err != nil {
		return 0, 0, err
	}
	c.verified++
	c.bigLine = len(line)
	return len(line), dt, nil
}

// checkBlob verifies a large reply: the server's bytes, or failing that
// the same text by meaning.
func (b *bench) checkBlob(line []byte, id int) error {
	head := reqPrefix + strconv.Itoa(id) + replyMiddle
	if rest, ok := bytes.CutPrefix(line, []byte(head)); ok {
		if body, ok := bytes.CutSuffix(rest, []byte(replySuffix)); ok && bytes.Equal(body, b.blob) {
			return nil
		}
	}
	var res struct {
		Result struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := decodeReply(line, id, &res); err != nil {
		return fmt.Errorf("reply of %d bytes for id %d: %v (%.200q)", len(line), id, err, line)
	}
	ct := res.Result.Content
	if len(ct) != 1 || ct[0].Type != "text" || ct[0].Text != string(blobText(b.cfg.BigBytes)) {
		return fmt.Errorf("reply of %d bytes for id %d does not carry the %d bytes of text sent", len(line), id, b.cfg.BigBytes)
	}
	return nil
}

// cpuTime is the CPU time a process's threads have run: the sum of
// /proc/PID/task/*/schedstat (nanoseconds), falling back to utime+stime
// of /proc/PID/stat (10 ms ticks) where schedstat is missing.
func cpuTime(pid int) time.Duration {
	dir := "/proc/" + strconv.Itoa(pid)
	if tasks, err := os.ReadDir(dir + "/task"); err == nil {
		var sum int64
		for _, t := range tasks {
			b, err := os.ReadFile(dir + "/task/" + t.Name() + "/schedstat")
			if err != nil {
				continue
			}
			f := strings.Fields(string(b))
			if len(f) > 0 {
				ns, _ := strconv.ParseInt(f[0], 10, 64)
				sum += ns
			}
		}
		if sum > 0 {
			return time.Duration(sum)
		}
	}
	b, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond
}

// peakRSS reads VmHWM (KiB) from /proc/PID/status.
func peakRSS(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// medianOf is the median of get over rs.
func medianOf[T any](rs []T, get func(T) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = get(r)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// median takes each figure's median over the rounds.
func median(rs []Figures) Figures {
	med := func(get func(Figures) float64) float64 { return medianOf(rs, get) }
	m := Figures{
		P50us:       med(func(f Figures) float64 { return f.P50us }),
		P90us:       med(func(f Figures) float64 { return f.P90us }),
		P99us:       med(func(f Figures) float64 { return f.P99us }),
		MsgsPerSec:  med(func(f Figures) float64 { return f.MsgsPerSec }),
		BigMBps:     med(func(f Figures) float64 { return f.BigMBps }),
		BigLine:     rs[0].BigLine,
		PeakRSSKiB:  int64(med(func(f Figures) float64 { return float64(f.PeakRSSKiB) })),
		CPUusPerMsg: med(func(f Figures) float64 { return f.CPUusPerMsg }),
	}
	for _, r := range rs {
		m.Verified += r.Verified
		m.Expected += r.Expected
	}
	return m
}

// ratios compares mcpguard with the relay (against the targets) and each
// proxy with the direct path.
func ratios(rs []PathResult) []Ratio {
	by := map[string]Figures{}
	for _, r := range rs {
		by[r.Path] = r.Figures
	}
	var out []Ratio
	add := func(name string, v float64, target string, met func(float64) bool) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		r := Ratio{Name: name, Value: v, Target: target}
		if met != nil {
			ok := met(v)
			r.Met = &ok
		}
		out = append(out, r)
	}
	atMost := func(t float64) func(float64) bool { return func(v float64) bool { return v <= t } }
	atLeast := func(t float64) func(float64) bool { return func(v float64) bool { return v >= t } }
	compare := func(a, b string, targets bool) {
		x, okx := by[a]
		y, oky := by[b]
		if !okx || !oky {
			return
		}
		pre := a + "/" + b + " "
		if targets {
			add(pre+"p50", x.P50us/y.P50us, "≤ 1.15", atMost(1.15))
		} else {
			add(pre+"p50", x.P50us/y.P50us, "", nil)
		}
		add(pre+"p90", x.P90us/y.P90us, "", nil)
		add(pre+"p99", x.P99us/y.P99us, "", nil)
		if targets {
			add(pre+"throughput", x.MsgsPerSec/y.MsgsPerSec, "≥ 0.85", atLeast(0.85))
			add(pre+"16MiB MB/s", x.BigMBps/y.BigMBps, "≥ 0.6", atLeast(0.6))
		} else {
			add(pre+"throughput", x.MsgsPerSec/y.MsgsPerSec, "", nil)
			add(pre+"16MiB MB/s", x.BigMBps/y.BigMBps, "", nil)
		}
	}
	compare("mcpguard", "relay", true)
	compare("mcpguard", "direct", false)
	compare("relay", "direct", false)
	compare("otel", "relay", true)
	compare("otel", "mcpguard", false)
	if g, ok := by["mcpguard"]; ok && g.BigLine > 0 && g.PeakRSSKiB > 0 {
		bound := (3*float64(g.BigLine) + 32<<20) / 1024
		add("mcpguard peak RSS / (3×message + 32 MiB)", float64(g.PeakRSSKiB)/bound, "≤ 1", atMost(1))
	}
	return out
}

func (r *Report) print(w io.Writer) {
	c := r.Config
	if c.Starts > 0 {
		policy := "the baseline"
		if c.Policy != "" {
			policy = c.Policy
		}
		fmt.Fprintf(w, "mcpguard start-up: %d starts of each path to the first initialize answer, idle RSS %v after it; medians; policy %s; server start %v of CPU; GOMAXPROCS=%d %s\n\n",
			c.Starts, idleWait, policy, c.ServerStart, c.GOMAXPROCS, c.GoVersion)
		printStarts(w, r.Starts)
	} else {
		r.printRounds(w)
	}
	fmt.Fprintln(w)
	for _, x := range r.Ratios {
		status := ""
		if x.Met != nil {
			status = "met"
			if !*x.Met {
				status = "MISSED"
			}
		}
		fmt.Fprintf(w, "%-42s %6.2f  %-7s %s\n", x.Name, x.Value, x.Target, status)
	}
}

func (r *Report) printRounds(w io.Writer) {
	c := r.Config
	relayKind := "whole-line"
	if c.StreamRelay {
		relayKind = "streaming"
	}
	fmt.Fprintf(w, "mcpguard relay benchmark: n=%d calls (256-byte arguments), %d × %d-byte results, median of %d rounds; %s relay; GOMAXPROCS=%d %s\n\n",
		c.N, c.Big, c.BigBytes, c.Rounds, relayKind, c.GOMAXPROCS, c.GoVersion)
	fmt.Fprintf(w, "%-9s %9s %9s %9s %12s %11s %13s %13s %10s\n",
		"path", "p50 µs", "p90 µs", "p99 µs", "calls/s @64", "16MiB MB/s", "peak RSS MiB", "CPU µs/call", "verified")
	for _, p := range r.Results {
		rss, cpu := "-", "-"
		if p.Path != "direct" {
			rss, cpu = fmt.Sprintf("%.1f", float64(p.PeakRSSKiB)/1024), fmt.Sprintf("%.2f", p.CPUusPerMsg)
		}
		fmt.Fprintf(w, "%-9s %9.1f %9.1f %9.1f %12.0f %11.0f %13s %13s %10s\n",
			p.Path, p.P50us, p.P90us, p.P99us, p.MsgsPerSec, p.BigMBps, rss, cpu, fmt.Sprintf("%d/%d", p.Verified, p.Expected))
	}
}

// startOTLPSink serves OTLP/HTTP on loopback for the otel path: it reads
// each export and answers 200 with an empty response (a valid empty
// Export*ServiceResponse), as a healthy collector does.
func startOTLPSink() (net.Listener, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})}
	go srv.Serve(l)
	return l, nil
}

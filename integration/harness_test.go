// Package integration tests the built mcpguard binary end to end: the
// official Go SDK client (github.com/modelcontextprotocol/go-sdk), or raw
// pipes for what the SDK cannot send, talking through mcpguard to real MCP
// servers from npm and to testserver, a server of our own that misbehaves
// on purpose. Tests named *Direct* run the same scenario without mcpguard,
// which checks the test itself and gives the reference that the guarded
// run must equal.
package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpguard/mcpguard/integration/internal/builds"
)

var (
	moduleRoot string
	binDir     string // a temporary directory, removed after the tests
	buildDir   string // where the tests build their binaries (builds.Dir)

	mcpguardBin      string // path of the built mcpguard binary
	mcpguardBuildErr error  // why it could not be built (tests that need it fail)

	testserverBin string

	nodeBin string // node_modules/.bin
	npmErr  error  // why the npm servers are missing
)

func TestMain(m *testing.M) {
	os.Exit(setup(m))
}

// waitingTestsPerCore is how many parallel tests run at once per core
// unless -parallel says otherwise. An integration test spends most of
// its time waiting, not computing: for node to load a server or an
// agent, for a server to exit after its input closes (seconds of grace
// before mcpguard or the SDK sends SIGTERM). With go test's default of
// one test per core, those waits hold the slots and leave the cores
// idle.
const waitingTestsPerCore = 2

func setParallel() {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(waitingTestsPerCore*runtime.GOMAXPROCS(0)))
	}
}

func setup(m *testing.M) int {
	setParallel()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		fmt.Fprintf(os.Stderr, "integration: cannot find the module root: %v\n", err)
		return 1
	}
	moduleRoot = filepath.Dir(string(bytes.TrimSpace(out)))
	binDir, err = os.MkdirTemp("", "mcpguard-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return 1
	}
	defer os.RemoveAll(binDir)
	if buildDir, err = builds.Dir(moduleRoot); err != nil {
		buildDir = binDir
	}

	testserverBin = filepath.Join(buildDir, "testserver")
	if out, err := goBuild(testserverBin, "./integration/testserver"); err != nil {
		fmt.Fprintf(os.Stderr, "integration: building testserver: %v\n%s", err, out)
		return 1
	}
	// MCPGUARD_BIN runs the tests against a binary built elsewhere (another
	// revision, say); by default the module's own main package is built.
	if bin := os.Getenv("MCPGUARD_BIN"); bin != "" {
		mcpguardBin = bin
		fmt.Fprintf(os.Stderr, "integration: using MCPGUARD_BIN=%s\n", bin)
	} else {
		mcpguardBin = filepath.Join(buildDir, "mcpguard")
		if out, err := goBuild(mcpguardBin, "."); err != nil {
			mcpguardBuildErr = fmt.Errorf("go build -o mcpguard . failed: %v\n%s", err, out)
		}
	}

	nodeBin = filepath.Join(moduleRoot, "integration", "node_modules", ".bin")
	for _, name := range []string{"mcp-server-everything", "mcp-server-filesystem", "mcp-server-memory"} {
		if _, err := os.Stat(filepath.Join(nodeBin, name)); err != nil {
			npmErr = fmt.Errorf("%s is missing (%v): run npm ci --prefix integration in %s", name, err, moduleRoot)
			break
		}
	}
	return m.Run()
}

func goBuild(out, pkg string) ([]byte, error) {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = moduleRoot
	return cmd.CombinedOutput()
}

// requireGuard fails (never skips) a test that needs the mcpguard binary.
func requireGuard(t testing.TB) {
	t.Helper()
	if mcpguardBuildErr != nil {
		t.Fatalf("mcpguard binary not available: %v", mcpguardBuildErr)
	}
}

// npmServer returns the path of a reference server from node_modules.
func npmServer(t testing.TB, name string) string {
	t.Helper()
	if npmErr != nil {
		t.Fatalf("reference MCP servers not installed: %v", npmErr)
	}
	return filepath.Join(nodeBin, name)
}

// guardOpts are mcpguard's own arguments for one run.
type guardOpts struct {
	Policy string   // --policy FILE, if set
	Log    string   // --log FILE; default: a file in t.TempDir()
	Args   []string // more arguments before "--"
	Env    []string // more environment (NAME=value) for mcpguard and so the server
}

// guardArgv is the full command line that runs argv behind mcpguard.
func guardArgv(t testing.TB, o *guardOpts, argv ...string) []string {
	t.Helper()
	requireGuard(t)
	if o == nil {
		o = &guardOpts{}
	}
	logFile := o.Log
	if logFile == "" {
		logFile = filepath.Join(t.TempDir(), "mcpguard.log")
	}
	// Every guarded connection is an agent session of its own: mcpguard's
	// parent, the agent whose session it shares (flows:), is this test
	// binary for every test, and the labels one test's calls give must
	// not judge another's. A directory of its own keeps its labels apart.
	cmd := append([]string{"env", "XDG_RUNTIME_DIR=" + privateDir(t)}, o.Env...)
	cmd = append(cmd, mcpguardBin, "--log", logFile)
	if o.Policy != "" {
		cmd = append(cmd, "--policy", o.Policy)
	}
	cmd = append(cmd, o.Args...)
	cmd = append(cmd, "--")
	return append(cmd, argv...)
}

// atOnce starts subtests at once, each from a goroutine of its own, in
// the parent's parallel slot; Wait returns when all have ended, and must
// be called before the parent returns. Parallel subtests (t.Parallel)
// ask for a slot only once their parent runs, so they wait behind every
// parallel test of the package still queued: the package's longest
// tests would start last and make its tail.
type atOnce struct {
	t  *testing.T
	wg sync.WaitGroup
}

func (a *atOnce) Run(name string, f func(t *testing.T)) {
	a.wg.Go(func() { a.t.Run(name, f) })
}

func (a *atOnce) Wait() { a.wg.Wait() }

// privateDir is a new directory only its owner can enter.
func privateDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// recorder keeps what the test client received from the server besides
// results: progress and log notifications, and the server's requests.
type recorder struct {
	mu       sync.Mutex
	progress map[string][]float64 // by progress token
	logs     []*mcp.LoggingMessageParams
	sampling []*mcp.CreateMessageParams
	elicit   []*mcp.ElicitParams
	changed  chan struct{} // closed and replaced by each record
}

func newRecorder() *recorder {
	return &recorder{progress: map[string][]float64{}, changed: make(chan struct{})}
}

// record runs f, which adds to r, under r's lock, and wakes waitFor.
func (r *recorder) record(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f()
	close(r.changed)
	r.changed = make(chan struct{})
}

// waitFor returns once cond, run under r's lock, holds. The client hands
// notifications to its handlers on a goroutine of their own, in order but
// after the reply that follows them may have been returned: this is how a
// test knows the handler has seen them. It fails the test after 20s.
func (r *recorder) waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		r.mu.Lock()
		ok, changed := cond(), r.changed
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("the client never received %s", what)
		}
	}
}

var recorders sync.Map // *mcp.ClientSession → *recorder

// recorderOf returns what the session's client recorded.
func recorderOf(cs *mcp.ClientSession) *recorder {
	r, _ := recorders.Load(cs)
	return r.(*recorder)
}

// testRoots are the roots the test client announces.
var testRoots = []*mcp.Root{
	{URI: "file:///tmp/mcpguard-root-a", Name: "root-a"},
	{URI: "file:///tmp/mcpguard-root-b", Name: "root-b"},
}

const sampledText = "hello from the test client"

// clientOpts configure the test client.
type clientOpts struct {
	Roots []*mcp.Root // the roots it announces; nil: testRoots
}

func newClient(rec *recorder, co *clientOpts) *mcp.Client {
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpguard-integration", Version: "1.0.0"}, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			rec.record(func() { rec.sampling = append(rec.sampling, req.Params) })
			return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: sampledText}, Model: "test-model", Role: "assistant"}, nil
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			rec.record(func() { rec.elicit = append(rec.elicit, req.Params) })
			if strings.Contains(req.Params.Message, "confirm") { // testserver's
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			tok := fmt.Sprint(req.Params.ProgressToken)
			rec.record(func() { rec.progress[tok] = append(rec.progress[tok], req.Params.Progress) })
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			rec.record(func() { rec.logs = append(rec.logs, req.Params) })
		},
	})
	roots := testRoots
	if co != nil && co.Roots != nil {
		roots = co.Roots
	}
	c.AddRoots(roots...)
	return c
}

// connect starts argv as an MCP server over stdio and connects the test
// client to it. The session is closed when the test ends.
func connect(t testing.TB, co *clientOpts, argv ...string) *mcp.ClientSession {
	t.Helper()
	rec := newRecorder()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = &testWriter{t: t, prefix: filepath.Base(argv[0]) + " stderr: "}
	cs, err := newClient(rec, co).Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connect %q: %v", argv, err)
	}
	recorders.Store(cs, rec)
	t.Cleanup(func() {
		cs.Close()
		recorders.Delete(cs)
	})
	return cs
}

// connectDirect connects the test client to the server argv, no mcpguard.
func connectDirect(t testing.TB, argv ...string) *mcp.ClientSession {
	t.Helper()
	return connect(t, nil, argv...)
}

// connectDirectWith is connectDirect with client options.
func connectDirectWith(t testing.TB, co *clientOpts, argv ...string) *mcp.ClientSession {
	t.Helper()
	return connect(t, co, argv...)
}

// connectGuarded connects the test client to the server argv through mcpguard.
func connectGuarded(t testing.TB, o *guardOpts, argv ...string) *mcp.ClientSession {
	t.Helper()
	return connect(t, nil, guardArgv(t, o, argv...)...)
}

// connectGuardedWith is connectGuarded with client options.
func connectGuardedWith(t testing.TB, co *clientOpts, o *guardOpts, argv ...string) *mcp.ClientSession {
	t.Helper()
	return connect(t, co, guardArgv(t, o, argv...)...)
}

// testWriter forwards a child's stderr to the test log, line by line.
type testWriter struct {
	t      testing.TB
	prefix string
	mu     sync.Mutex
	buf    []byte
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 || len(w.buf) > 1<<16 {
			break
		}
		line := string(w.buf[:i])
		w.buf = w.buf[i+1:]
		func() {
			defer func() { recover() }() // the test may have ended
			w.t.Logf("%s%q", w.prefix, truncate(line, 400))
		}()
	}
	if len(w.buf) > 1<<16 {
		w.buf = w.buf[:0]
	}
	return len(p), nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("...(%d bytes)", len(s))
}

// toJSON is v as generic JSON (maps, slices, float64, ...), for comparing.
func toJSON(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	return out
}

func mustJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return string(b)
}

// callText calls a tool and returns the text of its first content.
func callText(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	if args == nil {
		args = map[string]any{} // nil would be sent as "arguments":null, which is refused
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("call %s: tool error: %s", name, mustJSON(res))
	}
	if len(res.Content) == 0 {
		t.Fatalf("call %s: no content: %s", name, mustJSON(res))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("call %s: first content is %T", name, res.Content[0])
	}
	return tc.Text
}

// hugeLine is the line testserver's HugeText repeats.
const hugeLine = "0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ !#%&()*+,-./:;<=>?@[]^_{|}~\n"

// hugeText is testserver's HugeText: lines of printable ASCII, n bytes.
func hugeText(n int) string {
	var b strings.Builder
	b.Grow(n)
	for b.Len()+len(hugeLine) <= n {
		b.WriteString(hugeLine)
	}
	b.WriteString(hugeLine[:n-b.Len()])
	return b.String()
}

// runNodeClient runs integration/SCRIPT (a client on the official
// TypeScript SDK from integration/node_modules) with spec as its JSON
// argument and returns what it printed on stdout; its stderr goes to the
// test log. It fails the test when node or the npm fixtures are missing,
// or when the script fails.
func runNodeClient(t *testing.T, script string, spec any) []byte {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed for the TypeScript SDK client: %v", err)
	}
	npmServer(t, "mcp-server-memory") // fails the test when node_modules is missing
	arg, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(moduleRoot, "integration", script), string(arg))
	cmd.Dir = filepath.Join(moduleRoot, "integration")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &testWriter{t: t, prefix: script + " stderr: "}
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, stdout.String())
	}
	return stdout.Bytes()
}

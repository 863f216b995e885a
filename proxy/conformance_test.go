package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/proxy/eventlog"
)

var update = flag.Bool("update", false, "rewrite the to-server, to-agent and log sections of the relay conformance cases")

// TestRelayConformance runs the relay cases of testdata/conformance: the
// relay between a scripted agent and a scripted server, both in the test,
// on a synctest clock. Each file is prose, then sections:
//
//	-- policy.yaml --  the policy (none: the embedded baseline)
//	-- reload.yaml --  the policy a reload step puts in force
//	-- agent --        what the agent sends, one line each
//	-- server --       what the server sends, one line each
//	-- to-server --    the lines the server must get, in order
//	-- to-agent --     the lines the agent must get, in order
//	-- log --          the decision log, one event a line (time, pid,
//	                   child_pid and duration_ms left out); each
//	                   direction's events in order
//
// In the agent and server sections a line that starts with { or [ is
// sent as it is, JSON or not; any other line is a step:
//
//	send TEXT  send TEXT as it is (a line that is not JSON at all)
//	wait TEXT  send nothing more until this side has received a line
//	           containing TEXT (after the line the last wait matched)
//	exit N     (server) exit with status N: the relay sees the exit,
//	           then the output close
//	reload     (agent) SIGHUP: the relay reloads reload.yaml; the script
//	           goes on once the reload has put it in force
//	sleep D    (agent) let the duration D pass on the bubble's clock
//
// Blank lines and lines starting with # are skipped. The ids of the
// requests mcpguard sends itself (tools/list to the server, approval
// prompts to the agent) hold a random nonce: cases write it NONCE
// (mcpguard-tools-list-NONCE-1, mcpguard-approval-NONCE-1), in what
// either side sends and in what each side must get. The agent closes
// its input after its last step; the server, after its last step, reads
// until its input closes and exits 0 (or with 128+N at signal N).
// Timeouts and grace periods pass on the bubble's clock, at once when
// nothing else can happen, and what each side got is compared only once
// the relay has returned: "nothing more arrived" is a fact, not a guess.
//
// go test ./proxy -run TestRelayConformance -update rewrites the
// to-server, to-agent and log sections from what the relay did; read
// the diff before keeping it.
func TestRelayConformance(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "conformance", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases in testdata/conformance: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			runConformance(t, file)
		})
	}
}

func runConformance(t *testing.T, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string][]byte{}
	for _, f := range ar.Files {
		if _, dup := sections[f.Name]; dup {
			t.Fatalf("section %q twice", f.Name)
		}
		sections[f.Name] = f.Data
	}
	need := []string{"agent", "server"}
	if !*update {
		need = append(need, "to-server", "to-agent", "log")
	}
	for _, name := range need {
		if _, ok := sections[name]; !ok {
			t.Fatalf("no %q section", name)
		}
	}
	pol := policy.Baseline()
	if y, ok := sections["policy.yaml"]; ok {
		if pol, err = policy.Load("policy.yaml", y, func(string) (string, bool) { return "", false }); err != nil {
			t.Fatal(err)
		}
	}

	var reloadPol *policy.Policy
	if y, ok := sections["reload.yaml"]; ok {
		if reloadPol, err = policy.Load("reload.yaml", y, func(string) (string, bool) { return "", false }); err != nil {
			t.Fatal(err)
		}
	}

	var got conformanceRun
	synctest.Test(t, func(t *testing.T) {
		got = relayScripts(t, pol, reloadPol, steps(t, "agent", sections["agent"]), steps(t, "server", sections["server"]))
	})

	if *update {
		for i, f := range ar.Files {
			switch f.Name {
			case "to-server", "to-agent", "log":
				ar.Files[i].Data = nil
			}
		}
		set := func(name string, lines []string) {
			data := []byte(strings.Join(lines, "\n"))
			if len(lines) > 0 {
				data = append(data, '\n')
			}
			for i := range ar.Files {
				if ar.Files[i].Name == name {
					ar.Files[i].Data = data
					return
				}
			}
			ar.Files = append(ar.Files, txtar.File{Name: name, Data: data})
		}
		set("to-server", got.toServer)
		set("to-agent", got.toAgent)
		set("log", got.log)
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	compareLines(t, "the server got", got.toServer, lines(sections["to-server"]))
	compareLines(t, "the agent got", got.toAgent, lines(sections["to-agent"]))
	want := lines(sections["log"])
	for _, dir := range []string{"", "ingress", "egress"} {
		compareLines(t, "the "+cmp(dir, "undirected")+" log events are", direction(got.log, dir), direction(want, dir))
	}
}

func cmp(s, or string) string {
	if s == "" {
		return or
	}
	return s
}

// step is one line of a side's script: a line to send, text to wait for,
// or (stop) an exit with a status.
type step struct {
	send   []byte
	wait   string
	stop   bool
	exit   int
	reload bool
	sleep  time.Duration
}

func steps(t *testing.T, side string, data []byte) []step {
	var out []step
	for _, l := range lines(data) {
		switch {
		case strings.HasPrefix(l, "wait "):
			out = append(out, step{wait: strings.TrimPrefix(l, "wait ")})
		case strings.HasPrefix(l, "exit ") && side == "server":
			n, err := strconv.Atoi(strings.TrimPrefix(l, "exit "))
			if err != nil {
				t.Fatalf("%s: %q", side, l)
			}
			out = append(out, step{exit: n, stop: true})
		case l == "reload" && side == "agent":
			out = append(out, step{reload: true})
		case strings.HasPrefix(l, "sleep ") && side == "agent":
			d, err := time.ParseDuration(strings.TrimPrefix(l, "sleep "))
			if err != nil || d <= 0 {
				t.Fatalf("%s: %q", side, l)
			}
			out = append(out, step{sleep: d})
		case strings.HasPrefix(l, "send "):
			out = append(out, step{send: []byte(strings.TrimPrefix(l, "send "))})
		case strings.HasPrefix(l, "{") || strings.HasPrefix(l, "["):
			out = append(out, step{send: []byte(l)}) // malformed JSON is sent as it is too
		default:
			t.Fatalf("%s: a step that is neither a message, send, wait nor exit: %q", side, l)
		}
	}
	return out
}

// lines splits a section into its lines, without blank lines and
// comments.
func lines(data []byte) []string {
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// conformanceRun is what each side got, and the log.
type conformanceRun struct {
	toServer, toAgent, log []string
}

// relayScripts runs the relay between the two scripts; it must run in a
// synctest bubble.
func relayScripts(t *testing.T, pol, reloadPol *policy.Policy, agentSteps, serverSteps []step) conformanceRun {
	agentInR, agentInW := io.Pipe()
	agentOutR, agentOutW := io.Pipe()
	serverInR, serverInW := io.Pipe()
	serverOutR, serverOutW := io.Pipe()

	seen := &nonces{}
	agent := newReceiver(agentOutR, seen)
	server := newReceiver(serverInR, seen)
	fake := &scriptedServer{t: t, out: serverOutW, in: server, exited: make(chan struct{})}
	d := &downstream{stdin: newLineWriter(serverInW), stdout: serverOutR, exited: fake.exited, stderrDone: make(chan struct{}), kill: fake.signal}
	close(d.stderrDone)
	fake.d = d

	logR, logW := io.Pipe()
	log := newReceiver(logR, seen)
	cfg := Config{
		Argv: []string{"conformance-server"}, Policy: pol, Log: eventlog.New(logW, "conformance", eventlog.Budget{}),
		Stdin: agentInR, Stdout: agentOutW, Stderr: io.Discard,
		Reload: func() (*policy.Policy, error) {
			if reloadPol == nil {
				return nil, errors.New("the case has no reload.yaml section")
			}
			return reloadPol, nil
		},
	}.withDefaults()
	reloads, reloaded := make(chan struct{}), make(chan struct{}, 1)

	go func() {
		for _, s := range agentSteps {
			switch {
			case s.reload:
				reloads <- struct{}{}
				select {
				case <-reloaded:
				case <-time.After(10 * time.Second):
					t.Errorf("the reload put no policy in force")
				}
			case s.sleep > 0:
				time.Sleep(s.sleep)
			case s.wait != "":
				if !agent.waitFor(s.wait) {
					t.Errorf("the agent never received a line containing %q", s.wait)
				}
			default:
				agentInW.Write(append(seen.fill(slices.Clip(s.send)), '\n'))
			}
		}
		agentInW.Close()
	}()
	go fake.run(serverSteps)

	serve(cfg, d, reloads, func(*policy.Policy) { reloaded <- struct{}{} })
	close(reloads)
	agentOutW.Close()
	logW.Close()
	agentInR.CloseWithError(io.ErrClosedPipe) // an agent script still waiting ends
	synctest.Wait()
	if !fake.done() {
		t.Errorf("the server script had not ended when the relay returned")
	}
	var logged []string
	for _, l := range log.all() {
		logged = append(logged, stableEvent(t, l))
	}
	return conformanceRun{toServer: server.all(), toAgent: agent.all(), log: logged}
}

// nonceID matches the start of the id of one of mcpguard's own requests
// (tools/list, approval prompts) with its nonce.
var nonceID = regexp.MustCompile("mcpguard-(tools-list|approval)-[0-9a-f]{32}-")

// withoutNonce writes the nonce of mcpguard's ids as NONCE.
func withoutNonce(s string) string {
	return nonceID.ReplaceAllString(s, "mcpguard-${1}-NONCE-")
}

// nonces are the prefixes of mcpguard's ids, nonce included, as either
// side received them, so that a script can write them back.
type nonces struct {
	mu       sync.Mutex
	prefixes []string
}

func (n *nonces) learn(line string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, p := range nonceID.FindAllString(line, -1) {
		if !slices.Contains(n.prefixes, p) {
			n.prefixes = append(n.prefixes, p)
		}
	}
}

// fill writes the nonces seen so far into a line a script sends.
func (n *nonces) fill(line []byte) []byte {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, p := range n.prefixes {
		kind := nonceID.FindStringSubmatch(p)[1]
		line = bytes.ReplaceAll(line, []byte("mcpguard-"+kind+"-NONCE-"), []byte(p))
	}
	return line
}

// stableEvent is a log line without what changes from run to run, its
// members sorted.
func stableEvent(t *testing.T, line string) string {
	var ev map[string]any
	if err := json.Unmarshal([]byte(line), &ev); err != nil {
		t.Fatalf("log line %q: %v", line, err)
	}
	for _, k := range []string{"time", "pid", "child_pid", "duration_ms"} {
		delete(ev, k)
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// direction keeps the events of one direction ("" for none).
func direction(events []string, dir string) []string {
	var out []string
	for _, e := range events {
		var ev struct{ Direction string }
		json.Unmarshal([]byte(e), &ev)
		if ev.Direction == dir {
			out = append(out, e)
		}
	}
	return out
}

func compareLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	t.Errorf("%s:\n%s\nwant:\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
}

// receiver collects the lines one side reads, and lets its script wait
// for one.
type receiver struct {
	mu      sync.Mutex
	lines   []string
	matched int           // lines before this one are spent by waits
	changed chan struct{} // closed and replaced at each line and at EOF
	eof     bool
	seen    *nonces // of mcpguard's ids, learnt from every line
}

func newReceiver(r io.Reader, seen *nonces) *receiver {
	rc := &receiver{changed: make(chan struct{}), seen: seen}
	go func() {
		br := bufio.NewReaderSize(r, 1<<16)
		for {
			line, err := br.ReadString('\n')
			rc.mu.Lock()
			if line != "" {
				rc.seen.learn(line)
				rc.lines = append(rc.lines, withoutNonce(strings.TrimSuffix(line, "\n")))
			}
			rc.eof = err != nil
			close(rc.changed)
			rc.changed = make(chan struct{})
			rc.mu.Unlock()
			if err != nil {
				io.Copy(io.Discard, r)
				return
			}
		}
	}()
	return rc
}

// waitFor returns once a line containing text has arrived after the last
// match, false if the stream ended or ten seconds of the bubble's clock
// passed first.
func (rc *receiver) waitFor(text string) bool {
	timeout := time.After(10 * time.Second)
	for {
		rc.mu.Lock()
		for i := rc.matched; i < len(rc.lines); i++ {
			if strings.Contains(rc.lines[i], text) {
				rc.matched = i + 1
				rc.mu.Unlock()
				return true
			}
		}
		eof, changed := rc.eof, rc.changed
		rc.mu.Unlock()
		if eof {
			return false
		}
		select {
		case <-changed:
		case <-timeout:
			return false
		}
	}
}

// untilEOF returns once the stream has ended.
func (rc *receiver) untilEOF() {
	for {
		rc.mu.Lock()
		eof, changed := rc.eof, rc.changed
		rc.mu.Unlock()
		if eof {
			return
		}
		<-changed
	}
}

func (rc *receiver) all() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.lines)
}

// scriptedServer plays the server's script as a downstream.
type scriptedServer struct {
	t      *testing.T
	out    *io.PipeWriter
	in     *receiver
	d      *downstream
	exited chan struct{}
	once   sync.Once
	mu     sync.Mutex
	ended  bool
}

func (s *scriptedServer) run(script []step) {
	defer func() {
		s.mu.Lock()
		s.ended = true
		s.mu.Unlock()
	}()
	for _, st := range script {
		select {
		case <-s.exited:
			return // killed
		default:
		}
		switch {
		case st.stop:
			s.exit(st.exit)
			return
		case st.wait != "":
			if !s.in.waitFor(st.wait) {
				s.t.Errorf("the server never received a line containing %q", st.wait)
				s.exit(0)
				return
			}
		default:
			line := s.in.seen.fill(slices.Clip(st.send))
			if _, err := s.out.Write(append(line, '\n')); err != nil {
				return
			}
		}
	}
	s.in.untilEOF()
	s.exit(0)
}

// exit ends the server with status. The relay sees the exit first and
// the output close after, always, so what it tells the agent does not
// depend on which goroutine ran first.
func (s *scriptedServer) exit(status int) {
	s.once.Do(func() {
		s.d.status = status
		close(s.exited)
		synctest.Wait()
		s.out.Close()
	})
}

// signal is the server's process group getting sig: it dies of it.
func (s *scriptedServer) signal(sig syscall.Signal) { s.exit(128 + int(sig)) }

func (s *scriptedServer) done() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}

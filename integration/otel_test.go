package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// OpenTelemetry export (mcpguard --otel) against a real OpenTelemetry
// Collector: integration/otelcol, built from the official collector
// modules (an OTLP receiver and the contrib file exporter), in its own
// module so that its dependencies stay out of mcpguard's go.mod. It is
// built once per test binary, and only when a test here needs it.

var (
	otelcolOnce sync.Once
	otelcolBin  string
	otelcolErr  error
)

// otelcol returns the built collector, or fails the test. It is built in
// the user's cache directory rather than the tests' temporary one: go
// build skips the link, the bulk of a warm build, when the binary there is
// up to date.
func otelcol(t *testing.T) string {
	t.Helper()
	otelcolOnce.Do(func() {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = binDir
		}
		otelcolBin = filepath.Join(cache, "mcpguard-tests", "otelcol")
		began := time.Now()
		cmd := exec.Command("go", "build", "-o", otelcolBin, ".")
		cmd.Dir = filepath.Join(moduleRoot, "integration", "otelcol")
		if out, err := cmd.CombinedOutput(); err != nil {
			otelcolErr = fmt.Errorf("go build integration/otelcol: %v\n%s", err, out)
			return
		}
		fmt.Fprintf(os.Stderr, "integration: built the OpenTelemetry Collector in %v\n", time.Since(began).Round(time.Millisecond))
	})
	if otelcolErr != nil {
		t.Fatal(otelcolErr)
	}
	return otelcolBin
}

// collector is a running collector that writes what it receives, as OTLP
// JSON lines, to out.
type collector struct {
	http, grpc string // host:port of the OTLP receivers
	out        string
	cmd        *exec.Cmd
	stderr     *lockedBuffer
	stopped    bool
}

// freePort returns a loopback port nothing listens on (it was free a
// moment ago).
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func startCollector(t *testing.T) *collector {
	t.Helper()
	bin := otelcol(t)
	dir := t.TempDir()
	c := &collector{http: freePort(t), grpc: freePort(t), out: filepath.Join(dir, "otlp.jsonl"), stderr: &lockedBuffer{}}
	config := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
      grpc:
        endpoint: %s
exporters:
  file:
    path: %s
    flush_interval: 50ms
service:
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file]
    metrics:
      receivers: [otlp]
      exporters: [file]
`, c.http, c.grpc, c.out)
	cfgFile := filepath.Join(dir, "collector.yaml")
	if err := os.WriteFile(cfgFile, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	c.cmd = exec.Command(bin, "--config", cfgFile)
	c.cmd.Stderr = c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.stop(t)
		if t.Failed() {
			t.Logf("collector stderr:\n%s", truncate(c.stderr.String(), 4000))
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for _, addr := range []string{c.http, c.grpc} {
		for {
			conn, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				conn.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the collector does not listen on %s: %v\n%s", addr, err, c.stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return c
}

// stop stops the collector gracefully, so that the file exporter has
// written everything.
func (c *collector) stop(t *testing.T) {
	if c.stopped {
		return
	}
	c.stopped = true
	c.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		c.cmd.Process.Kill()
		<-done
		t.Errorf("the collector did not stop on SIGTERM")
	}
}

// otlpData is what the collector wrote, read back.
type otlpData struct {
	raw     []byte
	spans   []otlpSpan
	metrics map[string][]map[string]string // name -> attributes of each data point
}

type otlpSpan struct {
	Name     string
	Resource map[string]string
	Attrs    map[string]string
	Events   []string
	Status   int
}

// otlpAttrs flattens OTLP JSON attributes to strings.
func otlpAttrs(list []any) map[string]string {
	out := map[string]string{}
	for _, a := range list {
		kv, _ := a.(map[string]any)
		key, _ := kv["key"].(string)
		val, _ := kv["value"].(map[string]any)
		for _, v := range val {
			out[key] = fmt.Sprint(v)
		}
	}
	return out
}

func asList(v any) []any { l, _ := v.([]any); return l }

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

// readOTLP reads what the collector's file exporter wrote; running:
// the collector may be writing, and a last line without its newline is
// left for the next read.
func readOTLP(t *testing.T, file string, running bool) *otlpData {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if running {
		raw = raw[:bytes.LastIndexByte(raw, '\n')+1]
	}
	d := &otlpData{raw: raw, metrics: map[string][]map[string]string{}}
	for _, line := range bytes.Split(raw, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var doc map[string]any
		if err := json.Unmarshal(line, &doc); err != nil {
			t.Fatalf("the collector wrote a line that is not JSON: %v: %s", err, truncate(string(line), 300))
		}
		for _, rs := range asList(doc["resourceSpans"]) {
			res := otlpAttrs(asList(asMap(asMap(rs)["resource"])["attributes"]))
			for _, ss := range asList(asMap(rs)["scopeSpans"]) {
				for _, s := range asList(asMap(ss)["spans"]) {
					sp := asMap(s)
					span := otlpSpan{Resource: res, Attrs: otlpAttrs(asList(sp["attributes"]))}
					span.Name, _ = sp["name"].(string)
					if code, ok := asMap(sp["status"])["code"].(float64); ok {
						span.Status = int(code)
					}
					for _, ev := range asList(sp["events"]) {
						name, _ := asMap(ev)["name"].(string)
						span.Events = append(span.Events, name)
					}
					d.spans = append(d.spans, span)
				}
			}
		}
		for _, rm := range asList(doc["resourceMetrics"]) {
			for _, sm := range asList(asMap(rm)["scopeMetrics"]) {
				for _, m := range asList(asMap(sm)["metrics"]) {
					mm := asMap(m)
					name, _ := mm["name"].(string)
					for _, kind := range []string{"sum", "histogram", "gauge"} {
						for _, dp := range asList(asMap(mm[kind])["dataPoints"]) {
							attrs := otlpAttrs(asList(asMap(dp)["attributes"]))
							if v, ok := asMap(dp)["asInt"]; ok {
								attrs["value"] = fmt.Sprint(v)
							}
							if v, ok := asMap(dp)["count"]; ok {
								attrs["count"] = fmt.Sprint(v)
							}
							d.metrics[name] = append(d.metrics[name], attrs)
						}
					}
				}
			}
		}
	}
	return d
}

// span returns the spans whose attributes include every pair of want.
func (d *otlpData) find(want map[string]string) []otlpSpan {
	var out []otlpSpan
next:
	for _, s := range d.spans {
		for k, v := range want {
			if s.Attrs[k] != v {
				continue next
			}
		}
		out = append(out, s)
	}
	return out
}

// otelEnv is the environment prefix that runs mcpguard with export to c.
func otelEnv(vars ...string) []string {
	env, err := exec.LookPath("env")
	if err != nil {
		panic(err)
	}
	return append([]string{env}, vars...)
}

// Canary values planted in arguments and results: none may reach the
// collector, in any form.
const (
	canaryArg      = "Canary7f3a9ArgumentValue"
	canaryRejected = "Canary51c2eRejectedValue"
	canaryResult   = "Canary88b1dResultValue"
)

func TestOTelExportToCollector(t *testing.T) {
	t.Parallel()
	requireGuard(t)
	col := startCollector(t)
	dir := t.TempDir()
	pol := filepath.Join(dir, "otel.yaml")
	if err := os.WriteFile(pol, []byte(`version: 1
server: otel-test
tools:
  ask_roots: deny
  slow: ask
ingress:
  - tools: [echo]
    fields: [text]
    check: deny_pattern
    pattern: 'Canary51c2e'
    code: INPUT_REJECTED_PLANTED
`), 0o600); err != nil {
		t.Fatal(err)
	}

	// One mcpguard over OTLP/HTTP (the default protocol), one over gRPC,
	// each with its resource attributes from OTEL_RESOURCE_ATTRIBUTES.
	for _, proto := range []string{"http/protobuf", "grpc"} {
		endpoint := "http://" + col.http
		if proto == "grpc" {
			endpoint = "http://" + col.grpc
		}
		argv := append(otelEnv("OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL="+proto,
			"OTEL_RESOURCE_ATTRIBUTES=deployment.environment=ci,mcpguard.transport="+proto),
			guardArgv(t, &guardOpts{Policy: pol, Args: []string{"--otel"}}, testserverBin)...)
		p := startRaw(t, argv...)
		p.guarded = true
		p.initialize()
		if got := p.callOK(1, "echo", map[string]any{"text": canaryArg}); got != canaryArg {
			t.Fatalf("echo = %q", got)
		}
		if got := p.callOK(2, "echo", map[string]any{"text": canaryResult}); got != canaryResult {
			t.Fatalf("echo = %q", got)
		}
		p.callOK(3, "hostile", nil)
		p.sendWait(callLine(4, "echo", map[string]any{"text": canaryRejected}))
		if m, _ := p.expect("4", 30*time.Second); !strings.Contains(string(m.raw), "INPUT_REJECTED_PLANTED") {
			t.Fatalf("the planted rejection did not happen: %s", m.raw)
		}
		p.sendWait(callLine(5, "ask_roots", nil))
		p.expect("5", 30*time.Second)
		// A 2026-07-28 result whose inputRequests entry the policy
		// judges: a request of the server's, exported as one.
		p.sendWait(callLine(7, "input_required", map[string]any{"method": "roots/list"}))
		p.expect("7", 30*time.Second)
		// The server dies with the call in flight: mcpguard answers it
		// with an error, and its span says it failed.
		p.sendWait(callLine(6, "crash", map[string]any{"code": 3}))
		if m, _ := p.expect("6", 30*time.Second); m.Error == nil {
			t.Fatalf("a call in flight when the server died: %s", m.raw)
		}
		if status, err := p.closeAndWait(20 * time.Second); err != nil || status != 3 {
			t.Fatalf("mcpguard exit: %d, %v, want the server's 3\n%s", status, err, p.stderr.String())
		}
	}

	// A 2026-07-28 client (no initialize) asked about a call in an
	// input_required result: the call's span says so.
	argv := append(otelEnv("OTEL_EXPORTER_OTLP_ENDPOINT=http://"+col.http),
		guardArgv(t, &guardOpts{Policy: pol, Args: []string{"--otel"}}, testserverBin, "-stateless")...)
	p := startRaw(t, argv...)
	p.guarded = true
	p.sendWait(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}}}`)
	if m, _ := p.expect("1", 30*time.Second); !strings.Contains(string(m.raw), `"resultType":"input_required"`) {
		t.Fatalf("the asking call: %s", m.raw)
	}
	if status, err := p.closeAndWait(20 * time.Second); err != nil || status != 0 {
		t.Fatalf("mcpguard exit: %d, %v\n%s", status, err, p.stderr.String())
	}

	// mcpguard exported at exit; the collector writes every 50 ms.
	var d *otlpData
	deadline := time.Now().Add(20 * time.Second)
	for {
		d = readOTLP(t, col.out, true)
		if len(d.spans) >= 19 && len(d.metrics["mcpguard.decisions"]) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	col.stop(t)
	d = readOTLP(t, col.out, false)

	for _, proto := range []string{"http/protobuf", "grpc"} {
		echo := d.find(map[string]string{"gen_ai.tool.name": "echo", "mcpguard.decision.action": "allowed"})
		var mine []otlpSpan
		for _, s := range echo {
			if s.Resource["mcpguard.transport"] == proto && s.Resource["mcpguard.server"] == "otel-test" {
				mine = append(mine, s)
			}
		}
		if len(mine) != 2 {
			t.Errorf("%s: %d allowed echo spans, want 2 (all spans: %+v)", proto, len(mine), d.spans)
			continue
		}
		s := mine[0]
		if s.Name != "tools/call echo" || s.Attrs["mcp.method.name"] != "tools/call" || s.Attrs["mcpguard.outcome"] != "replied" ||
			s.Attrs["mcpguard.request.size"] == "" || s.Attrs["mcpguard.response.size"] == "" ||
			s.Attrs["mcpguard.ingress.duration"] == "" || s.Attrs["mcpguard.egress.duration"] == "" {
			t.Errorf("%s: echo span %+v lacks its name, method, outcome, sizes or durations", proto, s)
		}
		if s.Resource["service.name"] != "mcpguard" || s.Resource["deployment.environment"] != "ci" {
			t.Errorf("%s: resource %v, want service.name mcpguard and OTEL_RESOURCE_ATTRIBUTES", proto, s.Resource)
		}
	}
	for code, rule := range map[string]string{"INPUT_REJECTED_PLANTED": "ingress[0]", "INPUT_REJECTED_TOOL_DENIED": "tools.ask_roots"} {
		rej := d.find(map[string]string{"mcpguard.decision.code": code})
		if len(rej) != 2 {
			t.Errorf("%d spans with code %s, want one per protocol", len(rej), code)
			continue
		}
		s := rej[0]
		if s.Attrs["mcpguard.decision.action"] != "rejected" || s.Attrs["mcpguard.decision.rule"] != rule ||
			s.Attrs["error.type"] != code || s.Status != 2 {
			t.Errorf("rejected span %+v: want action rejected, rule %s, error.type %s, status error", s, rule, code)
		}
	}
	hostile := d.find(map[string]string{"gen_ai.tool.name": "hostile"})
	if len(hostile) != 2 || len(hostile[0].Events) == 0 || hostile[0].Attrs["mcpguard.egress.rewrites"] != strconv.Itoa(len(hostile[0].Events)) {
		t.Errorf("hostile spans %+v: want rewrites counted and mcpguard.rewrite events", hostile)
	}
	if failed := d.find(map[string]string{"gen_ai.tool.name": "crash"}); len(failed) != 2 ||
		failed[0].Attrs["mcpguard.outcome"] != "failed" || failed[0].Attrs["error.type"] != "failed" || failed[0].Status != 2 {
		t.Errorf("crash spans %+v: want outcome failed, error status", failed)
	}
	if init := d.find(map[string]string{"mcp.method.name": "initialize"}); len(init) != 2 {
		t.Errorf("%d initialize spans, want one per run: every judged request is a span", len(init))
	}
	if roots := d.find(map[string]string{"mcp.method.name": "roots/list", "mcpguard.server_request.input_request": "true"}); len(roots) != 2 ||
		roots[0].Attrs["mcpguard.decision.action"] != "allowed" || roots[0].Attrs["mcpguard.server_request.kind"] != "roots" ||
		roots[0].Attrs["mcpguard.direction"] != "egress" || roots[0].Attrs["mcpguard.outcome"] != "relayed" {
		t.Errorf("server request spans %+v: want one roots/list inputRequests entry per run, allowed and relayed", roots)
	}
	if asked := d.find(map[string]string{"gen_ai.tool.name": "slow"}); len(asked) != 1 ||
		asked[0].Attrs["mcpguard.decision.action"] != "asked" || asked[0].Attrs["mcpguard.outcome"] != "asked" ||
		asked[0].Attrs["mcpguard.decision.rule"] != "tools.slow" || asked[0].Status == 2 {
		t.Errorf("asked spans %+v: want one, action and outcome asked, rule tools.slow, no error", asked)
	}
	initialized := 0
	for _, dp := range d.metrics["mcpguard.notifications"] {
		if dp["mcp.method.name"] == "notifications/initialized" && dp["mcpguard.direction"] == "ingress" {
			n, _ := strconv.Atoi(dp["value"])
			initialized += n
		}
	}
	if initialized != 2 {
		t.Errorf("mcpguard.notifications{notifications/initialized, ingress} = %d, want one per run (all: %v)", initialized, d.metrics["mcpguard.notifications"])
	}

	decisions := map[string]int{}
	for _, dp := range d.metrics["mcpguard.decisions"] {
		if dp["mcpguard.server"] != "otel-test" {
			t.Errorf("decision data point without the server: %v", dp)
		}
		n, _ := strconv.Atoi(dp["value"])
		decisions[dp["mcpguard.decision.action"]+" "+dp["gen_ai.tool.name"]+" "+dp["mcpguard.decision.code"]] += n
	}
	for key, want := range map[string]int{
		"allowed echo ": 4, "rejected echo INPUT_REJECTED_PLANTED": 2, "rejected ask_roots INPUT_REJECTED_TOOL_DENIED": 2, "allowed crash ": 2, "rewritten hostile ": 2,
	} {
		if decisions[key] != want {
			t.Errorf("mcpguard.decisions{%s} = %d, want %d (all: %v)", key, decisions[key], want, decisions)
		}
	}
	for _, name := range []string{"mcpguard.message.size", "mcpguard.added_latency"} {
		dirs := map[string]bool{}
		for _, dp := range d.metrics[name] {
			dirs[dp["mcpguard.direction"]] = true
		}
		if !dirs["ingress"] || !dirs["egress"] {
			t.Errorf("%s: data points by direction %v, want ingress and egress", name, dirs)
		}
	}
	if len(d.metrics["mcpguard.telemetry.dropped"]) == 0 {
		t.Errorf("no mcpguard.telemetry.dropped: the drop counter must be exported")
	}

	for _, canary := range []string{canaryArg, canaryRejected, canaryResult, "Canary"} {
		if i := bytes.Index(d.raw, []byte(canary)); i >= 0 {
			t.Errorf("the exported data holds the planted value %q: ...%s...", canary, truncate(string(d.raw[max(0, i-200):]), 400))
		}
	}
}

// A collector that is down (nothing listens) or stuck (it accepts and
// never answers) costs nothing on the wire: every reply arrives, in full,
// and mcpguard exits promptly; what could not be exported is counted and
// logged once.
func TestOTelDeadCollector(t *testing.T) {
	t.Parallel()
	requireGuard(t)
	stuck, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := stuck.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // read nothing, answer nothing
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		stuck.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	})

	collectors := &atOnce{t: t}
	for _, tc := range []struct{ name, endpoint, protocol string }{
		{"down", "http://" + freePort(t), "http/protobuf"},
		{"stuck", "http://" + stuck.Addr().String(), "http/protobuf"},
		{"down-grpc", "http://" + freePort(t), "grpc"},
	} {
		name := tc.name
		collectors.Run(name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "mcpguard.log")
			argv := append(otelEnv("OTEL_EXPORTER_OTLP_ENDPOINT="+tc.endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL="+tc.protocol, "OTEL_BSP_SCHEDULE_DELAY=10"),
				guardArgv(t, &guardOpts{Log: log, Args: []string{"--otel"}}, testserverBin)...)
			p := startRaw(t, argv...)
			p.guarded = true
			p.initialize()
			// More calls than the two export queues hold (2 × 2,048 and
			// the batch in flight), all in flight at once.
			const n = 6000
			var batch strings.Builder
			for i := range n {
				if i > 0 {
					batch.WriteByte('\n')
				}
				batch.WriteString(callLine(i, "echo", map[string]any{"text": "call " + strconv.Itoa(i)}))
			}
			sent := p.send([]byte(batch.String()))
			// The server answers concurrently: replies come in any order.
			got := map[int]bool{}
			for len(got) < n {
				line, err := p.next(60 * time.Second)
				if err != nil {
					t.Fatalf("after %d of %d replies: %v", len(got), n, err)
				}
				var m rawMsg
				if json.Unmarshal(line, &m) != nil || !m.isResponse() {
					continue
				}
				i, err := strconv.Atoi(string(m.ID))
				if err != nil || got[i] || !strings.Contains(string(m.Result), `"call `+strconv.Itoa(i)+`"`) {
					t.Fatalf("unexpected reply: %s", truncate(string(line), 300))
				}
				got[i] = true
			}
			if err := <-sent; err != nil {
				t.Fatal(err)
			}
			began := time.Now()
			if status, err := p.closeAndWait(20 * time.Second); err != nil || status != 0 {
				t.Fatalf("mcpguard exit: %d, %v", status, err)
			}
			// The server exits at once on EOF; export gets at most 1 s.
			if d := time.Since(began); d > 10*time.Second {
				t.Errorf("mcpguard took %v to exit behind a %s collector", d, name)
			}
			if n := strings.Count(p.stderr.String(), "telemetry export failed"); n > 1 {
				t.Errorf("stderr says the export failed %d times, want at most once:\n%s", n, p.stderr.String())
			}
			logText, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			var summary struct {
				Spans    int `json:"telemetry_dropped_spans"`
				Failures int `json:"telemetry_export_failures"`
			}
			for _, line := range strings.Split(string(logText), "\n") {
				if strings.Contains(line, "telemetry_dropped_spans") {
					json.Unmarshal([]byte(line), &summary)
					t.Logf("%s", line)
				}
			}
			// Down: each export fails (over HTTP at once; gRPC's client
			// may wait for the connection instead, and spans back up).
			// Stuck: the exports hang, the queues fill, and spans are
			// dropped.
			if name == "stuck" && summary.Spans == 0 || summary.Spans+summary.Failures == 0 {
				t.Errorf("the log does not count the failed exports or dropped spans:\n%s", truncate(string(logText), 3000))
			}
		})
	}
	collectors.Wait()
}

// An OTLP setting mcpguard cannot honour is a configuration error: exit
// 2 before the server starts, not a silent run without export.
func TestOTelConfigErrors(t *testing.T) {
	t.Parallel()
	requireGuard(t)
	for _, env := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL=http/json", "OTEL_TRACES_EXPORTER=zipkin"} {
		record := filepath.Join(t.TempDir(), "record")
		cmd := exec.Command(otelEnv(env)[0], append(otelEnv(env)[1:],
			guardArgv(t, &guardOpts{Args: []string{"--otel"}}, testserverBin, "-record", record)...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(stderr.String(), strings.SplitN(env, "=", 2)[0]) {
			t.Errorf("%s: exit %d (%v), stderr %q; want 2 and the variable named", env, code, err, stderr.String())
		}
		if _, err := os.Stat(record); err == nil {
			t.Errorf("%s: the server was started", env)
		}
	}
	// OTEL_SDK_DISABLED=true turns export off; mcpguard runs as without --otel.
	p := startRaw(t, append(otelEnv("OTEL_SDK_DISABLED=true"), guardArgv(t, &guardOpts{Args: []string{"--otel"}}, testserverBin)...)...)
	p.guarded = true
	p.initialize()
	if got := p.callOK(1, "echo", map[string]any{"text": "on"}); got != "on" {
		t.Errorf("echo = %q", got)
	}
}

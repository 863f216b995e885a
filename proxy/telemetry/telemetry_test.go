package telemetry

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/proxy/eventlog"
)

func TestNilExporterIsOff(t *testing.T) {
	var e *Exporter
	c := e.Begin(time.Now(), policy.Call{Method: "tools/call", Tool: "echo"}, 10)
	if c != nil {
		t.Fatalf("Begin on a nil exporter = %v, want nil", c)
	}
	c.Judged(eventlog.ActionRejected, "X", "ingress[0]")
	c.Reply(time.Now(), 1, nil)
	e.End(c, Replied)
	e.Shutdown()
}

// startInMemory starts an exporter for server fs whose spans and
// metrics stay in memory for the test to read.
func startInMemory(t *testing.T) (*Exporter, *tracetest.InMemoryExporter, *sdkmetric.ManualReader) {
	t.Helper()
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "10") // ms, rather than 5 s
	spans := tracetest.NewInMemoryExporter()
	reader := sdkmetric.NewManualReader()
	e, err := start(Config{Server: "fs"}, spans, reader)
	if err != nil {
		t.Fatal(err)
	}
	return e, spans, reader
}

func TestSpansAndMetrics(t *testing.T) {
	e, spans, reader := startInMemory(t)
	t0 := time.Now()
	c := e.Begin(t0, policy.Call{Method: "tools/call", Tool: "read\x00_file"}, 120)
	c.Judged(eventlog.ActionNone, "", "")
	c.Reply(time.Now(), 4096, []policy.Rewrite{{Field: "result.content[0].text", Canonicaliser: "text", Rule: "evil.example"}})
	e.End(c, Replied)
	r := e.Begin(t0, policy.Call{Method: "tools/call", Tool: "write_file"}, 80)
	r.Judged(eventlog.ActionRejected, "INPUT_REJECTED_PATH_SCOPE", "ingress[0]")
	e.End(r, Rejected)

	waitFor(t, "two spans", func() bool { return len(spans.GetSpans()) == 2 })
	rm := collectDecisions(t, reader, 3)
	got := spans.GetSpans() // before Shutdown, which empties the exporter
	e.Shutdown()

	replied, rejected := got[0], got[1]
	if replied.Name != "tools/call read _file" || !replied.StartTime.Equal(t0) {
		t.Errorf("span name %q start %v, want tools/call read _file at %v (the tool's name canonicalised)", replied.Name, replied.StartTime, t0)
	}
	want := map[attribute.Key]string{
		"mcpguard.server": "", "mcp.method.name": "tools/call", "gen_ai.tool.name": "read _file",
		"mcpguard.decision.action": "allowed", "mcpguard.outcome": "replied",
		"mcpguard.request.size": "120", "mcpguard.response.size": "4096", "mcpguard.egress.rewrites": "1",
	}
	checkAttrs(t, replied.Attributes, want)
	if len(replied.Events) != 1 || replied.Events[0].Name != "mcpguard.rewrite" {
		t.Errorf("events %v, want one mcpguard.rewrite", replied.Events)
	}
	for _, ev := range replied.Events {
		for _, kv := range ev.Attributes {
			if strings.Contains(kv.Value.Emit(), "evil.example") || strings.Contains(kv.Value.Emit(), "result.") {
				t.Errorf("rewrite event carries %s=%s: a host or field path from the result", kv.Key, kv.Value.Emit())
			}
		}
	}
	checkAttrs(t, rejected.Attributes, map[attribute.Key]string{
		"mcpguard.decision.action": "rejected", "mcpguard.decision.code": "INPUT_REJECTED_PATH_SCOPE",
		"mcpguard.decision.rule": "ingress[0]", "error.type": "INPUT_REJECTED_PATH_SCOPE",
	})
	if rejected.Status.Description != "INPUT_REJECTED_PATH_SCOPE" {
		t.Errorf("rejected span status %+v, want an error with the code", rejected.Status)
	}

	decisions := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "mcpguard.decisions" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				a, _ := dp.Attributes.Value("mcpguard.decision.action")
				decisions[a.AsString()] += dp.Value
			}
		}
	}
	if decisions["allowed"] != 1 || decisions["rejected"] != 1 || decisions["rewritten"] != 1 {
		t.Errorf("mcpguard.decisions by action = %v, want allowed 1, rejected 1, rewritten 1", decisions)
	}
}

// TestCommonSpan: the span of an allowed call answered without rewrites
// has eight attributes or fewer (the SDK deduplicates a span's attributes
// at End in a map, on the stack up to eight), none of them the server's
// name, which is the resource's and cannot be overridden by
// OTEL_RESOURCE_ATTRIBUTES.
func TestCommonSpan(t *testing.T) {
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "mcpguard.server=other,deployment.environment=ci")
	e, spans, _ := startInMemory(t)
	c := e.Begin(time.Now(), policy.Call{Method: "tools/call", Tool: "echo"}, 120)
	c.Judged(eventlog.ActionNone, "", "")
	c.Reply(time.Now(), 300, nil)
	e.End(c, Replied)
	waitFor(t, "one span", func() bool { return len(spans.GetSpans()) == 1 })
	s := spans.GetSpans()[0]
	e.Shutdown()

	checkAttrs(t, s.Attributes, map[attribute.Key]string{
		"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "mcpguard.decision.action": "allowed",
		"mcpguard.outcome": "replied", "mcpguard.request.size": "120", "mcpguard.response.size": "300",
		"mcpguard.server": "", "mcpguard.egress.rewrites": "",
	})
	if len(s.Attributes) > 8 {
		t.Errorf("%d attributes, want at most 8: %v", len(s.Attributes), s.Attributes)
	}
	checkAttrs(t, s.Resource.Attributes(), map[attribute.Key]string{
		"mcpguard.server": "fs", "deployment.environment": "ci", "service.name": "mcpguard",
	})
}

// TestDecisionRuns: decisions are counted by attribute set whether the
// calls come in runs of one set or interleaved, and the size histograms
// get each call under its method.
func TestDecisionRuns(t *testing.T) {
	e, _, reader := startInMemory(t)
	calls := []struct{ method, tool string }{
		{"tools/call", "echo"}, {"tools/call", "echo"}, {"tools/call", "ping"}, {"tools/call", "echo"},
		{"resources/read", ""}, {"tools/call", "echo"}, {"resources/read", ""}, {"tools/call", "ping"},
	}
	for _, c := range calls {
		r := e.Begin(time.Now(), policy.Call{Method: c.method, Tool: c.tool}, 10)
		r.Judged(eventlog.ActionNone, "", "")
		r.Reply(time.Now(), 20, nil)
		e.End(r, Replied)
	}
	rm := collectDecisions(t, reader, int64(len(calls)))
	e.Shutdown()

	decisions, sizes := map[string]int64{}, map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch m.Name {
			case "mcpguard.decisions":
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					method, _ := dp.Attributes.Value("mcp.method.name")
					tool, _ := dp.Attributes.Value("gen_ai.tool.name")
					decisions[method.AsString()+" "+tool.AsString()] += dp.Value
				}
			case "mcpguard.message.size":
				for _, dp := range m.Data.(metricdata.Histogram[int64]).DataPoints {
					method, _ := dp.Attributes.Value("mcp.method.name")
					dir, _ := dp.Attributes.Value("mcpguard.direction")
					sizes[method.AsString()+" "+dir.AsString()] += dp.Count
				}
			}
		}
	}
	if want := map[string]int64{"tools/call echo": 4, "tools/call ping": 2, "resources/read ": 2}; !maps.Equal(decisions, want) {
		t.Errorf("mcpguard.decisions = %v, want %v", decisions, want)
	}
	if want := map[string]uint64{"tools/call ingress": 6, "tools/call egress": 6, "resources/read ingress": 2, "resources/read egress": 2}; !maps.Equal(sizes, want) {
		t.Errorf("mcpguard.message.size counts = %v, want %v", sizes, want)
	}
}

// TestServerRequestsAndNotifications: each request of the server's that
// the policy judged is a span and a decision (direction egress) with its
// method, kind, action and code; notifications are counted by method and
// direction, a method MCP does not define as "other", so that nothing a
// peer chose reaches the backend.
func TestServerRequestsAndNotifications(t *testing.T) {
	e, spans, reader := startInMemory(t)
	t0 := time.Now()
	e.ServerRequest(t0, "elicitation/create", "elicitation_form", "allowed", "", "server_requests.elicitation_form", false)
	e.ServerRequest(t0, "sampling/createMessage", "sampling", "rejected", "SERVER_REQUEST_REJECTED", "server_requests.sampling", true)
	e.Notification("notifications/progress", true)
	e.Notification("notifications/progress", true)
	e.Notification("notifications/cancelled", false)
	e.Notification("notifications/\x1b[8mevil", false)

	waitFor(t, "two spans", func() bool { return len(spans.GetSpans()) == 2 })
	rm := collectDecisions(t, reader, 2)
	got := spans.GetSpans()
	e.Shutdown()

	allowed, rejected := got[0], got[1]
	if allowed.Name != "elicitation/create" || allowed.SpanKind.String() != "client" {
		t.Errorf("span %q kind %v, want elicitation/create, client", allowed.Name, allowed.SpanKind)
	}
	checkAttrs(t, allowed.Attributes, map[attribute.Key]string{
		"mcp.method.name": "elicitation/create", "mcpguard.decision.action": "allowed",
		"mcpguard.outcome": "relayed", "mcpguard.direction": "egress", "mcpguard.server_request.kind": "elicitation_form",
		"mcpguard.server_request.input_request": "false",
	})
	checkAttrs(t, rejected.Attributes, map[attribute.Key]string{
		"mcp.method.name": "sampling/createMessage", "mcpguard.decision.action": "rejected", "mcpguard.outcome": "rejected",
		"mcpguard.decision.code": "SERVER_REQUEST_REJECTED", "mcpguard.decision.rule": "server_requests.sampling",
		"mcpguard.server_request.input_request": "true", "error.type": "SERVER_REQUEST_REJECTED",
	})

	decisions, notes := map[string]int64{}, map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				continue
			}
			for _, dp := range sum.DataPoints {
				method, _ := dp.Attributes.Value("mcp.method.name")
				dir, _ := dp.Attributes.Value("mcpguard.direction")
				action, _ := dp.Attributes.Value("mcpguard.decision.action")
				key := method.AsString() + " " + dir.AsString()
				switch m.Name {
				case "mcpguard.decisions":
					decisions[key+" "+action.AsString()] += dp.Value
				case "mcpguard.notifications":
					notes[key] += dp.Value
				}
			}
		}
	}
	if len(decisions) != 2 || decisions["elicitation/create egress allowed"] != 1 || decisions["sampling/createMessage egress rejected"] != 1 {
		t.Errorf("mcpguard.decisions = %v", decisions)
	}
	want := map[string]int64{"notifications/progress egress": 2, "notifications/cancelled ingress": 1, "other ingress": 1}
	if len(notes) != len(want) {
		t.Errorf("mcpguard.notifications = %v, want %v", notes, want)
	}
	for k, n := range want {
		if notes[k] != n {
			t.Errorf("mcpguard.notifications[%s] = %d, want %d (all: %v)", k, notes[k], n, notes)
		}
	}
}

// A sampler that drops every trace drops spans only: the metrics still
// count every call.
func TestSampledOutKeepsMetrics(t *testing.T) {
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "10")
	t.Setenv("OTEL_TRACES_SAMPLER", "always_off")
	spans := tracetest.NewInMemoryExporter()
	reader := sdkmetric.NewManualReader()
	e, err := start(Config{Server: "fs"}, spans, reader)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		c := e.Begin(time.Now(), policy.Call{Method: "tools/call", Tool: "echo"}, 10)
		c.Judged(eventlog.ActionNone, "", "")
		e.End(c, Replied)
	}
	var total int64
	waitFor(t, "three decisions", func() bool {
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		total = 0
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name == "mcpguard.decisions" {
					for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
						total += dp.Value
					}
				}
			}
		}
		return total == 3
	})
	waitFor(t, "the span stage", func() bool { return len(e.spans) == 0 })
	if err := e.tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := spans.GetSpans(); len(got) != 0 {
		t.Errorf("%d spans exported under always_off", len(got))
	}
	e.Shutdown()
}

func checkAttrs(t *testing.T, attrs []attribute.KeyValue, want map[attribute.Key]string) {
	t.Helper()
	have := map[attribute.Key]string{}
	for _, kv := range attrs {
		have[kv.Key] = kv.Value.Emit()
	}
	for k, v := range want {
		if have[k] != v {
			t.Errorf("attribute %s = %q, want %q (all: %v)", k, have[k], v, have)
		}
	}
}

// stuckExporter is a collector that never answers: every export blocks
// until the test ends.
type stuckExporter struct {
	release chan struct{}
	once    sync.Once
}

func (s *stuckExporter) ExportSpans(ctx context.Context, _ []sdktrace.ReadOnlySpan) error {
	select {
	case <-s.release:
	case <-ctx.Done():
	}
	return ctx.Err()
}

func (s *stuckExporter) Shutdown(context.Context) error {
	s.once.Do(func() { close(s.release) })
	return nil
}

// A collector that never answers must cost the relay nothing: End
// returns at once, what cannot be queued is counted, and Shutdown returns
// within its bound.
func TestStuckCollectorNeverBlocks(t *testing.T) {
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "10")
	stuck := &stuckExporter{release: make(chan struct{})}
	defer stuck.Shutdown(context.Background())
	e, err := start(Config{Server: "s"}, stuck, sdkmetric.NewManualReader())
	if err != nil {
		t.Fatal(err)
	}
	const n = 6 * QueueSize
	began := time.Now()
	for range n {
		c := e.Begin(time.Now(), policy.Call{Method: "tools/call", Tool: "echo"}, 10)
		c.Judged(eventlog.ActionNone, "", "")
		e.End(c, Replied)
	}
	spent := time.Since(began)
	// Give the stages time to fill every queue behind the stuck export.
	waitFor(t, "drops", func() bool { calls, spans := e.Dropped(); return calls+spans > 0 })
	calls, spans := e.Dropped()
	if calls+spans == 0 || calls+spans >= n {
		t.Errorf("dropped %d calls and %d spans of %d, want some but not all", calls, spans, n)
	}
	// Each End is a channel send; 6×2048 of them take milliseconds even
	// under -race on a loaded machine. A blocking End would never return.
	if spent > 10*time.Second {
		t.Errorf("%d calls took %v with a stuck collector", n, spent)
	}
	began = time.Now()
	e.Shutdown()
	if d := time.Since(began); d > 3*ShutdownTimeout {
		t.Errorf("Shutdown took %v behind a stuck collector, want about %v", d, ShutdownTimeout)
	}
}

func TestSignalsFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env             map[string]string
		traces, metrics bool
		err             string
	}{
		{env: nil, traces: true, metrics: true},
		{env: map[string]string{"OTEL_SDK_DISABLED": "true"}, err: "disabled"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "none"}, metrics: true},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}, err: "disabled"},
		{env: map[string]string{"OTEL_METRICS_EXPORTER": "prometheus"}, err: "OTEL_METRICS_EXPORTER=prometheus"},
	} {
		for _, k := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER"} {
			t.Setenv(k, tc.env[k])
		}
		traces, metrics, err := signalsFromEnv()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: err %v, want %q", tc.env, err, tc.err)
			}
			continue
		}
		if err != nil || traces != tc.traces || metrics != tc.metrics {
			t.Errorf("%v: traces %v metrics %v err %v, want %v %v", tc.env, traces, metrics, err, tc.traces, tc.metrics)
		}
	}
}

func TestProtocol(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "")
	if p, err := protocol("TRACES"); p != protoGRPC || err != nil {
		t.Errorf("protocol = %q, %v; want grpc from OTEL_EXPORTER_OTLP_PROTOCOL", p, err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf")
	if p, err := protocol("TRACES"); p != protoHTTP || err != nil {
		t.Errorf("protocol = %q, %v; want the per-signal variable to win", p, err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/json")
	if _, err := protocol("METRICS"); err == nil || !strings.Contains(err.Error(), "http/json") {
		t.Errorf("http/json: err %v, want a clear refusal", err)
	}
}

// collectDecisions collects the metrics once mcpguard.decisions counts
// n in all: the metrics stage adds its counts after each drain of the
// queue, which may be after the spans of the calls are out.
func collectDecisions(t *testing.T, reader sdkmetric.Reader, n int64) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	waitFor(t, fmt.Sprintf("%d decisions", n), func() bool {
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		total := int64(0)
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "mcpguard.decisions" {
					for _, dp := range sum.DataPoints {
						total += dp.Value
					}
				}
			}
		}
		return total == n
	})
	return rm
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// BenchmarkCall is the exporter's cost per call, off the relay: Begin,
// End, the metrics and span stages, the batch processor and an OTLP/HTTP
// export to a sink that answers at once. cpu-ns/call is the CPU time of
// the whole process (the sink's included), as BenchmarkExportCPU's.
func BenchmarkCall(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	}))
	defer sink.Close()
	b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", sink.URL)
	e, err := Start(Config{Server: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	before := processCPU()
	b.ResetTimer()
	feedCalls(b, e, time.Microsecond)
	e.Shutdown()
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-before)/float64(b.N), "cpu-ns/call")
	calls, spans := e.Dropped()
	b.ReportMetric(float64(calls+spans), "dropped")
}

// discardSpans is an exporter that takes every batch and keeps nothing:
// BenchmarkExportCPU measures mcpguard's side of export, not OTLP's.
type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }

// BenchmarkExportCPU reports the CPU the whole process spends per call
// (cpu-ns/call, from getrusage: every goroutine, the stages and the
// SDK's batch processor included; the time a loaded machine makes it
// wait is not counted) to turn calls into metrics and spans, with a
// span exporter that discards. OTEL_TRACES_SAMPLER chooses how many
// calls become spans.
func BenchmarkExportCPU(b *testing.B) {
	e, err := start(Config{Server: "bench"}, discardSpans{}, sdkmetric.NewManualReader())
	if err != nil {
		b.Fatal(err)
	}
	before := processCPU()
	b.ResetTimer()
	feedCalls(b, e, 100*time.Microsecond)
	e.Shutdown()
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-before)/float64(b.N), "cpu-ns/call")
	calls, spans := e.Dropped()
	b.ReportMetric(float64(calls+spans), "dropped")
}

// feedCalls hands e b.N allowed and replied calls, as the relay does,
// waiting (by pause) whenever the queues are half full: the benchmarks
// measure the work, not the drops.
func feedCalls(b *testing.B, e *Exporter, pause time.Duration) {
	rewrites := []policy.Rewrite{}
	for range b.N {
		c := e.Begin(time.Now(), policy.Call{Method: "tools/call", Tool: "echo"}, 300)
		c.Judged(eventlog.ActionNone, "", "")
		c.Reply(time.Now(), 300, rewrites)
		e.End(c, Replied)
		for len(e.calls)+len(e.spans) > QueueSize/2 {
			time.Sleep(pause)
		}
	}
}

// processCPU is the CPU time the process has spent, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

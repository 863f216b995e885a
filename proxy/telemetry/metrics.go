package telemetry

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/mcpguard/mcpguard/proxy/eventlog"
)

// The metrics, with the attributes each carries. Attribute sets are
// bounded by the SDK's cardinality limit per instrument (2000; more sets
// fold into one with otel.metric.overflow=true): the agent chooses tool
// names, and a flood of made-up ones must not grow mcpguard's memory.
//
//	mcpguard.decisions       {decision}  server, method, tool, action, code;
//	                                     a request of the server's: server,
//	                                     method, action, code, direction egress
//	mcpguard.message.size    By          server, method, direction
//	mcpguard.added_latency   s           server, method, direction
//	mcpguard.notifications   {notification} server, method (one MCP
//	                                     defines, else other), direction
//	mcpguard.telemetry.dropped {call}    stage (queue: calls the relay could
//	                                     not hand over; spans: spans the
//	                                     batch processor could not take)
type instruments struct {
	decisions metric.Int64Counter
	size      metric.Int64Histogram
	latency   metric.Float64Histogram

	// sets caches the measurement options (attribute sets) already
	// built: building one sorts and allocates, and a session calls the
	// same few tools over and over. Only the metrics stage uses it.
	sets map[setKey]setOptions
	// counted are the decisions recorded since the last flush, added to
	// mcpguard.decisions once per attribute set when the metrics stage
	// has drained the queue: a burst of a thousand calls of one tool is
	// one Add, not a thousand.
	counted map[setKey]int64

	// The last call's decision set and its count not yet in counted,
	// and the last method's size and latency sets: calls come in runs of
	// one method and tool, and comparing names costs less than hashing
	// them.
	run       setKey
	runCount  int64
	runMethod string
	runSets   [2]setOptions // ingress, egress
}

// setKey names one attribute set; the server is the exporter's.
type setKey struct {
	method, tool, action, code, direction string
}

// setOptions is one attribute set as the options of a measurement, in
// the slices Record and Add take: passed as they are, they are not
// copied into a new slice at every call.
type setOptions struct {
	record []metric.RecordOption
	add    []metric.AddOption
}

// maxCachedSets bounds the cache; past it, sets are built per call.
const maxCachedSets = 4096

// Bucket bounds: sizes from a ping to the 64 MiB response limit; added
// latency from a microsecond (the relay's own cost on a small call) to a
// second.
var (
	sizeBuckets    = []float64{128, 512, 2048, 8192, 32768, 131072, 524288, 2097152, 8388608, 33554432, 67108864}
	latencyBuckets = []float64{1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1}
)

func newInstruments(m metric.Meter, e *Exporter) (instruments, error) {
	in := instruments{sets: map[setKey]setOptions{}, counted: map[setKey]int64{}}
	var err error
	if in.decisions, err = m.Int64Counter("mcpguard.decisions", metric.WithUnit("{decision}"),
		metric.WithDescription("Requests from the agent that mcpguard judged, by verdict, and replies it rewrote")); err != nil {
		return in, fmt.Errorf("telemetry: %w", err)
	}
	if in.size, err = m.Int64Histogram("mcpguard.message.size", metric.WithUnit("By"),
		metric.WithDescription("Size of the requests and replies mcpguard relayed or answered, as read"),
		metric.WithExplicitBucketBoundaries(sizeBuckets...)); err != nil {
		return in, fmt.Errorf("telemetry: %w", err)
	}
	if in.latency, err = m.Float64Histogram("mcpguard.added_latency", metric.WithUnit("s"),
		metric.WithDescription("Time mcpguard spent on a message: from its line read to its verdict or rewrite written"),
		metric.WithExplicitBucketBoundaries(latencyBuckets...)); err != nil {
		return in, fmt.Errorf("telemetry: %w", err)
	}
	_, err = m.Int64ObservableCounter("mcpguard.telemetry.dropped", metric.WithUnit("{call}"),
		metric.WithDescription("Calls and spans dropped because the export queue was full (a slow or absent collector)"),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			calls, spans := e.Dropped()
			o.Observe(calls, metric.WithAttributes(keyDroppedStage.String("queue")))
			o.Observe(spans, metric.WithAttributes(keyDroppedStage.String("spans")))
			return nil
		}))
	if err != nil {
		return in, fmt.Errorf("telemetry: %w", err)
	}
	return in, observeNotifications(m, e)
}

// set returns the attribute set of k as measurement options, from the
// cache when it can.
func (in *instruments) set(server string, k setKey) setOptions {
	o, ok := in.sets[k]
	if !ok {
		kvs := []attribute.KeyValue{keyServer.String(server), semconv.McpMethodNameKey.String(k.method)}
		if k.tool != "" {
			kvs = append(kvs, semconv.GenAIToolName(k.tool))
		}
		if k.action != "" {
			kvs = append(kvs, keyAction.String(k.action))
		}
		if k.code != "" {
			kvs = append(kvs, keyCode.String(k.code))
		}
		if k.direction != "" {
			kvs = append(kvs, keyDirection.String(k.direction))
		}
		opt := metric.WithAttributeSet(attribute.NewSet(kvs...))
		o = setOptions{record: []metric.RecordOption{opt}, add: []metric.AddOption{opt}}
		if len(in.sets) < maxCachedSets {
			in.sets[k] = o
		}
	}
	return o
}

// record adds one call to the metrics; its decisions wait in counted
// for flush.
func (in *instruments) record(server string, c *Call) {
	ctx := context.Background()
	if c.serverRequest {
		in.count(setKey{method: c.method, action: c.actionName(), code: c.code, direction: eventlog.Egress})
		return
	}
	in.count(setKey{method: c.method, tool: c.tool, action: c.actionName(), code: c.code})
	if c.method != in.runMethod || in.runSets[0].record == nil {
		in.runMethod = c.method
		in.runSets[0] = in.set(server, setKey{method: c.method, direction: eventlog.Ingress})
		in.runSets[1] = in.set(server, setKey{method: c.method, direction: eventlog.Egress})
	}
	ingress := in.runSets[0].record
	in.size.Record(ctx, int64(c.reqSize), ingress...)
	in.latency.Record(ctx, c.ingress.Seconds(), ingress...)
	if c.outcome != Replied {
		return
	}
	egress := in.runSets[1].record
	in.size.Record(ctx, int64(c.respSize), egress...)
	in.latency.Record(ctx, c.egress.Seconds(), egress...)
	if c.rewrites > 0 {
		in.count(setKey{method: c.method, tool: c.tool, action: string(eventlog.ActionRewritten)})
	}
}

// count counts one decision of set k.
func (in *instruments) count(k setKey) {
	if in.runCount > 0 && k != in.run {
		in.counted[in.run] += in.runCount
		in.runCount = 0
	}
	in.run = k
	in.runCount++
}

// pending is how many attribute sets have decisions waiting for flush.
func (in *instruments) pending() int { return len(in.counted) + 1 }

// flush adds the decisions counted since the last flush.
func (in *instruments) flush(server string) {
	ctx := context.Background()
	if in.runCount > 0 {
		in.counted[in.run] += in.runCount
		in.runCount = 0
	}
	for k, n := range in.counted {
		in.decisions.Add(ctx, n, in.set(server, k).add...)
	}
	clear(in.counted)
}

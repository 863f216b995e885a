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
//	mcpguard.decisions       {decision}  server, method, tool, action, code
//	mcpguard.message.size    By          server, method, direction
//	mcpguard.added_latency   s           server, method, direction
//	mcpguard.telemetry.dropped {call}    stage (queue: calls the relay could
//	                                     not hand over; spans: spans the
//	                                     batch processor could not take)
type instruments struct {
	decisions metric.Int64Counter
	size      metric.Int64Histogram
	latency   metric.Float64Histogram
}

// Bucket bounds: sizes from a ping to the 64 MiB response limit; added
// latency from a microsecond (the relay's own cost on a small call) to a
// second.
var (
	sizeBuckets    = []float64{128, 512, 2048, 8192, 32768, 131072, 524288, 2097152, 8388608, 33554432, 67108864}
	latencyBuckets = []float64{1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1}
)

func newInstruments(m metric.Meter, e *Exporter) (instruments, error) {
	var in instruments
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
	return in, nil
}

// record adds one call to the metrics.
func (in *instruments) record(server string, c *Call) {
	ctx := context.Background()
	srv, method := keyServer.String(server), semconv.McpMethodNameKey.String(c.method)
	decision := []attribute.KeyValue{srv, method, keyAction.String(c.actionName())}
	if c.tool != "" {
		decision = append(decision, semconv.GenAIToolName(c.tool))
	}
	if c.code != "" {
		decision = append(decision, keyCode.String(c.code))
	}
	in.decisions.Add(ctx, 1, metric.WithAttributes(decision...))

	ingress := metric.WithAttributes(srv, method, keyDirection.String(eventlog.Ingress))
	in.size.Record(ctx, int64(c.reqSize), ingress)
	in.latency.Record(ctx, c.ingress.Seconds(), ingress)
	if c.outcome != Replied {
		return
	}
	egress := metric.WithAttributes(srv, method, keyDirection.String(eventlog.Egress))
	in.size.Record(ctx, int64(c.respSize), egress)
	in.latency.Record(ctx, c.egress.Seconds(), egress)
	if c.rewrites > 0 {
		rewritten := []attribute.KeyValue{srv, method, keyAction.String(string(eventlog.ActionRewritten))}
		if c.tool != "" {
			rewritten = append(rewritten, semconv.GenAIToolName(c.tool))
		}
		in.decisions.Add(ctx, 1, metric.WithAttributes(rewritten...))
	}
}

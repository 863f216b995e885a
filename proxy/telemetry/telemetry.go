// Package telemetry exports mcpguard's decisions as OpenTelemetry traces
// and metrics over OTLP (http/protobuf or grpc), for operators who run mcpguard
// in front of many agents and want its verdicts in their observability
// stack rather than in a file per laptop. The local JSON log stays the
// record; this is a second sink fed by the same decisions.
//
// It is off unless mcpguard runs with --otel: the SDK is not started, and
// the relay pays one nil check per message. When on, it is configured by
// the standard variables (OTEL_EXPORTER_OTLP_*, OTEL_RESOURCE_ATTRIBUTES,
// OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf, the
// default, or grpc), OTEL_TRACES_SAMPLER, OTEL_BSP_*,
// OTEL_METRIC_EXPORT_INTERVAL, OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER and
// OTEL_METRICS_EXPORTER=none), read by the SDK itself.
//
// What is exported names what happened, never what was said: the method,
// the tool's name, the verdict's error code, the policy entry (rule) that
// decided, the action, sizes in bytes and durations. Argument values,
// result values, field paths (which may hold a caller's member names),
// rejection messages and hosts found in results are never exported: a
// telemetry backend is read by more people than the agent's owner, and an
// injected agent must not be able to write into it.
//
// The relay never waits for the exporter. It hands each finished call to
// a bounded queue with a non-blocking send; when the queue is full the
// call is dropped and counted (mcpguard.telemetry.dropped, and one log
// line at exit). Spans and metrics are built off the relay's goroutines,
// and the SDK's batch span processor, behind a second bounded queue, does
// the network I/O. A collector that is down or slow costs dropped spans,
// never a delayed or lost message.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/exemplar"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpguard/mcpguard/proxy/eventlog"
)

// QueueSize bounds the calls waiting to be turned into spans and metrics,
// and, separately, the spans waiting for the SDK's batch processor.
const QueueSize = 2048

// ShutdownTimeout is how long mcpguard gives the exporter, after the last
// reply has reached the agent, to deliver what is queued.
const ShutdownTimeout = time.Second

// Config is what Start needs besides the OTEL_* variables.
type Config struct {
	Server  string // the server's name in the log (mcpguard.server)
	Version string // mcpguard's version (service.version)
	// Log gets one line for the first export failure and, at shutdown,
	// one line counting what was dropped.
	Log *eventlog.Logger
	// Stderr gets the same first-failure line: an operator who enabled
	// export and sees nothing arrive looks there first.
	Stderr io.Writer
}

// Exporter turns the relay's calls into spans and metrics and exports
// them. A nil *Exporter is valid and does nothing: that is export off.
type Exporter struct {
	cfg    Config
	tp     *sdktrace.TracerProvider // nil when traces are off
	mp     *sdkmetric.MeterProvider // nil when metrics are off
	tracer trace.Tracer
	inst   instruments

	calls chan *Call // relay -> metrics stage
	spans chan *Call // metrics stage -> span stage
	stop  chan struct{}
	done  sync.WaitGroup

	notes notificationCounts
	// The span stage's buffers, reused for every span (the SDK copies
	// what it keeps).
	attrs     []attribute.KeyValue
	startOpts []trace.SpanStartOption
	endOpts   []trace.SpanEndOption

	droppedCalls atomic.Int64 // calls the relay could not hand over
	droppedSpans atomic.Int64 // spans the batch processor could not take in time
	exportErrors atomic.Int64
	firstError   sync.Once
}

// ErrDisabled is returned by Start when OTEL_SDK_DISABLED=true, or when
// both OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER are none: mcpguard
// then runs without export, as if --otel had not been given.
var ErrDisabled = errors.New("telemetry: disabled by OTEL_SDK_DISABLED or OTEL_*_EXPORTER=none")

// Start starts the SDK and the exporter's goroutines. Its errors are
// configuration errors (an unsupported OTLP protocol, a bad endpoint); it
// does not connect to the collector, so a collector that is down is not
// an error here.
func Start(cfg Config) (*Exporter, error) {
	traces, metrics, err := signalsFromEnv()
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	var spanExp sdktrace.SpanExporter
	if traces {
		proto, err := protocol("TRACES")
		if err != nil {
			return nil, err
		}
		var client otlptrace.Client
		if proto == protoGRPC {
			client = otlptracegrpc.NewClient()
		} else {
			client = otlptracehttp.NewClient()
		}
		if spanExp, err = newOTLPSpans(ctx, client); err != nil {
			return nil, fmt.Errorf("telemetry: OTLP trace exporter: %w", err)
		}
	}
	var reader sdkmetric.Reader
	if metrics {
		proto, err := protocol("METRICS")
		if err != nil {
			return nil, err
		}
		var metricExp sdkmetric.Exporter
		if proto == protoGRPC {
			metricExp, err = otlpmetricgrpc.New(ctx)
		} else {
			metricExp, err = otlpmetrichttp.New(ctx)
		}
		if err != nil {
			return nil, fmt.Errorf("telemetry: OTLP metric exporter: %w", err)
		}
		reader = sdkmetric.NewPeriodicReader(metricExp)
	}
	return start(cfg, spanExp, reader)
}

// The OTLP transports.
const (
	protoHTTP = "http/protobuf"
	protoGRPC = "grpc"
)

// protocol is the OTLP transport of one signal (TRACES, METRICS): its
// OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
// else http/protobuf, as the specification says. The SDK's exporters are
// one package per transport and do not choose by the variable themselves.
func protocol(signal string) (string, error) {
	name := "OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL"
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		name = "OTEL_EXPORTER_OTLP_PROTOCOL"
		v = strings.TrimSpace(os.Getenv(name))
	}
	switch v {
	case "", protoHTTP:
		return protoHTTP, nil
	case protoGRPC:
		return protoGRPC, nil
	}
	return "", fmt.Errorf("telemetry: %s=%s: mcpguard exports OTLP over http/protobuf or grpc", name, v)
}

// start builds the exporter on the given SDK parts (either may be nil);
// tests give it in-memory ones.
func start(cfg Config, spanExp sdktrace.SpanExporter, reader sdkmetric.Reader) (*Exporter, error) {
	if cfg.Log == nil {
		cfg.Log = eventlog.Nop()
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	// OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME win over mcpguard's
	// defaults, but not over mcpguard.server. That is the resource's, not
	// each span's: one mcpguard process guards one server, and a span of
	// eight attributes or fewer costs the SDK a map less (it deduplicates
	// them at End).
	res, err := resource.New(context.Background(),
		resource.WithAttributes(semconv.ServiceName("mcpguard"), semconv.ServiceVersion(cfg.Version)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
		resource.WithAttributes(keyServer.String(cfg.Server)),
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	e := &Exporter{
		cfg:   cfg,
		attrs: make([]attribute.KeyValue, 0, 16),
		calls: make(chan *Call, QueueSize),
		spans: make(chan *Call, QueueSize),
		stop:  make(chan struct{}),
	}
	// The SDK reports export failures through the global handler, which
	// by default writes every one to stderr: a dead collector would
	// flood the agent's log of this server.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(e.exportFailed))
	if spanExp != nil {
		// The batch processor blocks the span stage, never the relay,
		// when its queue is full, so that every span lost is lost in one
		// place and counted (the SDK's own drop counter is not readable).
		e.tp = sdktrace.NewTracerProvider(sdktrace.WithResource(res),
			sdktrace.WithBatcher(spanExp, sdktrace.WithMaxQueueSize(QueueSize), sdktrace.WithBlocking()))
		e.tracer = e.tp.Tracer("github.com/mcpguard/mcpguard")
	}
	if reader != nil {
		opts := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithReader(reader)}
		if os.Getenv("OTEL_METRICS_EXEMPLAR_FILTER") == "" {
			// Measurements are recorded off the relay, outside any
			// span, so the default trace_based filter never keeps an
			// exemplar; off, the SDK does not even offer them.
			opts = append(opts, sdkmetric.WithExemplarFilter(exemplar.AlwaysOffFilter))
		}
		e.mp = sdkmetric.NewMeterProvider(opts...)
		if e.inst, err = newInstruments(e.mp.Meter("github.com/mcpguard/mcpguard"), e); err != nil {
			return nil, err
		}
	}
	e.done.Add(2)
	go e.metricsStage()
	go e.spanStage()
	return e, nil
}

// signalsFromEnv reads which signals to export, and refuses what the
// exporters here cannot do rather than exporting nothing quietly.
func signalsFromEnv() (traces, metrics bool, err error) {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") {
		return false, false, ErrDisabled
	}
	exporter := func(name string) (bool, error) {
		switch v := strings.TrimSpace(os.Getenv(name)); v {
		case "", "otlp":
			return true, nil
		case "none":
			return false, nil
		default:
			return false, fmt.Errorf("telemetry: %s=%s: mcpguard exports otlp, or none", name, v)
		}
	}
	if traces, err = exporter("OTEL_TRACES_EXPORTER"); err != nil {
		return false, false, err
	}
	if metrics, err = exporter("OTEL_METRICS_EXPORTER"); err != nil {
		return false, false, err
	}
	if !traces && !metrics {
		return false, false, ErrDisabled
	}
	return traces, metrics, nil
}

// exportFailed counts an error the SDK reports (an export that failed
// after its retries, a collector that refused a batch) and says the first
// one.
func (e *Exporter) exportFailed(err error) {
	e.exportErrors.Add(1)
	e.firstError.Do(func() {
		msg := "telemetry export failed: " + err.Error() + "; later failures are counted, not shown"
		fmt.Fprintln(e.cfg.Stderr, "mcpguard: "+eventlog.Clean(msg))
		e.cfg.Log.Log(eventlog.Event{Level: zerolog.WarnLevel, Event: eventlog.EventWarning, Message: msg})
	})
}

// Shutdown stops taking calls, exports what is queued within
// ShutdownTimeout, and logs what was dropped. The relay must have written
// its last reply first: nothing here can delay a message, only the exit.
func (e *Exporter) Shutdown() {
	if e == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	close(e.stop)
	stages := make(chan struct{})
	go func() {
		e.done.Wait()
		close(stages)
	}()
	var unsent int64
	select {
	case <-stages:
	case <-ctx.Done():
		// The span stage is blocked on a full batch queue behind a
		// collector that does not answer: what waits for it is lost
		// (and what the batch processor holds, which it does not count).
		unsent = int64(len(e.calls) + len(e.spans))
	}
	if e.tp != nil {
		_ = e.tp.Shutdown(ctx)
	}
	if e.mp != nil {
		_ = e.mp.Shutdown(ctx)
	}
	calls, spans, fails := e.droppedCalls.Load(), e.droppedSpans.Load(), e.exportErrors.Load()
	if calls+spans+fails+unsent == 0 {
		return
	}
	e.cfg.Log.Log(eventlog.Event{Level: zerolog.WarnLevel, Event: eventlog.EventWarning,
		Message: fmt.Sprintf("telemetry: %d calls and %d spans dropped, %d more unsent at exit, %d export failures (the collector was down or slow)",
			calls, spans, unsent, fails),
		Extra: func(ev *zerolog.Event) {
			ev.Int64("telemetry_dropped_calls", calls).Int64("telemetry_dropped_spans", spans).
				Int64("telemetry_unsent_at_exit", unsent).Int64("telemetry_export_failures", fails)
		}})
}

// Dropped is how many calls and spans were dropped so far.
func (e *Exporter) Dropped() (calls, spans int64) {
	return e.droppedCalls.Load(), e.droppedSpans.Load()
}

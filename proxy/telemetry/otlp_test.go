package telemetry

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// captureClient is an OTLP client that keeps what it is asked to upload,
// marshalled, as the real clients marshal it before they return.
type captureClient struct{ got [][]byte }

func (c *captureClient) Start(context.Context) error { return nil }
func (c *captureClient) Stop(context.Context) error  { return nil }
func (c *captureClient) UploadTraces(_ context.Context, rs []*tracepb.ResourceSpans) error {
	// otlptrace groups resources in a map: put them in one order.
	rs = slices.Clone(rs)
	slices.SortStableFunc(rs, func(a, b *tracepb.ResourceSpans) int {
		return bytes.Compare(marshal(a.Resource), marshal(b.Resource))
	})
	for _, r := range rs {
		c.got = append(c.got, marshal(r))
	}
	return nil
}

func marshal(m proto.Message) []byte {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// TestSpanBatchIsOTLPs: for random batches of spans of every shape the
// SDK can hand an exporter (every attribute type, events, links, status,
// remote parents, trace state, dropped counts, several resources and
// scopes), otlpSpans uploads the messages the SDK's otlptrace exporter
// uploads, byte for byte once the resources are in one order.
func TestSpanBatchIsOTLPs(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		spans := randomSpans(rng)
		want, got := &captureClient{}, &captureClient{}
		if err := otlptrace.NewUnstarted(want).ExportSpans(context.Background(), spans); err != nil {
			t.Fatal(err)
		}
		ours, err := newOTLPSpans(context.Background(), got)
		if err != nil {
			t.Fatal(err)
		}
		if err := ours.ExportSpans(context.Background(), spans); err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(want.got, got.got, bytes.Equal) {
			t.Fatalf("round %d, %d spans: otlpSpans uploaded\n%x\nwant (otlptrace)\n%x", round, len(spans), got.got, want.got)
		}
	}
}

func randomSpans(rng *rand.Rand) []sdktrace.ReadOnlySpan {
	resources := []*resource.Resource{
		nil,
		resource.NewSchemaless(attribute.String("service.name", "mcpguard")),
		resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0", attribute.String("service.name", "mcpguard"), attribute.Int("n", 2)),
		resource.NewSchemaless(attribute.String("service.name", "other"), attribute.StringSlice("xs", []string{"a", "b"})),
	}
	scopes := []instrumentation.Scope{
		{},
		{Name: "github.com/mcpguard/mcpguard"},
		{Name: "s", Version: "v1", SchemaURL: "https://example/schema", Attributes: attribute.NewSet(attribute.Bool("b", true))},
	}
	spans := make([]sdktrace.ReadOnlySpan, rng.IntN(40))
	for i := range spans {
		if rng.IntN(50) == 0 {
			continue // a nil span: skipped by both
		}
		s := tracetest.SpanStub{
			Name:                 []string{"", "tools/call echo", "ping", "ü"}[rng.IntN(4)],
			SpanContext:          randomContext(rng),
			SpanKind:             trace.SpanKind(rng.IntN(7)),
			StartTime:            randomTime(rng),
			EndTime:              randomTime(rng),
			Attributes:           randomAttrs(rng, 14),
			Status:               sdktrace.Status{Code: codes.Code(rng.IntN(4)), Description: []string{"", "INPUT_REJECTED"}[rng.IntN(2)]},
			DroppedAttributes:    []int{0, 3, -1, math.MaxInt}[rng.IntN(4)],
			DroppedEvents:        rng.IntN(3),
			DroppedLinks:         rng.IntN(3),
			Resource:             resources[rng.IntN(len(resources))],
			InstrumentationScope: scopes[rng.IntN(len(scopes))],
		}
		if rng.IntN(2) == 0 {
			s.Parent = randomContext(rng)
		}
		for range rng.IntN(4) {
			s.Events = append(s.Events, sdktrace.Event{Name: "mcpguard.rewrite", Time: randomTime(rng),
				Attributes: randomAttrs(rng, 3), DroppedAttributeCount: rng.IntN(2)})
		}
		for range rng.IntN(3) {
			s.Links = append(s.Links, sdktrace.Link{SpanContext: randomContext(rng),
				Attributes: randomAttrs(rng, 3), DroppedAttributeCount: rng.IntN(2)})
		}
		spans[i] = s.Snapshot()
	}
	return spans
}

func randomContext(rng *rand.Rand) trace.SpanContext {
	var tid trace.TraceID
	var sid trace.SpanID
	if rng.IntN(8) > 0 { // else the invalid, all-zero ids
		for i := range tid {
			tid[i] = byte(rng.UintN(256))
		}
		for i := range sid {
			sid[i] = byte(rng.UintN(256))
		}
	}
	cfg := trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.TraceFlags(rng.UintN(256)), Remote: rng.IntN(2) == 0}
	if rng.IntN(3) == 0 {
		cfg.TraceState, _ = trace.ParseTraceState("vendor=x,other=y")
	}
	return trace.NewSpanContext(cfg)
}

func randomTime(rng *rand.Rand) time.Time {
	switch rng.IntN(4) {
	case 0:
		return time.Time{} // before 1970: 0 on the wire
	case 1:
		return time.Unix(0, rng.Int64())
	}
	return time.Now()
}

func randomAttrs(rng *rand.Rand, most int) []attribute.KeyValue {
	values := []func() attribute.Value{
		func() attribute.Value { return attribute.StringValue([]string{"", "allowed", "ü\x00"}[rng.IntN(3)]) },
		func() attribute.Value { return attribute.Int64Value(rng.Int64() - rng.Int64()) },
		func() attribute.Value { return attribute.Float64Value(rng.NormFloat64()) },
		func() attribute.Value { return attribute.BoolValue(rng.IntN(2) == 0) },
		func() attribute.Value { return attribute.BoolSliceValue([]bool{true, false}) },
		func() attribute.Value { return attribute.Int64SliceValue([]int64{1, -2}) },
		func() attribute.Value { return attribute.Float64SliceValue([]float64{0.5}) },
		func() attribute.Value { return attribute.StringSliceValue([]string{"a", ""}) },
		func() attribute.Value { return attribute.ByteSliceValue([]byte{0, 1, 0xff}) },
		func() attribute.Value {
			return attribute.SliceValue(attribute.IntValue(1), attribute.StringValue("x"), attribute.Value{})
		},
		func() attribute.Value {
			return attribute.MapValue(attribute.String("k", "v"), attribute.Int64Slice("n", []int64{3}), attribute.String("k", "dup"))
		},
		func() attribute.Value { return attribute.Value{} },
	}
	n := rng.IntN(most + 1)
	if n == 0 {
		return nil
	}
	kvs := make([]attribute.KeyValue, n)
	for i := range kvs {
		kvs[i] = attribute.KeyValue{Key: attribute.Key([]string{"mcpguard.server", "k", ""}[rng.IntN(3)]), Value: values[rng.IntN(len(values))]()}
	}
	return kvs
}

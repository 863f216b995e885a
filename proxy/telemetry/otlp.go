package telemetry

import (
	"context"
	"fmt"
	"math"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// otlpSpans is the span exporter: the OTLP client of otlptracehttp or
// otlptracegrpc (endpoint, headers, TLS, compression, timeout and retries
// from OTEL_EXPORTER_OTLP_*), fed by spanBatch, which turns a batch of
// spans into the same OTLP messages the SDK's otlptrace exporter builds
// but allocates them together: that exporter allocates three objects per
// attribute of every span, and on a busy relay its allocations and the
// garbage collection they cause were most of the cost of export.
type otlpSpans struct {
	client otlptrace.Client
	stop   sync.Once
}

// newOTLPSpans starts client (it does not connect yet) and exports
// through it.
func newOTLPSpans(ctx context.Context, client otlptrace.Client) (*otlpSpans, error) {
	if err := client.Start(ctx); err != nil {
		return nil, err
	}
	return &otlpSpans{client: client}, nil
}

// batches holds the messages of past batches for the next: the clients
// marshal a request before UploadTraces returns, so its messages are free
// again after it. Under steady export one batch's memory serves them all;
// when export is idle the pool lets it go.
var batches = sync.Pool{New: func() any { return new(spanBatch) }}

// ExportSpans sends spans in one request.
func (x *otlpSpans) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	b := batches.Get().(*spanBatch)
	defer batches.Put(b)
	rs := b.convert(spans)
	if len(rs) == 0 {
		return nil
	}
	if err := x.client.UploadTraces(ctx, rs); err != nil {
		return fmt.Errorf("traces export: %w", err)
	}
	return nil
}

// Shutdown stops the client, once.
func (x *otlpSpans) Shutdown(ctx context.Context) error {
	var err error
	x.stop.Do(func() { err = x.client.Stop(ctx) })
	return err
}

// slab hands out the elements of one array, the messages of one type of
// a batch: reset sizes it for the batch, next takes the next element.
type slab[T any] []T

// reset empties s, with room for n elements.
func (s *slab[T]) reset(n int) {
	if cap(*s) < n {
		*s = make(slab[T], 0, n)
	}
	*s = (*s)[:0]
}

func (s *slab[T]) next() *T {
	if len(*s) == cap(*s) { // more than reset said: the rest in a new array
		*s = make(slab[T], 0, max(8, cap(*s)))
	}
	*s = (*s)[:len(*s)+1]
	return &(*s)[len(*s)-1]
}

// spanBatch builds the OTLP messages of one batch of spans. Its output is
// the otlptrace exporter's for the same spans (TestSpanBatchIsOTLPs),
// resources and scopes in the order first met.
type spanBatch struct {
	spans   slab[tracepb.Span]
	status  slab[tracepb.Status]
	events  slab[tracepb.Span_Event]
	kvs     slab[commonpb.KeyValue]
	values  slab[commonpb.AnyValue]
	strs    slab[commonpb.AnyValue_StringValue]
	ints    slab[commonpb.AnyValue_IntValue]
	doubles slab[commonpb.AnyValue_DoubleValue]
	bools   slab[commonpb.AnyValue_BoolValue]
	kvPtrs  []*commonpb.KeyValue // attribute lists, one after the other
	ids     []byte               // trace and span ids, one after the other

	groups []*spanGroup
	out    []*tracepb.ResourceSpans
}

// spanGroup is the spans of one resource and instrumentation scope.
type spanGroup struct {
	res   attribute.Distinct
	scope instrumentation.Scope
	rs    *tracepb.ResourceSpans
	ss    *tracepb.ScopeSpans
}

// convert returns the ResourceSpans of spans.
func (b *spanBatch) convert(spans []sdktrace.ReadOnlySpan) []*tracepb.ResourceSpans {
	var n, events, kvs, ids int
	var kinds [attribute.STRING + 1]int // the scalars' counts
	count := func(attrs []attribute.KeyValue) {
		kvs += len(attrs)
		for i := range attrs {
			if t := attrs[i].Value.Type(); t <= attribute.STRING {
				kinds[t]++
			}
		}
	}
	for _, sd := range spans {
		if sd == nil {
			continue
		}
		n++
		ids += 16 + 8 + 8
		count(sd.Attributes())
		evs := sd.Events()
		events += len(evs)
		for i := range evs {
			count(evs[i].Attributes)
		}
	}
	if n == 0 {
		return nil
	}
	b.spans.reset(n)
	b.status.reset(n)
	b.events.reset(events)
	b.kvs.reset(kvs)
	b.values.reset(kvs)
	b.strs.reset(kinds[attribute.STRING])
	b.ints.reset(kinds[attribute.INT64])
	b.doubles.reset(kinds[attribute.FLOAT64])
	b.bools.reset(kinds[attribute.BOOL])
	if cap(b.kvPtrs) < kvs {
		b.kvPtrs = make([]*commonpb.KeyValue, 0, kvs)
	}
	if cap(b.ids) < ids {
		b.ids = make([]byte, 0, ids)
	}
	b.kvPtrs, b.ids, b.groups, b.out = b.kvPtrs[:0], b.ids[:0], b.groups[:0], b.out[:0]

	var last *spanGroup
	var lastRes *resource.Resource
	for _, sd := range spans {
		if sd == nil {
			continue
		}
		res, scope := sd.Resource(), sd.InstrumentationScope()
		if last == nil || res != lastRes || scope != last.scope {
			last, lastRes = b.group(res, scope, n), res
		}
		last.ss.Spans = append(last.ss.Spans, b.span(sd))
	}
	return b.out
}

// group returns the group of a resource (by its attributes, as otlptrace
// compares them) and scope, made when first met with room for n spans.
func (b *spanBatch) group(res *resource.Resource, scope instrumentation.Scope, n int) *spanGroup {
	key := res.Equivalent()
	var rs *tracepb.ResourceSpans
	for _, g := range b.groups {
		if g.res != key {
			continue
		}
		if g.scope == scope {
			return g
		}
		rs = g.rs
	}
	ss := &tracepb.ScopeSpans{Scope: scopeProto(scope), Spans: make([]*tracepb.Span, 0, n), SchemaUrl: scope.SchemaURL}
	if rs == nil {
		var pr *resourcepb.Resource
		if res != nil {
			pr = &resourcepb.Resource{Attributes: iterKeyValues(res.Iter())}
		}
		rs = &tracepb.ResourceSpans{Resource: pr, SchemaUrl: res.SchemaURL()}
		b.out = append(b.out, rs)
	}
	rs.ScopeSpans = append(rs.ScopeSpans, ss)
	g := &spanGroup{res: key, scope: scope, rs: rs, ss: ss}
	b.groups = append(b.groups, g)
	return g
}

func scopeProto(s instrumentation.Scope) *commonpb.InstrumentationScope {
	if s == (instrumentation.Scope{}) {
		return nil
	}
	return &commonpb.InstrumentationScope{Name: s.Name, Version: s.Version, Attributes: iterKeyValues(s.Attributes.Iter())}
}

func (b *spanBatch) span(sd sdktrace.ReadOnlySpan) *tracepb.Span {
	sc, parent := sd.SpanContext(), sd.Parent()
	st := sd.Status()
	status := b.status.next()
	*status = tracepb.Status{Code: statusCode(st.Code), Message: st.Description}
	s := b.spans.next()
	*s = tracepb.Span{
		TraceState:             sc.TraceState().String(),
		Status:                 status,
		StartTimeUnixNano:      unixNano(sd.StartTime().UnixNano()),
		EndTimeUnixNano:        unixNano(sd.EndTime().UnixNano()),
		Links:                  links(sd.Links()),
		Kind:                   spanKind(sd.SpanKind()),
		Name:                   sd.Name(),
		Attributes:             b.keyValues(sd.Attributes()),
		DroppedAttributesCount: clampUint32(sd.DroppedAttributes()),
		DroppedEventsCount:     clampUint32(sd.DroppedEvents()),
		DroppedLinksCount:      clampUint32(sd.DroppedLinks()),
		Flags:                  spanFlags(sc.TraceFlags(), parent),
	}
	tid, sid := sc.TraceID(), sc.SpanID()
	s.TraceId = b.id(tid[:])
	s.SpanId = b.id(sid[:])
	if psid := parent.SpanID(); psid.IsValid() {
		s.ParentSpanId = b.id(psid[:])
	}
	if evs := sd.Events(); len(evs) > 0 {
		s.Events = make([]*tracepb.Span_Event, len(evs))
		for i := range evs {
			ev := b.events.next()
			*ev = tracepb.Span_Event{
				Name:                   evs[i].Name,
				TimeUnixNano:           unixNano(evs[i].Time.UnixNano()),
				Attributes:             b.keyValues(evs[i].Attributes),
				DroppedAttributesCount: clampUint32(evs[i].DroppedAttributeCount),
			}
			s.Events[i] = ev
		}
	}
	return s
}

// id copies an id into the batch's id bytes.
func (b *spanBatch) id(id []byte) []byte {
	start := len(b.ids)
	b.ids = append(b.ids, id...)
	return b.ids[start:len(b.ids):len(b.ids)]
}

func (b *spanBatch) keyValues(attrs []attribute.KeyValue) []*commonpb.KeyValue {
	if len(attrs) == 0 {
		return nil
	}
	start := len(b.kvPtrs)
	for _, a := range attrs {
		kv := b.kvs.next()
		*kv = commonpb.KeyValue{Key: string(a.Key), Value: b.value(a.Value)}
		b.kvPtrs = append(b.kvPtrs, kv)
	}
	return b.kvPtrs[start:len(b.kvPtrs):len(b.kvPtrs)]
}

// value is an attribute's value; the scalars come from the batch's slabs,
// the rest (slices, maps, bytes) are built as otlptrace builds them.
func (b *spanBatch) value(v attribute.Value) *commonpb.AnyValue {
	av := b.values.next()
	switch v.Type() {
	case attribute.STRING:
		w := b.strs.next()
		w.StringValue = v.AsString()
		av.Value = w
	case attribute.INT64:
		w := b.ints.next()
		w.IntValue = v.AsInt64()
		av.Value = w
	case attribute.FLOAT64:
		w := b.doubles.next()
		w.DoubleValue = v.AsFloat64()
		av.Value = w
	case attribute.BOOL:
		w := b.bools.next()
		w.BoolValue = v.AsBool()
		av.Value = w
	default:
		av.Value = anyValue(v).Value
	}
	return av
}

// anyValue converts any attribute value, allocating as otlptrace does.
func anyValue(v attribute.Value) *commonpb.AnyValue {
	av := new(commonpb.AnyValue)
	switch v.Type() {
	case attribute.BOOL:
		av.Value = &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}
	case attribute.INT64:
		av.Value = &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}
	case attribute.FLOAT64:
		av.Value = &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}
	case attribute.STRING:
		av.Value = &commonpb.AnyValue_StringValue{StringValue: v.AsString()}
	case attribute.BYTESLICE:
		av.Value = &commonpb.AnyValue_BytesValue{BytesValue: v.AsByteSlice()}
	case attribute.BOOLSLICE:
		av.Value = array(v.AsBoolSlice(), func(x bool) attribute.Value { return attribute.BoolValue(x) })
	case attribute.INT64SLICE:
		av.Value = array(v.AsInt64Slice(), func(x int64) attribute.Value { return attribute.Int64Value(x) })
	case attribute.FLOAT64SLICE:
		av.Value = array(v.AsFloat64Slice(), func(x float64) attribute.Value { return attribute.Float64Value(x) })
	case attribute.STRINGSLICE:
		av.Value = array(v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		av.Value = array(v.AsSlice(), func(x attribute.Value) attribute.Value { return x })
	case attribute.MAP:
		av.Value = &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: keyValues(v.AsMap())}}
	case attribute.EMPTY:
	default:
		av.Value = &commonpb.AnyValue_StringValue{StringValue: "INVALID"}
	}
	return av
}

func array[T any](xs []T, value func(T) attribute.Value) *commonpb.AnyValue_ArrayValue {
	out := make([]*commonpb.AnyValue, len(xs))
	for i, x := range xs {
		out[i] = anyValue(value(x))
	}
	return &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: out}}
}

// keyValues converts attributes, allocating as otlptrace does.
func keyValues(attrs []attribute.KeyValue) []*commonpb.KeyValue {
	if len(attrs) == 0 {
		return nil
	}
	out := make([]*commonpb.KeyValue, len(attrs))
	for i, a := range attrs {
		out[i] = &commonpb.KeyValue{Key: string(a.Key), Value: anyValue(a.Value)}
	}
	return out
}

// iterKeyValues converts a resource's or scope's attributes.
func iterKeyValues(it attribute.Iterator) []*commonpb.KeyValue {
	if it.Len() == 0 {
		return nil
	}
	out := make([]*commonpb.KeyValue, 0, it.Len())
	for it.Next() {
		a := it.Attribute()
		out = append(out, &commonpb.KeyValue{Key: string(a.Key), Value: anyValue(a.Value)})
	}
	return out
}

func links(ls []sdktrace.Link) []*tracepb.Span_Link {
	if len(ls) == 0 {
		return nil
	}
	out := make([]*tracepb.Span_Link, len(ls))
	for i, l := range ls {
		tid, sid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		out[i] = &tracepb.Span_Link{
			TraceId:                tid[:],
			SpanId:                 sid[:],
			Attributes:             keyValues(l.Attributes),
			DroppedAttributesCount: clampUint32(l.DroppedAttributeCount),
			Flags:                  spanFlags(l.SpanContext.TraceFlags(), l.SpanContext),
		}
	}
	return out
}

func statusCode(c codes.Code) tracepb.Status_StatusCode {
	switch c {
	case codes.Ok:
		return tracepb.Status_STATUS_CODE_OK
	case codes.Error:
		return tracepb.Status_STATUS_CODE_ERROR
	}
	return tracepb.Status_STATUS_CODE_UNSET
}

func spanKind(k trace.SpanKind) tracepb.Span_SpanKind {
	switch k {
	case trace.SpanKindInternal:
		return tracepb.Span_SPAN_KIND_INTERNAL
	case trace.SpanKindClient:
		return tracepb.Span_SPAN_KIND_CLIENT
	case trace.SpanKindServer:
		return tracepb.Span_SPAN_KIND_SERVER
	case trace.SpanKindProducer:
		return tracepb.Span_SPAN_KIND_PRODUCER
	case trace.SpanKindConsumer:
		return tracepb.Span_SPAN_KIND_CONSUMER
	}
	return tracepb.Span_SPAN_KIND_UNSPECIFIED
}

// spanFlags are the W3C trace flags and whether the parent is remote.
func spanFlags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	flags := uint32(tf) | uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK)
	if parent.IsRemote() {
		flags |= uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK)
	}
	return flags
}

func unixNano(ns int64) uint64 { return uint64(max(0, ns)) }

func clampUint32(v int) uint32 {
	if v < 0 {
		return 0
	}
	if int64(v) > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(v)
}

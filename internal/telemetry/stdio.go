package telemetry

import (
	"context"
	"errors"
	"strconv"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// Observer returns the hook that traces a stdio session: assign it to
// mcp.Config.Observer (whose type it matches). It records one CLIENT span
// per request or notification the client writes, SendRaw frames included,
// and adds params._meta.traceparent to the client's own requests on a
// revision that allows it (MetaRevision on); raw frames are sent byte for
// byte. A nil Tracer returns nil, which observes nothing.
func (t *Tracer) Observer() func(ctx context.Context, frame []byte, revision string, raw bool) ([]byte, func(*jsonrpc.Message, error)) {
	if t == nil {
		return nil
	}
	return t.observeStdio
}

func (t *Tracer) observeStdio(ctx context.Context, frame []byte, rev string, raw bool) ([]byte, func(*jsonrpc.Message, error)) {
	peek, perr := jsonrpc.PeekFrame(frame)
	if perr == nil && (peek.Kind == jsonrpc.KindResponse || peek.Kind == jsonrpc.KindError) {
		return frame, func(*jsonrpc.Message, error) {}
	}
	if peek.Method == "initialize" {
		rev = initializeRevision(frame)
	}
	name, attrs := spanName(peek, rev, semconv.NetworkTransportPipe)
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	sc := span.SpanContext()
	call := Call{Method: peek.Method, Tool: peek.Tool, TraceID: sc.TraceID().String(), SpanID: sc.SpanID().String()}

	send := frame
	if !raw && perr == nil && peek.Kind == jsonrpc.KindRequest && ownID(peek.ID) && rev >= MetaRevision {
		if b, ok := withMetaTraceparent(frame, traceparent(ctx)); ok {
			send = b
			span.SetAttributes(attribute.Bool("mcpdrill.traceparent_in_meta", true))
		}
	}
	var once sync.Once
	return send, func(reply *jsonrpc.Message, err error) {
		once.Do(func() {
			switch {
			case err != nil:
				kind := "transport"
				if errors.Is(err, context.DeadlineExceeded) {
					kind = "timeout"
				}
				span.SetStatus(codes.Error, "no response")
				span.SetAttributes(semconv.ErrorTypeKey.String(kind))
			case reply != nil && reply.Error != nil:
				code := strconv.Itoa(reply.Error.Code)
				span.SetStatus(codes.Error, "JSON-RPC error "+code)
				span.SetAttributes(semconv.RPCResponseStatusCode(code), semconv.ErrorTypeKey.String(code))
			}
			span.End()
			t.log.add(call)
		})
	}
}

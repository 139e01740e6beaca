// Package telemetry records one OpenTelemetry span per MCP call a run makes
// and exports them over OTLP/HTTP when the run ends. It also keeps the
// ordered log of those calls, so that a finding can name the span of the
// call that established it. A nil *Tracer is valid and does nothing: a run
// without --otlp-endpoint sets nothing up and records no ids.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Options configure a Tracer.
type Options struct {
	// Endpoint is the collector's OTLP/HTTP URL: a base URL such as
	// http://127.0.0.1:4318 (the /v1/traces path is added) or the full
	// traces URL.
	Endpoint string
	// ServiceVersion is recorded as service.version.
	ServiceVersion string
	// Timeout bounds the export (default 5 s). Export is attempted once,
	// without retries: a collector that is down costs at most this long.
	Timeout time.Duration
}

// Tracer creates the spans of one run and exports them at Flush.
type Tracer struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	exporter sdktrace.SpanExporter
	keep     *keeper
	log      callLog
	timeout  time.Duration
	endpoint string

	flushOnce sync.Once
	flushErr  error
}

// ErrEndpoint reports an --otlp-endpoint that is not an http(s) URL.
var ErrEndpoint = errors.New("telemetry: the OTLP endpoint must be an http:// or https:// URL with a host")

// TracesURL normalises an endpoint: a URL without a path gets /v1/traces.
func TracesURL(endpoint string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(endpoint))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", ErrEndpoint
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String(), nil
}

// New prepares a tracer exporting to o.Endpoint. Nothing is sent until
// Flush; the only error is an invalid endpoint.
func New(ctx context.Context, o Options) (*Tracer, error) {
	endpoint, err := TracesURL(o.Endpoint)
	if err != nil {
		return nil, err
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	exp, err := otlptracehttp.New(ctx,
		otlptracehttp.WithEndpointURL(endpoint),
		otlptracehttp.WithTimeout(o.Timeout),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}),
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP exporter: %w", err)
	}
	version := o.ServiceVersion
	if version == "" {
		version = "dev"
	}
	keep := &keeper{}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithSpanProcessor(keep),
		sdktrace.WithResource(resource.NewSchemaless(
			attribute.String("service.name", "mcpdrill"),
			attribute.String("service.version", version),
		)),
	)
	return &Tracer{provider: tp, tracer: tp.Tracer("github.com/mcpdrill/mcpdrill"), exporter: exp,
		keep: keep, timeout: o.Timeout, endpoint: endpoint}, nil
}

// Start opens the run's root span (e.g. "mcpdrill scan"); every call made
// with the returned context becomes its child. end closes the root span and
// must be called before Flush.
func (t *Tracer) Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, func()) {
	if t == nil {
		return ctx, func() {}
	}
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return ctx, func() { span.End() }
}

// Client returns a copy of base (nil: a plain client) whose transport
// records a span per MCP call. A nil Tracer returns base unchanged.
func (t *Tracer) Client(base *http.Client) *http.Client {
	if t == nil {
		return base
	}
	c := &http.Client{}
	if base != nil {
		*c = *base
	}
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = &transport{t: t, base: rt}
	return c
}

// Mark returns the current position in the call log.
func (t *Tracer) Mark() int {
	if t == nil {
		return 0
	}
	return t.log.mark()
}

// Since returns the calls recorded after mark, in order.
func (t *Tracer) Since(mark int) []Call {
	if t == nil {
		return nil
	}
	return t.log.since(mark)
}

// Flush exports every ended span once and shuts the exporter down. Its
// error is a warning for the user: the run's findings were established
// before the export was attempted and stand without it.
func (t *Tracer) Flush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	t.flushOnce.Do(func() {
		ctx, cancel := context.WithTimeout(ctx, t.timeout)
		defer cancel()
		spans := t.keep.take()
		var err error
		if len(spans) > 0 {
			err = t.exporter.ExportSpans(ctx, spans)
		}
		_ = t.provider.Shutdown(ctx)
		_ = t.exporter.Shutdown(ctx)
		if err != nil {
			t.flushErr = fmt.Errorf("telemetry: exporting %d span(s) to %s failed (findings are unaffected): %w", len(spans), t.endpoint, err)
		}
	})
	return t.flushErr
}

// keeper is a span processor that keeps ended spans for one export at the
// end of the run (bounded by maxCalls).
type keeper struct {
	mu    sync.Mutex
	spans []sdktrace.ReadOnlySpan
}

func (k *keeper) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

func (k *keeper) OnEnd(s sdktrace.ReadOnlySpan) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.spans) < maxCalls+1 {
		k.spans = append(k.spans, s)
	}
}

func (k *keeper) take() []sdktrace.ReadOnlySpan {
	k.mu.Lock()
	defer k.mu.Unlock()
	s := k.spans
	k.spans = nil
	return s
}

func (k *keeper) Shutdown(context.Context) error   { return nil }
func (k *keeper) ForceFlush(context.Context) error { return nil }

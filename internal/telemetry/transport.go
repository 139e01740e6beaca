package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// MetaRevision is the first protocol revision whose params._meta carries
// arbitrary namespaced keys, so that a W3C traceparent may travel in it.
const MetaRevision = "2025-06-18"

// maxTracedBody bounds the request body the transport inspects.
const maxTracedBody = 8 << 20

// transport records one CLIENT span per POSTed JSON-RPC request or
// notification. It sets the W3C traceparent header and, for the client's
// own requests on a revision that allows it, params._meta.traceparent.
// Responses the client posts back to server requests, GETs and DELETEs, and
// bodies over maxTracedBody pass through untraced.
type transport struct {
	t    *Tracer
	base http.RoundTripper
}

var propagator = propagation.TraceContext{}

func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.Body == nil || req.ContentLength > maxTracedBody {
		return tr.base.RoundTrip(req)
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxTracedBody+1))
	if err != nil {
		req.Body.Close()
		return nil, err
	}
	if len(body) > maxTracedBody {
		// An undeclared length turned out too large to inspect: send it on
		// untraced, the bytes already read first.
		out := req.Clone(req.Context())
		out.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), req.Body), req.Body}
		return tr.base.RoundTrip(out)
	}
	req.Body.Close()
	peek, perr := jsonrpc.PeekFrame(body)
	if perr == nil && (peek.Kind == jsonrpc.KindResponse || peek.Kind == jsonrpc.KindError) {
		return tr.base.RoundTrip(withBody(req, req.Context(), body))
	}
	rev := req.Header.Get("MCP-Protocol-Version")
	if peek.Method == "initialize" {
		rev = initializeRevision(body)
	}
	name, attrs := spanName(peek, rev,
		semconv.NetworkProtocolName("http"),
		semconv.NetworkTransportTCP,
		semconv.HTTPRequestMethodPost,
	)
	if host, port, err := net.SplitHostPort(req.URL.Host); err == nil {
		attrs = append(attrs, semconv.ServerAddress(host))
		if p, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, semconv.ServerPort(p))
		}
	} else if req.URL.Hostname() != "" {
		attrs = append(attrs, semconv.ServerAddress(req.URL.Hostname()))
	}
	ctx, span := tr.t.tracer.Start(req.Context(), name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	sc := span.SpanContext()
	call := Call{Method: peek.Method, Tool: peek.Tool, TraceID: sc.TraceID().String(), SpanID: sc.SpanID().String()}

	if perr == nil && peek.Kind == jsonrpc.KindRequest && ownID(peek.ID) && rev >= MetaRevision {
		if b, ok := withMetaTraceparent(body, traceparent(ctx)); ok {
			body = b
			span.SetAttributes(attribute.Bool("mcpdrill.traceparent_in_meta", true))
		}
	}
	out := withBody(req, ctx, body)
	propagator.Inject(ctx, propagation.HeaderCarrier(out.Header))

	resp, err := tr.base.RoundTrip(out)
	if err != nil {
		span.SetStatus(codes.Error, "no response")
		span.SetAttributes(semconv.ErrorTypeKey.String("transport"))
		span.End()
		tr.t.log.add(call)
		return nil, err
	}
	call.Status = resp.StatusCode
	span.SetAttributes(semconv.HTTPResponseStatusCode(resp.StatusCode))
	if resp.StatusCode >= 400 {
		span.SetStatus(codes.Error, http.StatusText(resp.StatusCode))
		span.SetAttributes(semconv.ErrorTypeKey.String(strconv.Itoa(resp.StatusCode)))
	}
	tr.t.log.add(call)
	resp.Body = &endOnClose{ReadCloser: resp.Body, span: span}
	return resp, nil
}

// spanName returns the span name and the MCP / GenAI attributes (after
// the transport's own) of a client frame sent under revision rev.
func spanName(peek jsonrpc.Peek, rev string, attrs ...attribute.KeyValue) (string, []attribute.KeyValue) {
	name := peek.Method
	if name == "" {
		name = "mcp.unparsed_frame"
	}
	if peek.Method != "" {
		attrs = append(attrs, semconv.McpMethodNameKey.String(peek.Method))
	}
	if rev != "" {
		attrs = append(attrs, semconv.McpProtocolVersion(rev))
	}
	if len(peek.ID) > 0 {
		attrs = append(attrs, semconv.JSONRPCRequestID(strings.Trim(string(peek.ID), `"`)))
	}
	if peek.Method == "tools/call" && peek.Tool != "" {
		name += " " + peek.Tool
		attrs = append(attrs, semconv.GenAIToolName(peek.Tool), semconv.GenAIOperationNameExecuteTool)
	}
	return name, attrs
}

// withBody clones req with a new context and body.
func withBody(req *http.Request, ctx context.Context, body []byte) *http.Request {
	out := req.Clone(ctx)
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return out
}

// ownID reports whether a request id is one the client generated (a JSON
// number). Probe frames with string ids are sent byte for byte and are
// never rewritten.
func ownID(id json.RawMessage) bool {
	_, err := strconv.ParseInt(string(id), 10, 64)
	return err == nil
}

func traceparent(ctx context.Context) string {
	c := propagation.MapCarrier{}
	propagator.Inject(ctx, c)
	return c["traceparent"]
}

func initializeRevision(body []byte) string {
	var f struct {
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &f)
	return f.Params.ProtocolVersion
}

// withMetaTraceparent adds params._meta.traceparent to a request frame whose
// params is an object (or absent). Other members are kept as sent.
func withMetaTraceparent(body []byte, tp string) ([]byte, bool) {
	if tp == "" {
		return nil, false
	}
	var frame map[string]json.RawMessage
	if json.Unmarshal(body, &frame) != nil || frame == nil {
		return nil, false
	}
	params := map[string]json.RawMessage{}
	if raw, ok := frame["params"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &params) != nil {
			return nil, false
		}
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := params["_meta"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &meta) != nil {
			return nil, false
		}
	}
	var ok bool
	if meta["traceparent"], ok = marshalRaw(tp); !ok {
		return nil, false
	}
	if params["_meta"], ok = marshalRaw(meta); !ok {
		return nil, false
	}
	if frame["params"], ok = marshalRaw(params); !ok {
		return nil, false
	}
	return marshalRaw(frame)
}

// marshalRaw encodes v without HTML escaping, so that members copied from
// the original frame keep their bytes' meaning and form.
func marshalRaw(v any) (json.RawMessage, bool) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return nil, false
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), true
}

// endOnClose ends the call's span when the client has read the reply.
type endOnClose struct {
	io.ReadCloser
	span trace.Span
	once sync.Once
}

func (e *endOnClose) Close() error {
	err := e.ReadCloser.Close()
	e.once.Do(func() { e.span.End() })
	return err
}

// Package tracing is the OpenTelemetry tracing of pling authority and
// pling gateway: a W3C traceparent on a request is accepted (the server
// span continues the caller's trace) and passed on to the gateway's
// upstream; spans are exported over OTLP/HTTP when the standard
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is
// set (with the other OTEL_* variables the exporter reads), and made by
// no one otherwise (the trace context is still passed on). A span holds
// the method, the route pattern and the status: never a path value, a
// body, a header or a credential.
package tracing

import (
	"context"
	"net/http"
	"os"
	"strconv"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
)

// traceContext is the W3C propagator, used whatever the global one is.
var traceContext = propagation.TraceContext{}

// Setup installs the W3C trace-context propagator and, when an OTLP
// endpoint is configured in the environment, a tracer provider that
// exports to it in batches. The returned shutdown flushes the spans.
func Setup(ctx context.Context, service string) (shutdown func(context.Context) error, err error) {
	otel.SetTextMapPropagator(propagation.TraceContext{})
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, err
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(service)))
	if err != nil {
		res = resource.Default()
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	return tp.Shutdown, nil
}

// statusWriter remembers the status for the span.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(s int)           { w.status = s; w.ResponseWriter.WriteHeader(s) }
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
func (w *statusWriter) Write(b []byte) (int, error) { return w.ResponseWriter.Write(b) }
func (w *statusWriter) Flush()                      { http.NewResponseController(w.ResponseWriter).Flush() }

var _ http.Flusher = (*statusWriter)(nil)

// Middleware continues the caller's trace (traceparent) in a server span
// per request, named by the method and the route pattern the handler's
// ServeMux matched (never the raw path, which may hold ids).
func Middleware(tracerName string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := traceContext.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := otel.Tracer(tracerName).Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method)))
		defer span.End()
		sw := &statusWriter{ResponseWriter: w, status: 200}
		r = r.WithContext(ctx)
		next.ServeHTTP(sw, r)
		if r.Pattern != "" {
			span.SetName(r.Pattern)
			span.SetAttributes(attribute.String("http.route", r.Pattern))
		}
		span.SetAttributes(attribute.Int("http.response.status_code", sw.status))
		if sw.status >= 500 {
			span.SetStatus(codes.Error, strconv.Itoa(sw.status))
		}
	})
}

// Inject writes the trace context of ctx (traceparent) into h, for an
// outgoing request. The caller's tracestate is left out: it is the
// caller's vendors' data (tenant or user ids, sampling keys), and the
// request goes to a third party (the gateway's model provider).
func Inject(ctx context.Context, h http.Header) {
	if sc := trace.SpanContextFromContext(ctx); sc.TraceState().Len() > 0 {
		ctx = trace.ContextWithSpanContext(ctx, sc.WithTraceState(trace.TraceState{}))
	}
	traceContext.Inject(ctx, propagation.HeaderCarrier(h))
}

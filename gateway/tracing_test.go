package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pling-go/pling/gateway"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestTraceparentPropagated: a caller's W3C traceparent is continued in
// the gateway's server span (exported, with the caller's span as parent)
// and passed on to the upstream in the same trace, with the gateway's span
// as the upstream's parent. The caller's tracestate (vendor data of the
// site's tracing) is not passed to the provider.
func TestTraceparentPropagated(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev); tp.Shutdown(context.Background()) })

	var mu sync.Mutex
	var upstreamTP, upstreamTS string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		upstreamTP, upstreamTS = r.Header.Get("Traceparent"), r.Header.Get("Tracestate")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"x","object":"chat.completion","created":1,"model":"` + model + `","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`))
	}))
	defer up.Close()
	srv := gateway.New(gateway.Config{Upstream: up.URL, UpstreamKey: upstreamKey, Models: []string{model}, SiteKeys: []string{siteKey}})
	gw := httptest.NewServer(srv.Handler())
	defer gw.Close()

	const traceID, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req, _ := http.NewRequest("POST", gw.URL+"/v1/chat/completions", strings.NewReader(`{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+siteKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Traceparent", "00-"+traceID+"-"+callerSpan+"-01")
	req.Header.Set("Tracestate", "site=user-4711,vendor=internal-tenant")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	// The span ends when the handler returns, which may be just after the
	// caller has read the answer.
	waitFor(t, "the server span to end", func() bool { return len(rec.Ended()) > 0 })
	spans := rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want the server span", len(spans))
	}
	s := spans[0]
	mu.Lock()
	gotUp, gotTS := upstreamTP, upstreamTS
	mu.Unlock()
	got := map[string]string{"name": s.Name(), "trace": s.SpanContext().TraceID().String(), "parent": s.Parent().SpanID().String(),
		"upstream traceparent": gotUp, "upstream tracestate": gotTS}
	want := map[string]string{"name": "POST /v1/chat/completions", "trace": traceID, "parent": callerSpan,
		"upstream traceparent": "00-" + traceID + "-" + s.SpanContext().SpanID().String() + "-01", "upstream tracestate": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
}

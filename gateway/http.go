package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/tracing"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	upstream prometheus.Histogram
	streams  prometheus.Gauge
	bytes    prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pling_gateway_requests_total",
			Help: "Requests by route, HTTP status and gateway error code (\"\" when none)."}, []string{"route", "code", "error"}),
		upstream: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pling_gateway_upstream_seconds",
			Help: "Time until the upstream's response headers.", Buckets: prometheus.DefBuckets}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{Name: "pling_gateway_streams_in_flight",
			Help: "Streamed completions being passed on now."}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "pling_gateway_streamed_bytes_total",
			Help: "Answer bytes passed from the upstream to callers."}),
	}
	m.reg.MustRegister(m.requests, m.upstream, m.streams, m.bytes,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// statusWriter remembers what a handler answered, for the metrics and the
// log line. It unwraps for http.ResponseController (flush, deadlines).
type statusWriter struct {
	http.ResponseWriter
	status  int
	errCode perr.Code
	model   string
}

func (w *statusWriter) WriteHeader(s int) { w.status = s; w.ResponseWriter.WriteHeader(s) }

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Handler is the production handler: the two OpenAI routes, GET /healthz
// (alive), GET /readyz (configured, and the authority's keys fetched when
// tokens are in use) and GET /metrics. Each request is logged by route,
// status, error code, model and duration: never a body, a prompt, a key or
// a token.
func (s *Server) Handler() http.Handler {
	m := http.NewServeMux()
	m.HandleFunc("POST /v1/chat/completions", s.chat)
	m.HandleFunc("GET /v1/models", s.listModels)
	m.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, map[string]string{"status": "ok"}) })
	m.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if why := s.Misconfigured(); why != "" {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": why})
			return
		}
		if p, ok := s.cfg.Limiter.(interface{ Ping(context.Context) error }); ok {
			// Every completion takes a token from this store: while it
			// does not answer, every call is refused 429.
			if err := p.Ping(r.Context()); err != nil {
				writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "rate limit store unavailable"})
				return
			}
		}
		if s.cfg.Tokens != nil {
			// What the followers wait for: the keys, the feed's first
			// read (with its progress), a re-read, or an answer.
			if why := s.cfg.Tokens.Waiting(); why != "" {
				writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": why})
				return
			}
		}
		writeJSON(w, 200, map[string]string{"status": "ready"})
	})
	if !s.cfg.SeparateMetrics {
		m.Handle("GET /metrics", s.MetricsHandler())
	}
	// A W3C traceparent is continued in a server span and passed on to
	// the upstream (internal/tracing).
	return tracing.Middleware("pling-gateway", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: 200}
		_, route := m.Handler(r)
		if route == "" {
			route = "other"
		}
		m.ServeHTTP(sw, r)
		d := time.Since(start)
		s.metrics.requests.WithLabelValues(route, strconv.Itoa(sw.status), string(sw.errCode)).Inc()
		s.cfg.Logger.Info("request", "route", route, "status", sw.status, "error", string(sw.errCode),
			"model", sw.model, "ms", d.Milliseconds())
	}))
}

// MetricsHandler serves the gateway's metrics (with the Go runtime's and
// the process's), for an admin address of their own.
func (s *Server) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

package authority

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/pling-go/pling/internal/tracing"
	"github.com/prometheus/client_golang/prometheus"
)

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(s int) { w.status = s; w.ResponseWriter.WriteHeader(s) }

// Unwrap lets http.ResponseController reach the connection (flush,
// deadlines, full duplex).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Handler is the production handler: the delegation map, GET /healthz
// (alive), GET /readyz (the store answers a ping within 2s) and GET
// /metrics (Prometheus: requests and latencies by route and status, store
// errors), with each request logged by route and status, never by body or
// credential.
func (s *Server) buildHandler() http.Handler {
	reg := s.registry()
	reqs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pling_authority_requests_total",
		Help: "Requests by route and HTTP status."}, []string{"route", "code"})
	lat := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "pling_authority_request_seconds",
		Help: "Request latency by route.", Buckets: prometheus.DefBuckets}, []string{"route"})
	reg.MustRegister(reqs, lat, s.storeErrors, s.limited, s.cont.leaseHeld, s.cont.replays, s.waitersG)
	reg.MustRegister(s.sweeps.collectors()...)
	m := http.NewServeMux()
	m.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, map[string]string{"status": "ok"}) })
	m.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := s.cfg.Store.Ping(ctx); err != nil {
			s.storeErrors.Inc()
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "store unreachable"})
			return
		}
		if sq, ok := s.raw.(*sqlStore); ok {
			have, want, err := sq.schemaVersions(ctx)
			if err != nil {
				s.storeErrors.Inc()
				writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "store unreachable"})
				return
			}
			if have < want {
				// migrate down ran under this release: its writes fail.
				writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": fmt.Sprintf(
					"store migrated down to %05d; this release needs %05d (pling authority migrate up, or run the older release)", have, want)})
				return
			}
		}
		writeJSON(w, 200, map[string]string{"status": "ready"})
	})
	if !s.cfg.SeparateMetrics {
		m.Handle("GET /metrics", s.MetricsHandler())
	}
	m.Handle("/", s)
	return tracing.Middleware("pling-authority", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: 200}
		_, route := s.mux.Handler(r)
		if route == "" {
			_, route = m.Handler(r)
		}
		if route == "" || route == "/" {
			route = "other"
		}
		m.ServeHTTP(sw, r)
		d := time.Since(start)
		reqs.WithLabelValues(route, strconv.Itoa(sw.status)).Inc()
		lat.WithLabelValues(route).Observe(d.Seconds())
		s.cfg.Logger.Info("request", "route", route, "status", sw.status, "ms", d.Milliseconds())
	}))
}

package authority

import (
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metricsRegistry is the server's Prometheus registry, made once: the
// Go runtime's and the process's collectors (goroutines, GC, heap; CPU,
// memory, open files) beside the authority's own.
type metricsRegistry struct {
	once  sync.Once
	reg   *prometheus.Registry
	hOnce sync.Once
	h     http.Handler
}

// Handler is the production handler (buildHandler, http.go), built once:
// its metrics are registered once however often it is asked for.
func (s *Server) Handler() http.Handler {
	s.metricsReg.hOnce.Do(func() { s.metricsReg.h = s.buildHandler() })
	return s.metricsReg.h
}

func (s *Server) registry() *prometheus.Registry {
	s.metricsReg.once.Do(func() {
		r := prometheus.NewRegistry()
		r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		s.metricsReg.reg = r
	})
	return s.metricsReg.reg
}

// MetricsHandler serves GET /metrics. With Config.SeparateMetrics, Handler
// does not, and an operator serves this on an admin address of its own
// (pling authority --metrics-addr), so that the metrics are not on the
// public one.
func (s *Server) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(s.registry(), promhttp.HandlerOpts{})
}

package gateway_test

import (
	"testing"

	"github.com/pling-go/pling/gateway"
	"github.com/pling-go/pling/internal/testing/httpcheck"
)

// TestMetricsOnAdminAddress: with SeparateMetrics the public handler has
// no /metrics; MetricsHandler serves the gateway's metrics with the Go
// runtime's and the process's.
func TestMetricsOnAdminAddress(t *testing.T) {
	e := start(t, answer("hi"), func(c *gateway.Config) { c.SeparateMetrics = true })
	httpcheck.SeparateMetrics(t, e.gw.URL, e.srv.MetricsHandler(), "pling_gateway_requests_total")
}

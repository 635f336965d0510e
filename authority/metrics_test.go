package authority_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/testing/httpcheck"
)

// TestMetricsSeparateAndRuntime: with SeparateMetrics the public handler
// has no /metrics; MetricsHandler (the admin address) serves the
// authority's metrics with the Go runtime's, the process's and the
// sweeper's.
func TestMetricsSeparateAndRuntime(t *testing.T) {
	srv, err := authority.NewServer(context.Background(), authority.Config{Store: openSQLite(t),
		Audiences: map[string][]string{origin: {"*"}}, SeparateMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.SweepOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	pub := httptest.NewServer(srv.Handler())
	defer pub.Close()
	httpcheck.SeparateMetrics(t, pub.URL, srv.MetricsHandler(), "pling_authority_sweeps_total", "pling_authority_requests_total")
}

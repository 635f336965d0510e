package authority_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pling-go/pling/authority"
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
	res, err := http.Get(pub.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	got := map[string]bool{"public /metrics answers": res.StatusCode == 200}
	admin := httptest.NewServer(srv.MetricsHandler())
	defer admin.Close()
	res, err = http.Get(admin.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "pling_authority_sweeps_total", "pling_authority_requests_total"} {
		got[name] = strings.Contains(string(b), name)
	}
	want := map[string]bool{"public /metrics answers": false, "go_goroutines": true, "process_resident_memory_bytes": true,
		"pling_authority_sweeps_total": true, "pling_authority_requests_total": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

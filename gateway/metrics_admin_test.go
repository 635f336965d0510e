package gateway_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pling-go/pling/gateway"
)

// TestMetricsOnAdminAddress: with SeparateMetrics the public handler has
// no /metrics; MetricsHandler serves the gateway's metrics with the Go
// runtime's and the process's.
func TestMetricsOnAdminAddress(t *testing.T) {
	e := start(t, answer("hi"), func(c *gateway.Config) { c.SeparateMetrics = true })
	res, err := http.Get(e.gw.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	got := map[string]bool{"public /metrics answers": res.StatusCode == 200}
	admin := httptest.NewServer(e.srv.MetricsHandler())
	defer admin.Close()
	res, err = http.Get(admin.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "pling_gateway_requests_total"} {
		got[name] = strings.Contains(string(b), name)
	}
	want := map[string]bool{"public /metrics answers": false, "go_goroutines": true, "process_resident_memory_bytes": true, "pling_gateway_requests_total": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

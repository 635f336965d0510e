package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/gateway"
	"github.com/pling-go/pling/internal/testing/httpcheck"
	"github.com/pling-go/pling/internal/testing/pgtest"
	"github.com/pling-go/pling/internal/testing/scripted"
)

// TestMain stops the package's throwaway PostgreSQL after the tests.
func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// limitsInstances is how many gateway instances share one caller's limit.
const limitsInstances = 3

// instances runs n gateways in front of one scripted upstream; limiter
// gives instance i its limiter (nil: the in-memory default of rate and
// burst).
func instances(t *testing.T, n int, rate float64, burst int, limiter func(i int) gateway.Limiter) ([]*httptest.Server, *scripted.Server) {
	t.Helper()
	up, err := scripted.Start(answer("ok"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.Close)
	var gws []*httptest.Server
	for i := range n {
		cfg := gateway.Config{Upstream: up.URL, UpstreamKey: upstreamKey, Models: []string{model},
			SiteKeys: []string{siteKey}, RatePerSecond: rate, Burst: burst, UpstreamTimeout: 2 * time.Second}
		if limiter != nil {
			cfg.Limiter = limiter(i)
		}
		gw := httptest.NewServer(gateway.New(cfg).Handler())
		t.Cleanup(gw.Close)
		gws = append(gws, gw)
	}
	return gws, up
}

// complete sends one completion to gw as the site and returns the status
// and the Retry-After header.
func complete(t *testing.T, gw *httptest.Server) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", gw.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+siteKey)
	res, err := gw.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode, res.Header.Get("Retry-After")
}

// roundRobin sends calls completions, one instance after the other, and
// returns how many were allowed and how many the limit allowed in the
// time they took (burst plus the refill).
func roundRobin(t *testing.T, gws []*httptest.Server, calls int, rate float64, burst int) (allowed int, limit float64) {
	t.Helper()
	began := time.Now()
	for i := range calls {
		switch code, _ := complete(t, gws[i%len(gws)]); code {
		case http.StatusOK:
			allowed++
		case http.StatusTooManyRequests:
		default:
			t.Fatalf("call %d: status %d", i, code)
		}
	}
	return allowed, float64(burst) + rate*time.Since(began).Seconds()
}

// TestGatewayLimitsSharedAcrossInstances: three gateways sharing one
// store allow one caller its limit once (allowed ÷ limit ≤ 1.1), where
// three in-memory limiters allow it three times.
func TestGatewayLimitsSharedAcrossInstances(t *testing.T) {
	const rate, burst = 0.01, 10
	calls := 4 * limitsInstances * burst

	t.Run("memory", func(t *testing.T) {
		gws, _ := instances(t, limitsInstances, rate, burst, nil)
		allowed, limit := roundRobin(t, gws, calls, rate, burst)
		t.Logf("in memory, %d instances: %d allowed, limit %.2f, ratio %.2f", limitsInstances, allowed, limit, float64(allowed)/limit)
		if float64(allowed) < float64(limitsInstances*burst) {
			t.Errorf("%d allowed; each in-memory instance should allow the burst (%d in all)", allowed, limitsInstances*burst)
		}
	})

	stores := []struct {
		name string
		spec func(t *testing.T) authority.StoreSpec
	}{
		{"sqlite", func(t *testing.T) authority.StoreSpec {
			return authority.StoreSpec("sqlite:" + filepath.Join(t.TempDir(), "limits.db"))
		}},
		{"postgres", func(t *testing.T) authority.StoreSpec {
			if testing.Short() {
				t.Skip("PostgreSQL: not under -short")
			}
			return authority.StoreSpec(pgtest.DSN(t))
		}},
	}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			spec := st.spec(t)
			gws, up := instances(t, limitsInstances, rate, burst, func(int) gateway.Limiter {
				// Each instance opens the store itself, as a process would.
				s, err := authority.Open(context.Background(), spec)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return &authority.StoreLimiter{Store: s, Prefix: "gateway:", Burst: burst, PerSecond: rate, Now: time.Now}
			})
			allowed, limit := roundRobin(t, gws, calls, rate, burst)
			ratio := float64(allowed) / limit
			t.Logf("store %s, %d instances: %d allowed, limit %.2f, ratio %.2f", st.name, limitsInstances, allowed, limit, ratio)
			if ratio > 1.1 || allowed < burst {
				t.Errorf("%d allowed across %d instances, limit %.2f (ratio %.2f): want the burst at least and ratio ≤ 1.1",
					allowed, limitsInstances, limit, ratio)
			}
			if calls := up.Calls(); calls != int64(allowed) {
				t.Errorf("upstream saw %d calls, want the %d allowed", calls, allowed)
			}
		})
	}
}

// TestGatewayLimitsStoreDownRefuses: a limits store that fails refuses
// the call (fail closed) as GATEWAY_RATE_LIMITED with Retry-After 1, and
// the upstream never sees it.
func TestGatewayLimitsStoreDownRefuses(t *testing.T) {
	s, err := authority.Open(context.Background(), authority.StoreSpec("sqlite:"+filepath.Join(t.TempDir(), "limits.db")))
	if err != nil {
		t.Fatal(err)
	}
	gws, up := instances(t, 1, 1, 5, func(int) gateway.Limiter {
		return &authority.StoreLimiter{Store: s, Prefix: "gateway:", Burst: 5, PerSecond: 1, Now: time.Now}
	})
	if code, _ := complete(t, gws[0]); code != http.StatusOK {
		t.Fatalf("with the store up: status %d", code)
	}
	s.Close()
	type answer struct {
		Status     int
		RetryAfter string
	}
	code, retry := complete(t, gws[0])
	if diff := cmp.Diff(answer{http.StatusTooManyRequests, "1"}, answer{code, retry}); diff != "" {
		t.Errorf("with the store down (-want +got):\n%s", diff)
	}
	if calls := up.Calls(); calls != 1 {
		t.Errorf("upstream saw %d calls, want 1: a call the store could not count must not reach it", calls)
	}
	// And /readyz says so, so that a balancer takes the instance out
	// instead of sending it calls it can only refuse.
	code, b := httpcheck.Get(t, gws[0].URL+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(b, "rate limit store unavailable") {
		t.Errorf("/readyz with the limits store down: %d %s, want 503 rate limit store unavailable", code, b)
	}
}

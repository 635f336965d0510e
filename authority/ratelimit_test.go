package authority_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/authority"
)

// postFrom sends POST /v1/delegations from the loopback address local
// (127.0.0.1, 127.0.0.2: two clients of one machine).
func postFrom(t *testing.T, f *fixture, local string) (int, string, map[string]any) {
	t.Helper()
	r := send(t, fromAddress(local), nil, "POST", f.url+"/v1/delegations", "", nil,
		map[string]any{"audience": origin, "scope": []string{"orders.read"}, "ttlSeconds": 600, "agent": "a"})
	return r.Status, r.Header.Get("Retry-After"), r.Body
}

// TestCreateRateLimit: POST /v1/delegations is a token bucket per client
// IP: past the burst a client gets 429 RATE_LIMITED with Retry-After and
// retryAfterMs; another address is not affected; the bucket refills at
// the configured rate.
func TestCreateRateLimit(t *testing.T) {
	f := newFixture(t, openSQLite(t), func(c *authority.Config) { c.CreateBurst, c.CreatePerSecond = 2, 0.25 })
	type answer struct {
		Status     int
		RetryAfter string
		Code       string
		RetryMs    float64
	}
	ask := func(local string) answer {
		st, ra, b := postFrom(t, f, local)
		a := answer{Status: st, RetryAfter: ra}
		if e, ok := b["error"].(map[string]any); ok {
			a.Code, _ = e["code"].(string)
			if d, ok := e["details"].(map[string]any); ok {
				a.RetryMs, _ = d["retryAfterMs"].(float64)
			}
		}
		return a
	}
	created := answer{Status: 201}
	limited := answer{Status: 429, RetryAfter: "4", Code: "RATE_LIMITED", RetryMs: 4000}
	steps := []struct {
		name    string
		advance time.Duration
		from    string
		want    answer
	}{
		{"first of the burst", 0, "127.0.0.1", created},
		{"second of the burst", 0, "127.0.0.1", created},
		{"past the burst", 0, "127.0.0.1", limited},
		{"another address has its own bucket", 0, "127.0.0.2", created},
		{"not refilled yet", 3 * time.Second, "127.0.0.1", answer{Status: 429, RetryAfter: "1", Code: "RATE_LIMITED", RetryMs: 1000}},
		{"one token back", time.Second, "127.0.0.1", created},
		{"and spent", 0, "127.0.0.1", limited},
	}
	for _, s := range steps {
		f.advance(s.advance)
		if diff := cmp.Diff(s.want, ask(s.from)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", s.name, diff)
		}
	}
}

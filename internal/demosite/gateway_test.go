package demosite_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/pling-go/pling/gateway"
	"github.com/pling-go/pling/internal/demosite"
	"github.com/pling-go/pling/internal/testing/scripted"
)

// TestGatewayProxy: the site's /gateway/ reaches the gateway with the
// site key (the browser's cookies and credentials dropped), streams pass
// through, and nothing but the two OpenAI routes is forwarded.
func TestGatewayProxy(t *testing.T) {
	target := gatewayBehind(t, scripted.Reply{Content: "hello there", ChunkSize: 3}, nil)
	site := httptest.NewServer(demosite.GatewayProxy(target, "the-site-key"))
	defer site.Close()
	tests := []struct {
		name, method, path, auth, body string
		status                         int
		has                            string
	}{
		{"models", "GET", "/gateway/v1/models", "", "", 200, `"id":"m"`},
		{"stream", "POST", "/gateway/v1/chat/completions", "Bearer page-supplied", `{"model":"m","stream":true,"messages":[]}`, 200, `"content":"the"`},
		{"other gateway route", "GET", "/gateway/metrics", "", "", 404, ""},
		{"escape", "GET", "/gateway/../v1/models", "", "", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, site.URL+tt.path, strings.NewReader(tt.body))
			req.Header.Set("Cookie", "session=browser")
			if tt.method == "POST" {
				req.Header.Set("Content-Type", "application/json")
			}
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tt.status || !strings.Contains(string(b), tt.has) {
				t.Errorf("%s: %d %s, want %d with %s", tt.name, res.StatusCode, b, tt.status, tt.has)
			}
		})
	}
}

// TestGatewayProxyOnlyForTheSite: the proxy spends
// the site key, so a request a browser marks as from another site, a POST
// that is not JSON (a cross-site "simple request" is text/plain or a
// form) and a visitor past its own budget are refused before the gateway
// sees them; another visitor is not held up. Without these checks the
// cross-site text/plain POST would be forwarded with the site key (200)
// and one visitor's burst at the key's limit would make everyone's
// requests 429.
func TestGatewayProxyOnlyForTheSite(t *testing.T) {
	target := gatewayBehind(t, scripted.Reply{Content: "hi"}, func(c *gateway.Config) { c.Burst = 1000; c.RatePerSecond = 1000 })
	h := demosite.GatewayProxy(target, "the-site-key")
	call := func(method, path, from string, hdr map[string]string) int {
		body := `{"model":"m","messages":[{"role":"user","content":"x"}]}`
		req := httptest.NewRequest(method, "http://shop.example"+path, strings.NewReader(body))
		req.RemoteAddr = from + ":5555"
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	const chat = "/gateway/v1/chat/completions"
	json := map[string]string{"Content-Type": "application/json"}
	for _, tc := range []struct {
		name   string
		hdr    map[string]string
		status int
	}{
		{"same-origin JSON", map[string]string{"Content-Type": "application/json", "Origin": "http://shop.example", "Sec-Fetch-Site": "same-origin"}, 200},
		{"no browser headers, JSON", json, 200},
		{"foreign Origin, text/plain", map[string]string{"Content-Type": "text/plain", "Origin": "https://evil.example"}, 403},
		{"foreign Origin, JSON", map[string]string{"Content-Type": "application/json", "Origin": "https://evil.example"}, 403},
		{"Sec-Fetch-Site cross-site", map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, 403},
		{"Sec-Fetch-Site same-site", map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "same-site"}, 403},
		{"null Origin", map[string]string{"Content-Type": "application/json", "Origin": "null"}, 403},
		{"same-origin text/plain", map[string]string{"Content-Type": "text/plain", "Origin": "http://shop.example"}, 415},
		{"form", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415},
		{"no content type", nil, 415},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := call("POST", chat, "192.0.2.1", tc.hdr); got != tc.status {
				t.Errorf("HTTP %d, want %d", got, tc.status)
			}
		})
	}
	// A GET is not a state change, so http.CrossOriginProtection lets it
	// through: the proxy's own Origin and Sec-Fetch-Site checks are what
	// keep another site's page from reading the key's model list.
	for _, tc := range []struct {
		name   string
		hdr    map[string]string
		status int
	}{
		{"GET same-origin", map[string]string{"Origin": "http://shop.example", "Sec-Fetch-Site": "same-origin"}, 200},
		{"GET typed in the address bar", map[string]string{"Sec-Fetch-Site": "none"}, 200},
		{"GET cross-site", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"GET same-site", map[string]string{"Sec-Fetch-Site": "same-site"}, 403},
		{"GET foreign Origin", map[string]string{"Origin": "https://evil.example"}, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := call("GET", "/gateway/v1/models", "192.0.2.2", tc.hdr); got != tc.status {
				t.Errorf("HTTP %d, want %d", got, tc.status)
			}
		})
	}
	t.Run("each visitor is limited, not only the key", func(t *testing.T) {
		got := 0
		for range 100 {
			if call("GET", "/gateway/v1/models", "198.51.100.7", nil) == http.StatusTooManyRequests {
				got++
			}
		}
		if got == 0 {
			t.Fatalf("100 requests in a row from one visitor were never limited")
		}
		if st := call("GET", "/gateway/v1/models", "203.0.113.9", nil); st != 200 {
			t.Errorf("another visitor after the first one's burst: HTTP %d, want 200", st)
		}
	})
}

// TestGatewayVisitorShare: behind a gateway with its default limits for
// the site key, one visitor who sends as fast as it can spends only its
// own small share of the key's burst: another address is answered right
// after. Were a visitor's burst the key's own (20), one address would
// empty the key's bucket and the next visitors would get 429.
func TestGatewayVisitorShare(t *testing.T) {
	target := gatewayBehind(t, scripted.Reply{Content: "hi"}, nil)
	h := demosite.GatewayProxy(target, "the-site-key")
	call := func(from string) int {
		req := httptest.NewRequest("POST", "http://shop.example/gateway/v1/chat/completions",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"x"}]}`))
		req.Header.Set("Content-Type", "application/json")
		req.RemoteAddr = from + ":5555"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	spent := 0
	for range 100 {
		if call("198.51.100.7") == http.StatusOK {
			spent++
		}
	}
	if spent >= gateway.DefaultBurst/2 {
		t.Errorf("one visitor got %d of the key's burst of %d", spent, gateway.DefaultBurst)
	}
	got := map[int]int{}
	for i := range 3 {
		for range 3 {
			got[call("203.0.113."+strconv.Itoa(i+1))]++
		}
	}
	if got[http.StatusOK] != 9 {
		t.Errorf("three other visitors after the first one's flood: %v, want 9 × 200", got)
	}
}

// gatewayBehind starts a gateway for the site key "the-site-key" in front
// of a scripted upstream that answers reply, with set (when not nil)
// changing its config, and returns its address, for the site's proxy to
// forward to. Both stop when the test ends.
func gatewayBehind(t *testing.T, reply scripted.Reply, set func(*gateway.Config)) *url.URL {
	t.Helper()
	up, err := scripted.Start(func(scripted.Request) scripted.Reply { return reply })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.Close)
	cfg := gateway.Config{Upstream: up.URL, UpstreamKey: "sk", Models: []string{"m"},
		SiteKeys: []string{"the-site-key"}, Logger: slog.New(slog.DiscardHandler)}
	if set != nil {
		set(&cfg)
	}
	gw := httptest.NewServer(gateway.New(cfg).Handler())
	t.Cleanup(gw.Close)
	target, err := url.Parse(gw.URL)
	if err != nil {
		t.Fatal(err)
	}
	return target
}

package demosite_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
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
	up, err := scripted.Start(func(scripted.Request) scripted.Reply { return scripted.Reply{Content: "hello there", ChunkSize: 3} })
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	gw := httptest.NewServer(gateway.New(gateway.Config{Upstream: up.URL, UpstreamKey: "sk", Models: []string{"m"},
		SiteKeys: []string{"the-site-key"}, Logger: slog.New(slog.DiscardHandler)}).Handler())
	defer gw.Close()
	target, _ := url.Parse(gw.URL)
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

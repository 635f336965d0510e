package demosite

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	perr "github.com/pling-go/pling/errors"
)

// GatewayProxy forwards the demo site's /gateway/… to a pling gateway at
// target (…/gateway/v1/chat/completions → target/v1/chat/completions),
// as the site's backend: it sends the site key, which the page never
// sees, and drops the browser's own credentials. Streams are flushed as
// they come. The in-page assistant (assets/assistant.js) talks to it
// same-origin, so the site's CSP (connect-src 'self') holds.
func GatewayProxy(target *url.URL, siteKey string) http.Handler {
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.URL.Path = strings.TrimSuffix(target.Path, "/") + strings.TrimPrefix(pr.In.URL.Path, "/gateway")
			pr.Out.URL.RawPath = ""
			pr.Out.Header.Del("Cookie")
			pr.Out.Header.Set("Authorization", "Bearer "+siteKey)
		},
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			status, body := perr.RenderGateway(perr.New(perr.GatewayUpstreamUnavailable, "The gateway cannot be reached", nil))
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write(body)
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/gateway/v1/chat/completions", "/gateway/v1/models":
		default:
			http.NotFound(w, r)
			return
		}
		// The body cap is the gateway's; this only keeps a runaway upload
		// from being streamed on for ever.
		r.Body = http.MaxBytesReader(w, r.Body, 8<<20)
		w.Header().Set("Cross-Origin-Resource-Policy", "same-origin")
		rp.ServeHTTP(w, r)
	})
}

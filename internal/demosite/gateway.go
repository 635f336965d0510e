package demosite

import (
	"mime"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/gateway"
)

// Each visitor (client address) of the proxy gets its own token bucket,
// a small share of the site key's at the gateway (gateway.DefaultBurst,
// DefaultRatePerSecond): a quarter of its burst and of its rate, so one
// visitor cannot spend the key's budget for everyone (docs/gateway.md
// "Behind a site"), while one question of the assistant (up to 8 model
// turns, assets/assistant.js) mostly fits: 5 at once, then one every 2 s
// as the model answers. With the visitor's burst equal to the key's, one
// address emptied it and every other got 429.
const (
	visitorBurst     = gateway.DefaultBurst / 4
	visitorPerSecond = gateway.DefaultRatePerSecond / 4
	maxVisitors      = 10_000 // buckets kept; a full table is cleared of idle ones
)

// GatewayProxy forwards the demo site's /gateway/… to a pling gateway at
// target (…/gateway/v1/chat/completions → target/v1/chat/completions),
// as the site's backend: it sends the site key, which the page never
// sees, and drops the browser's own credentials. Streams are flushed as
// they come. The in-page assistant (assets/assistant.js) talks to it
// same-origin, so the site's CSP (connect-src 'self') holds.
//
// Because it spends the site key, it serves only the site's own pages:
// a request a browser marks as cross-site (Sec-Fetch-Site, or an Origin
// that is not this host) is refused with 403, a POST must be
// application/json (415 otherwise; a cross-site form or text/plain
// "simple request" cannot be), and each visitor (client address) is held
// to its own rate (429 GATEWAY_RATE_LIMITED with Retry-After) before the
// key's own limit at the gateway is touched.
func GatewayProxy(target *url.URL, siteKey string) http.Handler {
	cop := http.NewCrossOriginProtection()
	visitors := newVisitorLimiter(visitorBurst, visitorPerSecond)
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
		if err := cop.Check(r); err != nil || !sameSiteFetch(r) || !sameOrigin(r) {
			gatewayFail(w, http.StatusForbidden, perr.GatewayUnauthorized, "Only this site's own pages may use its assistant")
			return
		}
		if r.Method == http.MethodPost {
			if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
				gatewayFail(w, http.StatusUnsupportedMediaType, perr.GatewayInvalidJSON, "The body must be application/json")
				return
			}
		}
		if wait := visitors.take(clientAddr(r)); wait > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
			gatewayFail(w, http.StatusTooManyRequests, perr.GatewayRateLimited, "Too many requests from this address; retry later")
			return
		}
		// The body cap is the gateway's; this only keeps a runaway upload
		// from being streamed on for ever.
		r.Body = http.MaxBytesReader(w, r.Body, 8<<20)
		w.Header().Set("Cross-Origin-Resource-Policy", "same-origin")
		rp.ServeHTTP(w, r)
	})
}

// sameSiteFetch reports whether the browser, where it says, marks the
// request as the site's own (same-origin) or the person's (none: typed,
// a bookmark). cop.Check covers only unsafe methods; this covers a GET.
func sameSiteFetch(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return true
	}
	return false
}

// sameOrigin reports whether the request's Origin, when it has one, is
// this host (either scheme: the proxy may sit behind TLS termination).
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, r.Host)
}

func gatewayFail(w http.ResponseWriter, status int, code perr.Code, msg string) {
	_, body := perr.RenderGateway(perr.New(code, msg, nil))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// clientAddr is the visitor: the connection's address (a forwarded-for
// header is the client's to write, so it is not trusted).
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// visitorLimiter is a token bucket per visitor, bounded in size.
type visitorLimiter struct {
	mu    sync.Mutex
	burst int
	rate  rate.Limit
	m     map[string]*rate.Limiter
}

func newVisitorLimiter(burst int, perSecond float64) *visitorLimiter {
	return &visitorLimiter{burst: burst, rate: rate.Limit(perSecond), m: map[string]*rate.Limiter{}}
}

// take spends one token of key's bucket: 0, or how long until one is
// there.
func (v *visitorLimiter) take(key string) time.Duration {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := time.Now()
	l := v.m[key]
	if l == nil {
		if len(v.m) >= maxVisitors {
			for k, b := range v.m { // a full bucket is the same as none
				if b.TokensAt(now) >= float64(v.burst) {
					delete(v.m, k)
				}
			}
		}
		if len(v.m) >= maxVisitors {
			return time.Second // still full: refuse newcomers rather than grow
		}
		l = rate.NewLimiter(v.rate, v.burst)
		v.m[key] = l
	}
	r := l.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d
	}
	return 0
}

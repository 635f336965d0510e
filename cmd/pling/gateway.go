package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/gateway"
	"github.com/pling-go/pling/internal/tracing"
)

func init() {
	register(command{"gateway", "run the OpenAI-compatible model gateway (docs/gateway.md)", runGateway})
}

func runGateway(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := newFlags("gateway", stderr,
		"Usage: pling gateway [--addr HOST:PORT] --upstream URL [--models m1,m2] [--upstream-timeout 2m] [--site-keys FILE] [--authority URL] [--audience ORIGIN]… [--metrics-addr HOST:PORT] [--limits-store sqlite:PATH|postgres://…] [--sweep-every 1m] [--rate R] [--burst N]",
		"Runs the OpenAI-compatible model gateway (docs/gateway.md). The provider key comes from",
		"PLING_UPSTREAM_KEY or the file named by --upstream-key-file (or PLING_UPSTREAM_KEY_FILE), never from a flag.",
	)
	addr := fl.String("addr", "127.0.0.1:8091", "the address to listen on (port 0 picks a free port)")
	upstream := fl.String("upstream", "", "the provider's OpenAI-compatible base URL, e.g. https://api.example/v1")
	models := fl.String("models", "", "the models callers may use, comma-separated")
	timeout := fl.Duration("upstream-timeout", 2*time.Minute, "the longest wait for the upstream's answer, and between two chunks of a stream")
	siteKeys := fl.String("site-keys", "", "a file of site keys, one per line")
	auth := fl.String("authority", "", "the pling authority whose delegation tokens (scope gateway:*) are accepted")
	keyFile := fl.String("upstream-key-file", os.Getenv("PLING_UPSTREAM_KEY_FILE"), "a file holding the provider key")
	grace := fl.Duration("grace", 30*time.Second, "how long streams in flight may run on after a shutdown signal")
	metricsAddr := fl.String("metrics-addr", "", "serve GET /metrics on this admin address only, not on --addr (e.g. 127.0.0.1:9091)")
	maxBody := fl.Int64("max-body", 1<<20, "the largest request body, in bytes")
	limitsStore := fl.String("limits-store", "", "keep each caller's rate limit in this store (an authority's: sqlite:PATH or postgres://…), shared by every instance using it; default: this instance's memory")
	sweepEvery := fl.Duration("sweep-every", authority.DefaultSweepEvery, "with --limits-store: how often the buckets untouched for an hour are deleted from it")
	rate := fl.Float64("rate", gateway.DefaultRatePerSecond, "each caller's completions per second once the burst is spent (per instance without --limits-store)")
	burst := fl.Int("burst", gateway.DefaultBurst, "each caller's burst of completions (per instance without --limits-store)")
	var audiences []string
	fl.Func("audience", "a page origin whose tokens are accepted (repeatable; default http://127.0.0.1:8080)", func(v string) error {
		audiences = append(audiences, v)
		return nil
	})
	if exit, ok := parseNoArgs(fl, args, stderr); !ok {
		return exit
	}
	key := strings.TrimSpace(os.Getenv("PLING_UPSTREAM_KEY"))
	if *keyFile != "" {
		b, err := os.ReadFile(*keyFile)
		if err != nil {
			fmt.Fprintf(stderr, "pling gateway: --upstream-key-file: %v\n", err)
			return 2
		}
		key = strings.TrimSpace(string(b))
	}
	var sites []string
	if *siteKeys != "" {
		var err error
		if sites, err = readKeysFile(*siteKeys); err != nil {
			fmt.Fprintf(stderr, "pling gateway: --site-keys: %v\n", err)
			return 2
		}
	}
	if len(audiences) == 0 {
		audiences = []string{"http://127.0.0.1:8080"}
	}
	if *rate <= 0 || *burst <= 0 {
		fmt.Fprintln(stderr, "pling gateway: --rate and --burst must be more than 0")
		return 2
	}
	limitsSpec := authority.StoreSpec(*limitsStore)
	if *limitsStore != "" {
		if _, _, err := limitsSpec.Parse(); err != nil {
			fmt.Fprintf(stderr, "pling gateway: --limits-store: %v\n", err)
			return 2
		}
	}

	ctx, log, stop, ok := startServerCmd(ctx, "gateway", stderr)
	if !ok {
		return 1
	}
	defer stop()
	cfg := gateway.Config{Upstream: *upstream, UpstreamKey: key, Models: strings.Split(*models, ","),
		UpstreamTimeout: *timeout, SiteKeys: sites, MaxBodyBytes: *maxBody, Logger: log, SeparateMetrics: *metricsAddr != "",
		RatePerSecond: *rate, Burst: *burst}
	if *limitsStore != "" {
		st, err := authority.Open(ctx, limitsSpec)
		if err != nil {
			fmt.Fprintf(stderr, "pling gateway: --limits-store: %v\n", err)
			return 1
		}
		defer st.Close()
		cfg.Limiter = gatewayStoreLimiter(st, *burst, *rate)
		log.Info("rate limits shared through the store", "store", limitsSpec) // spec logs redacted
		// A store that only keeps limits has no authority's sweeper; an
		// authority's store is swept by both, which deletes nothing twice.
		go sweepBuckets(ctx, st, max(*sweepEvery, time.Second/10), log)
	}
	if *auth != "" {
		ta, err := gateway.NewTokenAuth(*auth, audiences, nil, log)
		if err != nil {
			fmt.Fprintf(stderr, "pling gateway: %v\n", err)
			return 2
		}
		if err := ta.Start(ctx); err != nil {
			log.Warn("authority keys not fetched yet; retrying", "err", err.Error())
		}
		defer ta.Close()
		cfg.Tokens = ta
	}
	srv := gateway.New(cfg)
	if why := srv.Misconfigured(); why != "" {
		fmt.Fprintf(stderr, "pling gateway: misconfigured (%s): completions answer GATEWAY_MISCONFIGURED\n", why)
	}
	if len(sites) == 0 && cfg.Tokens == nil {
		fmt.Fprintln(stderr, "pling gateway: no site keys and no --authority: every caller will be refused")
	}
	ln, stopAdmin, ok := listenServerCmd("gateway", *addr, *metricsAddr, srv.MetricsHandler(), stdout, stderr)
	if !ok {
		return 1
	}
	defer stopAdmin()
	// No WriteTimeout: a stream may outlast any fixed bound; each write
	// has its own deadline in the gateway instead.
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 32 << 10}
	fmt.Fprintf(stdout, "pling gateway: listening on http://%s (upstream %s)\n", ln.Addr(), *upstream)
	return serveUntilDone(ctx, hs, ln, *grace, "gateway", stderr)
}

// gatewayStoreLimiter is the gateway's per-caller bucket (its defaults,
// gateway.DefaultBurst and DefaultRatePerSecond) kept in st, under the prefix "gateway:"
// so that it shares the table with the authority's own limits.
// sweepBuckets deletes the limits store's full buckets every interval
// until ctx ends.
func sweepBuckets(ctx context.Context, st authority.MaintenanceStore, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := authority.SweepRateBuckets(ctx, st, time.Now()); err != nil && ctx.Err() == nil {
			log.Error("rate limit store sweep", "err", err.Error())
		}
	}
}

func gatewayStoreLimiter(st authority.RateStore, burst int, perSecond float64) *authority.StoreLimiter {
	return &authority.StoreLimiter{Store: st, Prefix: "gateway:", Burst: float64(burst), PerSecond: perSecond, Now: time.Now}
}

// serveUntilDone serves until ctx ends, then shuts down: requests in
// flight (streams too) may finish within grace, after which the rest are
// cut.
func serveUntilDone(ctx context.Context, hs *http.Server, ln net.Listener, grace time.Duration, name string, stderr io.Writer) int {
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		fmt.Fprintf(stderr, "pling %s: %v\n", name, err)
		return 1
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
		fmt.Fprintf(stderr, "pling %s: shutdown: %v\n", name, err)
		return 1
	}
	return 0
}

// The long-running server commands (authority, gateway) begin and listen
// alike; these helpers are that one way.

// startServerCmd begins a server command named name: the returned ctx
// ends on SIGINT or SIGTERM, the logger writes text to stderr, and
// OpenTelemetry is set up (traceparent continued and passed on; spans
// exported over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set;
// internal/tracing). stop undoes all of it. A failure is reported on
// stderr under the command's name, and ok is false.
func startServerCmd(ctx context.Context, name string, stderr io.Writer) (_ context.Context, log *slog.Logger, stop func(), ok bool) {
	ctx, stopSignals := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	log = slog.New(slog.NewTextHandler(stderr, nil))
	shutdownTracing, err := tracing.Setup(ctx, "pling-"+name)
	if err != nil {
		stopSignals()
		fmt.Fprintf(stderr, "pling %s: tracing: %v\n", name, err)
		return nil, nil, nil, false
	}
	return ctx, log, func() {
		shutdownTracing(context.Background())
		stopSignals()
	}, true
}

// listenServerCmd listens on addr and, when metricsAddr is set, serves
// metrics (GET /metrics) on that admin address. A failure is reported
// on stderr under the command's name, and ok is false; else stop ends
// the metrics server.
func listenServerCmd(name, addr, metricsAddr string, metrics http.Handler, stdout, stderr io.Writer) (ln net.Listener, stop func(), ok bool) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "pling %s: %v\n", name, err)
		return nil, nil, false
	}
	stop = func() {}
	if metricsAddr != "" {
		if stop, err = serveMetrics(metricsAddr, metrics, stdout); err != nil {
			ln.Close()
			fmt.Fprintf(stderr, "pling %s: --metrics-addr: %v\n", name, err)
			return nil, nil, false
		}
	}
	return ln, stop, true
}

// serveMetrics serves h (GET /metrics) on addr, the admin address, until
// the returned stop is called.
func serveMetrics(addr string, h http.Handler, stdout io.Writer) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	m := http.NewServeMux()
	m.Handle("GET /metrics", h)
	hs := &http.Server{Handler: m, ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 30 * time.Second}
	go hs.Serve(ln)
	fmt.Fprintf(stdout, "pling: metrics on http://%s/metrics\n", ln.Addr())
	return func() { hs.Close() }, nil
}

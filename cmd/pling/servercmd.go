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
	"syscall"

	"github.com/pling-go/pling/internal/tracing"
)

// The long-running server commands (authority, gateway) begin and listen
// alike; these helpers are that one way.

// readKeysFile reads a file of keys, one per line (readKeys).
func readKeysFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readKeys(f), nil
}

// startServerCmd begins a server command named name: the returned ctx
// ends on SIGINT or SIGTERM, the logger writes text to stderr, and
// OpenTelemetry is set up (traceparent continued and passed on; spans
// exported over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set;
// internal/tracing). stop undoes all of it.
func startServerCmd(ctx context.Context, name string, stderr io.Writer) (_ context.Context, log *slog.Logger, stop func(), err error) {
	ctx, stopSignals := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	log = slog.New(slog.NewTextHandler(stderr, nil))
	shutdownTracing, err := tracing.Setup(ctx, "pling-"+name)
	if err != nil {
		stopSignals()
		return nil, nil, nil, fmt.Errorf("tracing: %w", err)
	}
	return ctx, log, func() {
		shutdownTracing(context.Background())
		stopSignals()
	}, nil
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

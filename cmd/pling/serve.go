package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/pling-go/pling/internal/demosite"
	"github.com/pling-go/pling/internal/demosite/site"
)

func init() {
	register(command{"serve", "serve the demo site and the module over HTTP", runServe})
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := newFlags("serve", stderr,
		"Usage: pling serve [--addr HOST:PORT] [--dist DIR] [--dir DIR] [--authority URL|embedded] [--gateway URL]",
		"                   [--passkey-origin URL] [--passkey-approvals ORIGIN=PATTERNS]…",
		"Serves the demo site (/shop/, /orders/, /settings/) and the module under /pling/,",
		"precompressed, cross-origin isolated (COOP/COEP) so performance.now() is precise.",
		"With --dir, serves your own pages from DIR instead, with Pling beside them at /pling/.",
		"With --authority the pages follow the authority: they verify its session tokens, and "+demosite.ConsentPath,
		"and "+demosite.ApprovalPath+" lead to its consent and approval screens, which are the authority's, on its",
		"own origin. --authority embedded runs an authority in this process (in memory, on --authority-addr)",
		"issuing for this site; --passkey-origin and --passkey-approvals turn on its passkeys as they do",
		"pling authority's (an authority at a URL is configured where it runs).",
	)
	pages := fl.String("dir", "", "serve the pages in this directory (instead of the demo site), with Pling at /pling/")
	addr := fl.String("addr", "127.0.0.1:8080", "the address to listen on (port 0 picks a free port)")
	dist := fl.String("dist", "", "serve the module from this directory (make wasm builds dist/) instead of the copy embedded in the binary")
	gw := fl.String("gateway", "", "a pling gateway for the in-page assistant, proxied at /gateway/ with the site key from PLING_GATEWAY_SITE_KEY")
	quality := fl.Int("brotli", brotli.BestCompression, "brotli quality 0–11 for the module; files over 1 MiB start at 5 and are upgraded in the background")
	authFlag := fl.String("authority", "", "the delegation authority: its URL, or embedded to run one here")
	authAddr := fl.String("authority-addr", "127.0.0.1:8090", "where --authority embedded listens")
	passkeys := addPasskeyFlags(fl)
	if exit, ok := parseNoArgs(fl, args, stderr); !ok {
		return exit
	}
	if *quality < 0 || *quality > brotli.BestCompression {
		fmt.Fprintf(stderr, "pling serve: --brotli must be 0–11, not %d\n", *quality)
		return 2
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	module, source := site.Module(), "embedded"
	if *dist != "" {
		module, source = os.DirFS(*dist), *dist
		if _, err := fs.Stat(module, "pling.wasm"); err != nil {
			fmt.Fprintf(stderr, "pling serve: --dist %s has no pling.wasm: run make wasm\n", *dist)
			return 2
		}
	}
	if passkeys.set() && *authFlag != "embedded" {
		fmt.Fprintln(stderr, "pling serve: --passkey-origin and --passkey-approvals configure the embedded authority (--authority embedded); an authority at a URL takes them where it runs")
		return 2
	}
	if *pages != "" {
		if *authFlag != "" {
			fmt.Fprintln(stderr, "pling serve: --authority plays the demo site's backend; it does not combine with --dir")
			return 2
		}
		return serveDir(ctx, module, source, *pages, *addr, *quality, stdout, stderr)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "pling serve: %v\n", err)
		return 1
	}
	defer ln.Close()
	opts := serveOptions{brotli: *quality}
	if *authFlag != "" {
		auth, exit := startSiteAuthority(ctx, *authFlag, *authAddr, "http://"+ln.Addr().String(), passkeys.config(), stdout, stderr)
		if auth == nil {
			return exit
		}
		defer auth.close()
		opts.authority = auth.url
	}
	start := time.Now()
	srv, err := newServer(ctx, module, site.Demo(), opts)
	if err != nil {
		fmt.Fprintf(stderr, "pling serve: %v\n", err)
		return 1
	}
	if missing := srv.Missing(); len(missing) > 0 {
		fmt.Fprintf(stderr, "pling serve: the module is not built into this binary (missing %s).\n"+
			"  /pling/ answers 503 until you run make wasm and rebuild pling, or start with --dist dist.\n",
			strings.Join(missing, ", "))
	} else {
		fmt.Fprintf(stdout, "pling serve: module from %s, prepared in %v\n", source, time.Since(start).Round(time.Millisecond))
		for _, name := range demosite.ModuleFiles {
			fmt.Fprintf(stdout, "  %s\n", srv.Sizes(name))
		}
	}

	fmt.Fprintf(stdout, "pling serve: http://%s/ (shop/, orders/, settings/)\n", ln.Addr())
	if late := srv.Upgrading(); len(late) > 0 {
		go func() {
			<-srv.Upgraded()
			if ctx.Err() == nil {
				for _, name := range late {
					fmt.Fprintf(stdout, "pling serve: brotli quality %d ready: %s\n", *quality, srv.Sizes(name))
				}
			}
		}()
	}
	var handler http.Handler = srv
	if *gw != "" {
		target, err := url.Parse(*gw)
		if err != nil || (target.Scheme != "http" && target.Scheme != "https") {
			fmt.Fprintf(stderr, "pling serve: --gateway %q is not an http(s) URL\n", *gw)
			return 2
		}
		mux := http.NewServeMux()
		mux.Handle("/gateway/", demosite.GatewayProxy(target, os.Getenv("PLING_GATEWAY_SITE_KEY")))
		mux.Handle("/", srv)
		handler = mux
		fmt.Fprintf(stdout, "pling serve: the assistant talks to the gateway at %s\n", target.Redacted())
	}
	return serveUntil(ctx, ln, handler, stderr)
}

// serveDir runs pling serve --dir.
func serveDir(ctx context.Context, module fs.FS, source, dir, addr string, quality int, stdout, stderr io.Writer) int {
	h, ph, err := dirHandler(module, dir, quality)
	if err != nil {
		fmt.Fprintf(stderr, "pling serve: --dir: %v\n", err)
		return 2
	}
	if m := ph.Missing(); len(m) > 0 {
		fmt.Fprintf(stderr, "pling serve: the module (%s) lacks %s: run make wasm, or pass --dist dist\n", source, strings.Join(m, ", "))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "pling serve: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "pling serve: http://%s/ serves %s, Pling at /pling/ (module from %s)\n", ln.Addr(), dir, source)
	fmt.Fprintf(stdout, "  %s\n", pasteTag(ph.Integrity("pling.js")))
	return serveUntil(ctx, ln, h, stderr)
}

// pasteTag is the script tag pling serve --dir prints to paste into a
// page. It has no defer: a page's inline script right after it calls
// pling.… at once, and pling.js is small (the module loads lazily), so
// running it in order costs the page nothing (RATIONALE "Why does the
// tag pling serve prints have no defer?").
func pasteTag(integrity string) string {
	return fmt.Sprintf(`<script src="/pling/pling.js" integrity="%s" crossorigin="anonymous" data-expose="*"></script>`, integrity)
}

// serveUntil serves h on ln (newHTTPServer) until ctx ends, then shuts
// down gracefully, giving requests in flight five seconds; it returns the
// exit code.
func serveUntil(ctx context.Context, ln net.Listener, h http.Handler, stderr io.Writer) int {
	hs := newHTTPServer(h)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "pling serve: %v\n", err)
		return 1
	}
	return 0
}

// newHTTPServer is pling serve's HTTP server: every phase of a connection
// is bounded, so a client that opens connections and sends nothing, sends
// headers slowly, or reads slowly cannot hold them for ever. The write
// bound leaves room for the whole module (6 MB unencoded) on a slow link.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second, // GET and HEAD only: no bodies
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
}

type serveOptions struct {
	// brotli is the target brotli quality (0–11).
	brotli int
	// authority: see demosite.Options.
	authority string
}

// newServer builds the handler of pling serve (package demosite, where
// it lives so that the e2e browser tests run the same server in-process).
func newServer(ctx context.Context, module, demo fs.FS, opt serveOptions) (*demosite.Server, error) {
	return demosite.New(ctx, module, demo, demosite.Options{Brotli: opt.brotli, Authority: opt.authority})
}

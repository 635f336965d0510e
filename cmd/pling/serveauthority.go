package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/demosite"
)

// siteAuthority is what pling serve --authority sets up: the authority the
// pages follow, and for embedded the authority itself.
type siteAuthority struct {
	url   string
	close func()
}

// startSiteAuthority connects pling serve to an authority (a URL) or runs
// one (embedded) issuing for siteOrigin, with passkeys. nil means exit
// with the status.
// The screens a person decides on are the authority's, on its origin; the
// site only links them (demosite.ConsentPath, demosite.ApprovalPath), so
// pling serve holds no operator key.
func startSiteAuthority(ctx context.Context, which, embeddedAddr, siteOrigin string, passkeys authority.PasskeyConfig, stdout, stderr io.Writer) (*siteAuthority, int) {
	fail := func(code int, format string, a ...any) (*siteAuthority, int) {
		fmt.Fprintf(stderr, "pling serve: "+format+"\n", a...)
		return nil, code
	}
	sa := &siteAuthority{close: func() {}}
	var authURL string
	if which == "embedded" {
		ln, err := net.Listen("tcp", embeddedAddr)
		if err != nil {
			return fail(1, "embedded authority: %v", err)
		}
		authURL = "http://" + ln.Addr().String()
		if authURL == siteOrigin {
			ln.Close()
			return fail(2, "embedded authority: it must not share the site's origin")
		}
		st, err := authority.OpenSQLite(ctx, ":memory:")
		if err != nil {
			ln.Close()
			return fail(1, "embedded authority: %v", err)
		}
		srv, err := authority.NewServer(ctx, authority.Config{Store: st, Audiences: map[string][]string{siteOrigin: {"*"}},
			VerificationURI: authURL + authority.ConsentPath, Logger: slog.New(slog.NewTextHandler(stderr, nil)), Passkeys: passkeys})
		if err != nil {
			ln.Close()
			st.Close()
			return fail(1, "embedded authority: %v", err)
		}
		hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second,
			WriteTimeout: 45 * time.Second, IdleTimeout: 2 * time.Minute}
		go func() { _ = hs.Serve(ln) }()
		sa.close = func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = hs.Shutdown(sctx)
			st.Close()
		}
		fmt.Fprintf(stdout, "pling serve: embedded authority on %s, issuing for %s (pling delegate URL --authority %s)\n", authURL, siteOrigin, authURL)
	} else {
		origin, err := pageOrigin(which)
		if err != nil {
			return fail(2, "--authority: want a URL or embedded: %v", err)
		}
		if origin == siteOrigin {
			// Its screens would be the site's: any script of the
			// site's pages could read and post them.
			return fail(2, "--authority %s is the site's own origin: serve the authority on another origin", which)
		}
		authURL = which
	}
	// The pages fetch the keys themselves (data-authority); this checks
	// once that the URL is an authority, waiting for one still starting.
	if _, err := demosite.FetchKeys(ctx, nil, authURL, 10*time.Second); err != nil {
		sa.close()
		return fail(1, "%v", err)
	}
	sa.url = authURL
	fmt.Fprintf(stdout, "pling serve: consent screen at %s%s (the authority's; %s%s leads there)\n", authURL, authority.ConsentPath, siteOrigin, demosite.ConsentPath)
	return sa, 0
}

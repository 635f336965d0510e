package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/demosite"
)

// operatorKeyEnv holds the operator key pling serve's consent screen
// decides with (--authority URL).
const operatorKeyEnv = "PLING_OPERATOR_KEY"

// siteAuthority is what pling serve --authority sets up: the authority the
// pages follow, the consent screen, and for embedded the authority itself.
type siteAuthority struct {
	url     string
	consent *demosite.Consent
	close   func()
}

// startSiteAuthority connects pling serve to an authority (a URL) or runs
// one (embedded) issuing for siteOrigin. nil means exit with the status.
func startSiteAuthority(ctx context.Context, which, embeddedAddr, keyFile, siteOrigin string, stdout, stderr io.Writer) (*siteAuthority, int) {
	fail := func(code int, format string, a ...any) (*siteAuthority, int) {
		fmt.Fprintf(stderr, "pling serve: "+format+"\n", a...)
		return nil, code
	}
	sa := &siteAuthority{close: func() {}}
	var authURL, opKey string
	if which == "embedded" {
		if keyFile != "" {
			return fail(2, "--operator-key-file is for --authority URL: the embedded authority makes its own key")
		}
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		opKey = base64.RawURLEncoding.EncodeToString(b) // lives in this process only
		st, err := authority.OpenSQLite(ctx, ":memory:")
		if err != nil {
			return fail(1, "embedded authority: %v", err)
		}
		srv, err := authority.NewServer(ctx, authority.Config{Store: st, Audiences: map[string][]string{siteOrigin: {"*"}},
			OperatorKeys: []string{opKey}, VerificationURI: siteOrigin + demosite.ConsentPath,
			Logger: slog.New(slog.NewTextHandler(stderr, nil))})
		if err != nil {
			st.Close()
			return fail(1, "embedded authority: %v", err)
		}
		ln, err := net.Listen("tcp", embeddedAddr)
		if err != nil {
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
		authURL = "http://" + ln.Addr().String()
		fmt.Fprintf(stdout, "pling serve: embedded authority on %s, issuing for %s (pling delegate URL --authority %s)\n", authURL, siteOrigin, authURL)
	} else {
		if _, err := pageOrigin(which); err != nil {
			return fail(2, "--authority: want a URL or embedded: %v", err)
		}
		authURL = which
		var err error
		if opKey, err = operatorKey(keyFile); err != nil {
			return fail(2, "%v", err)
		}
	}
	// The pages fetch the keys themselves (data-authority); this checks
	// once that the URL is an authority, waiting for one still starting.
	if _, err := demosite.FetchKeys(ctx, nil, authURL, 10*time.Second); err != nil {
		sa.close()
		return fail(1, "%v", err)
	}
	sa.url = authURL
	if opKey == "" {
		fmt.Fprintf(stderr, "pling serve: no operator key ($%s or --operator-key-file): pages verify the authority's tokens, but %s is off\n", operatorKeyEnv, demosite.ConsentPath)
	} else {
		sa.consent = &demosite.Consent{AuthorityURL: authURL, OperatorKey: opKey, Logger: slog.New(slog.NewTextHandler(stderr, nil))}
		fmt.Fprintf(stdout, "pling serve: consent screen at %s%s\n", siteOrigin, demosite.ConsentPath)
	}
	return sa, 0
}

// operatorKey reads the operator key from the file (its first non-empty
// line), else $PLING_OPERATOR_KEY; "" when neither is set.
func operatorKey(file string) (string, error) {
	if file == "" {
		return strings.TrimSpace(os.Getenv(operatorKeyEnv)), nil
	}
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("--operator-key-file: %v", err)
	}
	defer f.Close()
	keys := readKeys(io.LimitReader(f, 64<<10))
	if len(keys) == 0 {
		return "", errors.New("--operator-key-file: no key in " + file)
	}
	return keys[0], nil
}

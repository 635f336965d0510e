package demosite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pling-go/pling/authority"
)

// The paths of the site that lead a person to the authority's screens
// (authority.ConsentPath and authority.ApprovalPath, on the authority's
// origin): the demo pages link ApprovalPath?id=… when the authority holds
// an approval, and the authority's verification URI may be ConsentPath.
const (
	ConsentPath  = "/pling/consent"
	ApprovalPath = "/pling/approve"
)

// screens maps each to the authority's screen it leads to.
var screens = map[string]string{ConsentPath: authority.ConsentPath, ApprovalPath: authority.ApprovalPath}

// moduleTag is how every demo page starts its pling.js script tag; with
// Options.Authority the data-authority attribute is added right after it.
var moduleTag = []byte(`<script src="/pling/pling.js"`)

// authorityOrigin checks that u is an http(s) base URL with nothing but a
// host (and an optional trailing slash), and returns its origin for the
// pages' CSP connect-src.
func authorityOrigin(u string) (string, error) {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.User != nil ||
		(p.Path != "" && p.Path != "/") || p.RawQuery != "" || p.Fragment != "" || strings.ContainsAny(u, " '\";<>") {
		return "", fmt.Errorf("authority %q: want an http(s) base URL such as https://auth.example", u)
	}
	return p.Scheme + "://" + p.Host, nil
}

// FetchKeys reads the authority's published signing keys (GET /v1/keys),
// retrying for up to wait while the authority is not up yet (pling
// authority and pling serve started together). pling serve calls it once
// at start to check that the URL is an authority; the pages fetch the keys
// themselves (data-authority).
func FetchKeys(ctx context.Context, c *http.Client, authorityURL string, wait time.Duration) (map[string]string, error) {
	if c == nil {
		c = &http.Client{Timeout: 5 * time.Second}
	}
	deadline := time.Now().Add(wait)
	for {
		keys, err := fetchKeys(ctx, c, strings.TrimRight(authorityURL, "/")+"/v1/keys")
		if err == nil || time.Now().After(deadline) {
			return keys, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func fetchKeys(ctx context.Context, c *http.Client, u string) (map[string]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	res, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the authority's keys: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the authority's keys: HTTP %d", res.StatusCode)
	}
	var b struct {
		Keys []struct {
			Kid       string `json:"kid"`
			PublicKey string `json:"publicKey"`
		} `json:"keys"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&b); err != nil {
		return nil, fmt.Errorf("the authority's keys: %w", err)
	}
	out := map[string]string{}
	for _, k := range b.Keys {
		out[k.Kid] = k.PublicKey
	}
	if len(out) == 0 {
		return nil, errors.New("the authority publishes no keys")
	}
	return out, nil
}

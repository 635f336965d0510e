package siteserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"strings"
	"time"
)

// keysMeta is the <meta name="pling-keys"> element carrying keys as JSON
// (nil when there are none). Each key is checked to be an Ed25519 public
// key, so that what the page reads is what the authority published.
func keysMeta(keys map[string]string) ([]byte, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	for kid, k := range keys {
		b, err := base64.RawURLEncoding.DecodeString(k)
		if err != nil || len(b) != 32 || kid == "" {
			return nil, fmt.Errorf("session key %q is not a base64url Ed25519 public key", kid)
		}
	}
	j, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	return []byte(`<meta name="pling-keys" content="` + html.EscapeString(string(j)) + `">` + "\n"), nil
}

// FetchKeys reads the authority's published signing keys (GET /v1/keys)
// as Options.Keys wants them, retrying for up to wait while the authority
// is not up yet (pling authority and pling serve started together).
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

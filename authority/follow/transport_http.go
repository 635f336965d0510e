//go:build !js

package follow

import (
	"bytes"
	"context"
	"io"
	"net/http"
)

// HTTPTransport is the Transport over net/http (the default off js/wasm).
type HTTPTransport struct {
	Client *http.Client // nil: http.DefaultClient
}

func defaultTransport() Transport { return HTTPTransport{} }

// Do implements Transport.
func (t HTTPTransport) Do(ctx context.Context, method, url, bearer string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c := t.Client
	if c == nil {
		c = http.DefaultClient
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, MaxBodyBytes))
	return res.StatusCode, b, err
}

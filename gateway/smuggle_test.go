package gateway_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3/option"
	"github.com/pling-go/pling/gateway"
)

// TestModelSmuggling: the body is forwarded as it came, so the model the
// gateway allows must be the only one any provider can read. A provider
// written in Go (encoding/json) matches keys case-insensitively and keeps
// the last, so {"model":"allowed","Model":"expensive"} ran "expensive"
// there while the gateway checked "allowed". Top-level keys that are equal
// but for case are refused as INVALID_JSON, like a key given twice.
func TestModelSmuggling(t *testing.T) {
	e := start(t, answer("ok"), func(c *gateway.Config) {})
	for _, tc := range []struct{ name, body string }{
		{"Model beside model", `{"model":"` + model + `","Model":"gpt-expensive","messages":[]}`},
		{"MODEL before model", `{"MODEL":"gpt-expensive","model":"` + model + `","messages":[]}`},
		{"escaped capital", `{"model":"` + model + `","\u004dodel":"gpt-expensive","messages":[]}`},
		{"Stream beside stream", `{"model":"` + model + `","stream":false,"Stream":true,"messages":[]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.client(siteKey).Chat.Completions.New(context.Background(), say("hi"),
				option.WithRequestBody("application/json", []byte(tc.body)))
			if err == nil {
				t.Fatalf("accepted and forwarded: upstream got %q", e.up.Last().Model)
			}
			if diff := cmp.Diff(apiError{400, "INVALID_JSON", "invalid_request_error", ""}, asAPIError(t, err)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

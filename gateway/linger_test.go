package gateway_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pling-go/pling/internal/testing/rawhttp"
)

// TestPayloadTooLargeLingers: a 40 MB body sent whole before the answer
// is read gets the 413 PAYLOAD_TOO_LARGE, not a connection reset: the
// gateway reads and drops the rest of the body (bounded) before it closes.
func TestPayloadTooLargeLingers(t *testing.T) {
	e := start(t, answer("hi"), nil)
	addr := strings.TrimPrefix(e.gw.URL, "http://")
	st, err := rawhttp.SendWholeThenRead(t, addr, "/v1/chat/completions", "Authorization: Bearer "+siteKey+"\r\n", 40<<20)
	if err != nil || st != http.StatusRequestEntityTooLarge {
		t.Fatalf("got %d, %v; want 413", st, err)
	}
}

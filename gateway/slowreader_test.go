package gateway_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pling-go/pling/gateway"
	"github.com/pling-go/pling/internal/testing/scripted"
)

// TestSlowReaderIsNotUpstreamTimeout: the upstream inactivity timer
// counts the upstream's silence only. A healthy upstream streams ~13 MB
// without a gap to a caller that reads nothing for three upstream
// timeouts (the gateway blocks writing): the caller then gets the whole
// stream, not an UPSTREAM_TIMEOUT cut.
func TestSlowReaderIsNotUpstreamTimeout(t *testing.T) {
	const timeout = time.Second
	piece := strings.Repeat("x", 32<<10)
	e := start(t, func(scripted.Request) scripted.Reply {
		return scripted.Reply{Piece: func(int) string { return piece }, Count: 400}
	}, func(c *gateway.Config) { c.UpstreamTimeout = timeout; c.WriteIdleTimeout = 30 * time.Second })
	addr := strings.TrimPrefix(e.gw.URL, "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	body := `{"model":"` + model + `","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		addr, siteKey, len(body), body)
	time.Sleep(3 * timeout) // read nothing: the gateway's writes block
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	got, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || strings.Contains(string(got), "UPSTREAM_TIMEOUT") || !strings.HasSuffix(string(got), "data: [DONE]\n\n") {
		tail := string(got[max(0, len(got)-300):])
		t.Fatalf("status %d, %d bytes, ending %q; want the whole stream", res.StatusCode, len(got), tail)
	}
}

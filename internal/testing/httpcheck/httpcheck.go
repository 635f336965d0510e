// Package httpcheck is test support for the servers' HTTP surfaces: a
// GET read whole, and the check of a server whose metrics are on a
// separate admin address, which the authority's and the gateway's tests
// share; a request whose answer is seen as it came over the wire, and the
// content codings a server of precompressed files answers in, which
// plinghttp's and the demo site's tests share. Product code must
// not import it (e2e's TestTestSupport checks that).
package httpcheck

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Get GETs url with the default client and returns the status and the
// body; a transport error ends the test.
func Get(t testing.TB, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return Do(t, http.DefaultClient, req)
}

// Do sends req with c and returns the status and the body; a transport
// error ends the test.
func Do(t testing.TB, c *http.Client, req *http.Request) (int, string) {
	t.Helper()
	res, b := do(t, c, req)
	return res.StatusCode, string(b)
}

// do sends req with c and reads the answer's body whole; a transport
// error, on the request or the body, ends the test.
func do(t testing.TB, c *http.Client, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

// OnWire sends a request (method, url, with the headers in header) and
// returns the answer and its body as they came over the wire: the
// client asks for no content coding and decodes none, and follows no
// redirect, so a test sees what the server chose. A transport error ends
// the test.
func OnWire(t testing.TB, method, url string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return do(t, &http.Client{
		Transport:     &http.Transport{DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, req)
}

// SeparateMetrics checks a server run with SeparateMetrics: its public
// address (publicURL) does not answer /metrics, and its admin handler
// serves the Go runtime's and the process's metrics and each of names.
func SeparateMetrics(t testing.TB, publicURL string, admin http.Handler, names ...string) {
	t.Helper()
	code, _ := Get(t, publicURL+"/metrics")
	got := map[string]bool{"public /metrics answers": code == 200}
	as := httptest.NewServer(admin)
	defer as.Close()
	_, body := Get(t, as.URL)
	want := map[string]bool{"public /metrics answers": false}
	for _, name := range append([]string{"go_goroutines", "process_resident_memory_bytes"}, names...) {
		got[name] = strings.Contains(body, name)
		want[name] = true
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}
